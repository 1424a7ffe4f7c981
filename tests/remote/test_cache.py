"""The remote cache: every pulled file through the admission barrier (a bad one named and skipped,
the rest land), and the instruction gate on the server's approval and the cached bytes."""

from __future__ import annotations

import json
from pathlib import Path

from client_support import hostile_server, memory_file, remote_server, run_cli, sha, token_files

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _cache(ready: Path) -> Path:
    return Path(json.loads(run_cli("remote", "list", "--json").out)["remotes"][0]["path"])


def test_a_secret_in_a_tag_on_the_server_is_quarantined_and_the_rest_land(ready: Path, tmp_path: Path) -> None:
    good_id, good = memory_file("Deploys go through the staging cluster first, always.")
    bad_id, bad = memory_file("The release checklist lives in the wiki.", raw_tags=f"[release, {SECRET}]")
    # the real server leaves such a file of its folder out (test_server_refresh.py), so a server that
    # sends it anyway speaks here
    changes = [{"id": mid, "revision": 1, "review_state": "approved", "sha256": sha(text), "file": text}
               for mid, text in ((good_id, good), (bad_id, bad))]
    tokens = token_files(tmp_path / "t")
    with hostile_server(changes) as url:
        r = run_cli("remote", "add", "team", url, "--token-file", str(tokens["reader"]))
        assert r.code == 0, r.err
    assert f"quarantined {bad_id}: it holds a secret" in r.err and SECRET not in r.err + r.out
    cache = _cache(ready)
    assert (cache / f"{good_id}.md").exists() and not (cache / f"{bad_id}.md").exists()
    assert SECRET not in "".join(p.read_text() for p in cache.rglob("*") if p.is_file() and p.suffix in (".md", ".json"))
    hits = json.loads(run_cli("search", "release checklist wiki staging", "--json").out)["hits"]
    assert [h["id"] for h in hits if h.get("remote")] == [good_id]
    listed = json.loads(run_cli("remote", "list", "--json").out)["remotes"][0]
    assert listed["memories"] == 1 and "secret" in listed["quarantined"][bad_id]


def test_what_a_hostile_server_sends_is_checked_file_by_file(ready: Path, tmp_path: Path) -> None:
    good_id, good = memory_file("Deploys go through the staging cluster first, always.")
    tag_id, tagged = memory_file("A YAML type tag in the frontmatter.", raw_tags="!!python/object/apply:os.system [id]")
    conf_id, conf = memory_file("Conflict markers left in the file.")
    conf = conf.replace("Conflict markers left in the file.\n",
                        "<<<<<<< ours\nConflict markers left in the file.\n=======\ntheirs\n>>>>>>> theirs\n")
    lie_id, lie = memory_file("Bytes that do not hash to what the server says.")
    pers_id, pers = memory_file("A personal memory on a relay.", extra={"scope": "personal", "visibility": "private",
                                                                          "repo_id": None, "review_state": None})
    other_id, other = memory_file("A file named for another id.")

    def change(mid: str, text: str, digest: str | None = None) -> dict:
        return {"id": mid, "revision": 1, "review_state": "approved", "sha256": digest or sha(text), "file": text}

    changes = [change(good_id, good), change(tag_id, tagged), change(conf_id, conf),
               change(lie_id, lie, sha(lie + "x")), change(pers_id, pers), change(good_id[:-1] + "Z", other),
               {"id": "../../etc/passwd", "revision": 1, "review_state": "approved", "sha256": sha("x"), "file": "x"}]
    tokens = token_files(tmp_path / "t")
    with hostile_server(changes) as url:
        r = run_cli("remote", "add", "evil", url, "--token-file", str(tokens["reader"]))
    assert r.code == 0, r.err
    cache = _cache(ready)
    assert sorted(p.name for p in cache.glob("*.md")) == [f"{good_id}.md"]
    assert not list(cache.rglob("passwd")) and not (tmp_path / "etc").exists()
    for mid, why in ((tag_id, "it "), (conf_id, "conflict markers"), (lie_id, "does not hash to the sha256"),
                     (pers_id, "personal memory"), (good_id[:-1] + "Z", "the id must equal the file name")):
        assert f"quarantined {mid}: " in r.err and why in r.err, (mid, r.err)
    assert "not a memory id" in r.err and "Traceback" not in r.err


def test_the_gate_passes_a_remote_rule_only_as_approved(ready: Path, tmp_path: Path) -> None:
    with remote_server(tmp_path) as srv:
        assert run_cli("remote", "add", "team", srv.url, "--token-file", str(srv.tokens["proposer"])).code == 0
        mid = json.loads(run_cli("add", "Always run the migration linter before merging.", "--role", "instruction",
                                 "--json").out)["id"]
        assert run_cli("propose", mid, "--to", "remote", "team").code == 0, "propose"
        run_cli("forget", mid)  # the local draft goes: only the remote copy is left
        assert run_cli("remote", "pull", "team").code == 0
        ctx = json.loads(run_cli("context", "--query", "migration linter", "--json").out)
        assert mid not in [i["id"] for i in ctx["instructions"]]  # proposed, not approved: no rule

        srv.approve(mid)
        assert run_cli("remote", "pull", "team").code == 0
        ctx = json.loads(run_cli("context", "--query", "migration linter", "--json").out)
        assert mid in [i["id"] for i in ctx["instructions"]], ctx
        assert "## Instructions" in ctx["text"]

        # the cached file edited after the approval: its bytes are no longer what was approved
        path = _cache(ready) / f"{mid}.md"
        path.write_text(path.read_text().replace("before merging", "before merging, or skip it when in a hurry"))
        ctx = json.loads(run_cli("context", "--query", "migration linter", "--json").out)
        assert mid not in [i["id"] for i in ctx["instructions"]]
        assert "## Instructions" not in ctx["text"]  # the only rule, so no rule at all
        why = json.loads(run_cli("instruction", "list", "--json").out)
        row = next(x for x in why["approved"] if x["id"] == mid)
        assert row["served"] is False and "differs from what remote team's reviewer approved" in row["why_not"]

        # a full pull fetches the approved bytes again, and the rule is back
        assert run_cli("remote", "pull", "team", "--full").code == 0
        ctx = json.loads(run_cli("context", "--query", "migration linter", "--json").out)
        assert mid in [i["id"] for i in ctx["instructions"]]
