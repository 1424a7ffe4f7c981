"""A secret pushed with --no-verify is named when it arrives: `git memex pull`, and the
post-merge and post-checkout hooks git runs for `git pull --ff-only` and a checkout. Real
clones of a real bare remote, real hooks installed by `git memex init`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git, run_cli, two_clones

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a fake GitHub token of the real shape


@pytest.fixture
def two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(mine, theirs): two clones of one remote, both set up by `git memex init`."""
    mine, theirs = two_clones(tmp_path)
    monkeypatch.chdir(mine)
    return mine, theirs


def push_a_secret(theirs: Path) -> str:
    r = run_cli("add", "the deploy bot logs in to GitHub", "--json", cwd=theirs)
    assert r.code == 0, r.err
    mid = r.json()["id"]
    assert run_cli("submit", mid, cwd=theirs).code == 0
    path = theirs / ".ai" / "open-memex" / f"{mid}.md"
    path.write_text(path.read_text("utf-8").replace("logs in to GitHub", f"logs in with {TOKEN}"), "utf-8")
    git("add", "-A", cwd=theirs)
    git("commit", "-q", "--no-verify", "-m", "the bot's token", cwd=theirs)
    git("push", "-q", "origin", "main", cwd=theirs)
    return mid


def test_memex_pull_names_an_incoming_secret_and_exits_3(two: tuple[Path, Path]) -> None:
    mine, theirs = two
    mid = push_a_secret(theirs)
    r = run_cli("pull", cwd=mine)
    assert r.code == 3, (r.code, r.err)
    assert f".ai/open-memex/{mid}.md" in r.err and "github" in r.err.lower()
    assert TOKEN not in r.err + r.out and TOKEN[4:20] not in r.err + r.out
    assert (mine / ".ai" / "open-memex" / f"{mid}.md").exists()  # the fast-forward is done


def test_git_pull_ff_only_reports_an_incoming_secret_through_the_post_merge_hook(two: tuple[Path, Path]) -> None:
    mine, theirs = two
    mid = push_a_secret(theirs)
    p = git("pull", "-q", "--ff-only", cwd=mine)
    assert f".ai/open-memex/{mid}.md" in p.stderr and "the merge brought" in p.stderr
    assert TOKEN not in p.stderr + p.stdout


def test_a_checkout_reports_an_incoming_secret_through_the_post_checkout_hook(two: tuple[Path, Path]) -> None:
    mine, theirs = two
    mid = push_a_secret(theirs)
    git("fetch", "-q", "origin", cwd=mine)
    p = git("checkout", "-q", "-b", "review", "origin/main", cwd=mine)
    assert f".ai/open-memex/{mid}.md" in p.stderr and "the checkout brought" in p.stderr
    assert TOKEN not in p.stderr + p.stdout


POISON = [("revision", "9" * 5000, "an integer of 5000 digits"), ("title", "!!float x", "float"),
          ("tags", "!!int zz", "int")]


def push_poison(theirs: Path) -> list[str]:
    """Issue 20.10: three memory files, each with one value no YAML constructor builds, pushed
    by a teammate who skipped the hooks."""
    from git_memex.core.model import new_id

    rels = []
    for key, value, _ in POISON:
        mid = new_id()
        fm = {"id": mid, "schema_version": "2", "revision": "1", "scope": "project", "visibility": "internal",
              "type": "fact", "role": "knowledge", "importance": "normal", "status": "active",
              "review_state": "published", "source": "cli", "created_at": "'2026-01-01T00:00:00Z'",
              "updated_at": "'2026-01-01T00:00:00Z'", "tags": "[a]", key: value}
        rel = f".ai/open-memex/{mid}.md"
        (theirs / rel).write_text("---\n" + "".join(f"{k}: {v}\n" for k, v in fm.items())
                                  + f"---\n\npoisoned by {key}\n", encoding="utf-8")
        rels.append(rel)
    git("add", "-A", cwd=theirs)
    git("commit", "-q", "--no-verify", "-m", "poisoned memories", cwd=theirs)
    git("push", "-q", "origin", "main", cwd=theirs)
    return rels


def _names_each_with_its_reason(err: str, rels: list[str]) -> None:
    assert "internal error" not in err and "Traceback" not in err, err
    lines = err.splitlines()
    for rel, (_, _, why) in zip(rels, POISON, strict=True):
        assert any(rel in line and why in line for line in lines), (rel, err)
    assert "set_int_max_str_digits" not in err  # Python's advice to a programmer, not to this user
    assert "left out" in err and "git rm" in err and "git memex doctor" in err


def test_a_pulled_poisoned_value_is_named_with_its_reason_and_breaks_nothing(two: tuple[Path, Path]) -> None:
    mine, theirs = two
    assert run_cli("add", "the deploy is blue green", cwd=mine).code == 0
    rels = push_poison(theirs)
    pull = git("pull", "--ff-only", "-q", cwd=mine)  # the post-merge hook `init` installed
    _names_each_with_its_reason(pull.stderr, rels)
    for args in (("list",), ("search", "blue green"), ("context",), ("reindex",), ("reindex", "--full"),
                 ("add", "--scope", "personal", "mine still saves"), ("doctor",)):
        r = run_cli(*args, cwd=mine)
        assert r.code == (1 if args == ("doctor",) else 0), (args, r.code, r.err)
        assert "internal error" not in r.err and "Traceback" not in r.err, (args, r.err)
    assert "blue green" in run_cli("search", "blue green", cwd=mine).out
    full = run_cli("reindex", "--full", cwd=mine).out
    assert all(rel.rsplit("/", 1)[1] in full for rel in rels) and "quarantined" in full
    doctor = run_cli("doctor", cwd=mine).out
    assert all(rel.rsplit("/", 1)[1] in doctor for rel in rels)
    # a checkout that brings them again (post-checkout) says the same
    git("checkout", "-q", "HEAD~1", cwd=mine)
    back = git("checkout", "-q", "main", cwd=mine)
    _names_each_with_its_reason(back.stderr, rels)


def test_memex_pull_names_a_poisoned_file_with_its_reason(two: tuple[Path, Path]) -> None:
    mine, theirs = two
    rels = push_poison(theirs)
    r = run_cli("pull", cwd=mine)
    assert r.code == 0, (r.code, r.err)
    _names_each_with_its_reason(r.err, rels)
    assert [u["path"] for u in run_cli("pull", "--json", cwd=mine).json().get("unreadable", [])] == []  # up to date


@pytest.mark.slow  # ~7 s: two clones, a push, a pull through the hooks, every output
def test_a_secret_pushed_with_no_verify_stays_masked_everywhere_and_doctor_and_audit_say_how_to_remove_it(
        two: tuple[Path, Path]) -> None:
    """Issue 31, the attack's fourth finding: a teammate commits a token with `git commit --no-verify`
    and pushes; a plain `git pull` in another clone brings it. git-memex cannot rewrite a commit: the
    file in the work tree holds the token as committed. What it can do, it does: the index, every
    output and every agent surface mask it, and `doctor` and `audit` name the file with the command
    that removes it from history (never run for you) and say to rotate the secret."""
    from mcp_client import call
    from mcp_client import text as tool_text

    mine, theirs = two
    mid = push_a_secret(theirs)
    rel = f".ai/open-memex/{mid}.md"
    pull = git("pull", "-q", "--ff-only", cwd=mine)  # the post-merge hook `init` installed names it
    assert rel in pull.stderr and "rotate the secret" in pull.stderr and "git memex doctor" in pull.stderr
    assert TOKEN in (mine / rel).read_text("utf-8")  # the work tree has what was committed: said, not hidden

    def clean(out: str, where: str) -> None:
        assert TOKEN not in out and TOKEN[4:20] not in out and TOKEN[-12:] not in out, where

    shown = {
        "list": run_cli("list", "--json", cwd=mine),
        "search": run_cli("search", "deploy bot GitHub", "--json", cwd=mine),
        "show": run_cli("show", mid, "--json", cwd=mine),
        "context": run_cli("context", "--json", "--query", "deploy bot", cwd=mine),
        "hook": run_cli("context", "--hook", "claude", input="{}", cwd=mine),
        "inventory": run_cli("inventory", "--format", "json", cwd=mine),
        "export": run_cli("export", "--scope", "project", "--all", cwd=mine),
    }
    for where, r in shown.items():
        assert r.code == 0, (where, r.err)
        clean(r.out + r.err, where)
    assert mid in shown["search"].out and mid in shown["list"].out and "deploy bot" in shown["context"].out
    for tool, args in (("memory_search", {"query": "deploy bot GitHub"}), ("memory_get", {"id": mid}),
                       ("memory_list", {})):
        res = call(tool, args, cwd=mine)
        assert not res.is_error, tool_text(res)
        said = tool_text(res) + json.dumps(res.structured_content)
        clean(said, tool)
        assert mid in said, tool
    # doctor and audit name the file, say to rotate the secret, and give the history command
    doctor = run_cli("doctor", cwd=mine)
    assert doctor.code != 0
    clean(doctor.out + doctor.err, "doctor")
    line = next(x for x in doctor.out.splitlines() if rel in x)
    assert "rotate the secret" in line and f"git filter-repo --invert-paths --path {rel}" in line
    audit = run_cli("audit", cwd=mine)
    assert audit.code == 0
    clean(audit.out, "audit")
    line = next(x for x in audit.out.splitlines() if rel in x)
    assert "secret in the repository" in line and f"git filter-repo --invert-paths --path {rel}" in line
    (found, *_) = run_cli("audit", "--json", cwd=mine).json()["secrets"]
    assert found["path"] == rel and found["commits"] >= 1 and "rotate the secret" in found["fix"]
    assert "github" in found["rule"].lower()


ID_TOKEN = "ghp_" + "Zq7Xk2Lm9Pw4Rt6Yu8Io1As3Df5Gh7Jk9Lz0Pq"[:36]  # made up, the shape of a GitHub token


@pytest.mark.slow  # ~8 s: two clones, a push, a pull through the hooks, every output
def test_a_token_used_as_a_memory_id_is_quarantined_and_never_shown(two: tuple[Path, Path]) -> None:
    """The misc attack: a teammate commits `.ai/open-memex/ghp_….md` with `id: ghp_…` (the id rule
    `[0-9A-Za-z][0-9A-Za-z_-]{0,63}` lets a token through) using --no-verify, and pushes. The
    post-merge hook lines, search, show, context, inventory, audit, doctor, scan, sync-status and
    the agent's tools printed the id in full. The reader now quarantines a secret-shaped id (the
    index never holds it), every output names the file masked with the reason, and the
    pre-commit hook refuses such a file."""
    from mcp_client import call
    from mcp_client import text as tool_text

    mine, theirs = two
    rel = f".ai/open-memex/{ID_TOKEN}.md"
    (theirs / rel).write_text(
        f"---\nid: {ID_TOKEN}\nschema_version: 2\nrevision: 1\nscope: project\nvisibility: internal\ntype: fact\n"
        "role: knowledge\nimportance: normal\nstatus: active\nreview_state: approved\nsource: cli\n"
        "confidence: medium\ncreated_by: local:mallory@example.com\ncreated_at: '2026-12-01T00:00:00Z'\n"
        "updated_at: '2026-12-01T00:00:00Z'\n---\n\nA memory whose id is a token; deploy notes.\n", "utf-8")
    git("add", "-A", cwd=theirs)
    git("commit", "-q", "--no-verify", "-m", "deploy notes", cwd=theirs)
    git("push", "-q", "origin", "main", cwd=theirs)

    def clean(out: str, where: str) -> None:
        assert ID_TOKEN[4:] not in out and ID_TOKEN[4:20] not in out and ID_TOKEN[-12:] not in out, (where, out)

    pull = git("pull", "--ff-only", cwd=mine)  # the post-merge hook `init` installed names it, masked
    hook_lines = "\n".join(x for x in pull.stderr.splitlines() if "git-memex" in x)
    clean(hook_lines, "post-merge hook")
    assert ".ai/open-memex/ghp_xxxx" in hook_lines and "looks like a secret" in hook_lines, pull.stderr
    runs = {
        "pull --json": run_cli("pull", "--json", cwd=mine),
        "list": run_cli("list", "--json", "--include", "all", cwd=mine),
        "search": run_cli("search", "deploy notes", "--json", cwd=mine),
        "show": run_cli("show", ID_TOKEN, cwd=mine),
        "show --json": run_cli("show", ID_TOKEN, "--json", cwd=mine),
        "context": run_cli("context", "--json", "--query", "deploy notes", cwd=mine),
        "inventory json": run_cli("inventory", "--format", "json", cwd=mine),
        "inventory html": run_cli("inventory", "--format", "html", cwd=mine),
        "audit": run_cli("audit", cwd=mine),
        "audit --json": run_cli("audit", "--json", cwd=mine),
        "doctor": run_cli("doctor", cwd=mine),
        "doctor --json": run_cli("doctor", "--json", cwd=mine),
        "scan": run_cli("scan", cwd=mine),
        "scan --json": run_cli("scan", "--json", cwd=mine),
        "sync-status": run_cli("sync-status", "--json", cwd=mine),
        "reindex": run_cli("reindex", "--full", "--json", cwd=mine),
    }
    for where, r in runs.items():
        clean(r.out + r.err, where)
    assert runs["search"].json()["hits"] == []  # quarantined: the index never holds it
    assert runs["show"].code != 0 and "looks like a secret" in runs["show"].err
    doctor = runs["doctor"].out
    assert "ghp_xxxx" in doctor and "looks like a secret" in doctor
    assert "--path-glob '.ai/open-memex/ghp_*.md'" in doctor  # the history command still names the file
    for tool, args in (("memory_search", {"query": "deploy notes"}), ("memory_get", {"id": ID_TOKEN}),
                       ("memory_list", {}), ("memory_status", {})):
        res = call(tool, args, cwd=mine)
        clean(tool_text(res) + json.dumps(res.structured_content), tool)
    # the pre-commit hook refuses a file with a secret-shaped id, and names it masked
    other = ".ai/open-memex/sk_live_" + "Rq8Tn2Wm5Xv9Kb3Lp7Yc1Hd6" + ".md"
    (mine / other).write_text((mine / rel).read_text("utf-8").replace(f"id: {ID_TOKEN}", f"id: {Path(other).stem}"))
    git("add", other, cwd=mine)
    refused = git("commit", "-m", "more notes", cwd=mine, check=False)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "looks like a secret" in said
    clean(said, "pre-commit")
    assert "Rq8Tn2Wm5Xv9Kb3Lp7Yc1Hd6" not in said
