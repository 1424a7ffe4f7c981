"""A rule approved elsewhere says who approved it, and where (issue 33, item 7b; docs/agents.md).

A rule served from a remote server was approved by the server's reviewer, not by a person of this
project: the session block names the reviewer (the name of their token, which the server wrote
into `approved_by`) and the remote (its name and URL). The real remote server in its own process,
the real client commands.
"""

from __future__ import annotations

import json
from pathlib import Path

from client_support import remote_server, run_cli
from conftest import git


def test_a_remote_rule_names_its_reviewer_and_the_server(ready: Path, tmp_path: Path) -> None:
    with remote_server(tmp_path) as srv:
        assert run_cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["proposer"])).code == 0
        mid = json.loads(run_cli("add", "Always run the migration linter before merging.", "--role", "instruction",
                                 "--json").out)["id"]
        assert run_cli("propose", mid, "--to", "remote", "team").code == 0
        run_cli("forget", mid)  # only the remote copy is left
        srv.approve(mid)
        assert run_cli("remote", "pull", "team").code == 0
        ours = json.loads(run_cli("add", "Always run the unit tests before merging.", "--role", "instruction",
                                  "--json").out)["id"]
        assert run_cli("submit", ours).code == 0 and run_cli("instruction", "approve", ours).code == 0
        git("commit", "-qam", "approve our rule", cwd=ready)
        block = json.loads(run_cli("context", "--query", "migration linter", "--json").out)
    [rule] = [i for i in block["instructions"] if i["id"] == mid]
    where = f"approved by reviewer1, a reviewer of remote team ({srv.url})"
    assert rule["approved"] == where
    line = next(ln for ln in block["text"].splitlines() if "migration linter" in ln)
    assert line.startswith("- [remote:team/") and line.endswith(f"; {where})"), line
    assert "unless a rule names who approved it and where" in block["text"]
    # a rule of this project says nothing more: the heading's note speaks for it
    [own] = [i for i in block["instructions"] if i["id"] == ours]
    assert "approved" not in own and "approved by" not in own["line"]
    hook = run_cli("context", "--hook", "claude")
    assert hook.code == 0 and where in hook.out
