"""Every string of a memory is masked on every write path and on every output (issue 20, holes
5, 6 and 7): through the real CLI, the official MCP client and real git, nothing mocked."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from git_memex.core import frontmatter, model

from conftest import git, run_cli
from mcp_client import call, ok, text

MEM = ".ai/open-memex"
# FAKE credentials in their real formats, built here so no file of this repository holds one whole.
STRIPE = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc"
GITHUB = "ghp_" + "R8cAZ3kQw9LmN2pX7vB5tY1uJ4hG6fD0sE3a"
AWS = "AKIA" + "IOSFODNN7EXAMPLQ"
SECRETS = (STRIPE, GITHUB, AWS)


def _everything(*roots: Path) -> str:
    """Every file under the roots, as text (the memory files, the indexes, the outbox)."""
    out = []
    for root in roots:
        for p in root.rglob("*"):
            if p.is_file() and ".git" not in p.parts[len(root.parts):][:1]:
                out.append(p.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def _data_root() -> Path:
    return Path(os.environ["GIT_MEMEX_HOME"])


def _assert_clean(blob: str) -> None:
    for s in SECRETS:
        assert s.lower() not in blob.lower(), s[:8]


def test_cli_add_masks_tags_paths_and_aliases_and_reports_them(ready: Path) -> None:
    r = run_cli("add", "the payments service talks to stripe", "--tags", f"payments,{STRIPE}",
                "--paths", f"src/{GITHUB}/**", "--aliases", f"billing,{AWS}", "--json")
    assert r.code == 0, r.err
    masked = r.json()["masked"]
    assert len(masked) >= 3, masked
    _assert_clean(_everything(_data_root(), ready))
    shown = run_cli("show", r.json()["id"], "--json").json()
    assert "sk_lxxx" in json.dumps(shown).lower() or "sk_l" in json.dumps(shown["frontmatter"]["tags"])


def test_cli_supersede_masks_tags(ready: Path) -> None:
    mid = run_cli("add", "deploys run from the release branch", "--scope", "personal", "--json").json()["id"]
    r = run_cli("supersede", mid, "deploys run from main now", "--tags", f"deploy,{STRIPE}", "--json")
    assert r.code == 0, r.err
    assert r.json()["masked"], r.out
    _assert_clean(_everything(_data_root(), ready))


def test_mcp_add_masks_a_secret_in_a_tag_and_reports_it(repo: Path) -> None:
    data = ok("memory_add", {"text": "the billing job uses the live stripe account", "tags": [STRIPE, "billing"],
                             "paths": [f"infra/{GITHUB}.tf"], "aliases": [AWS]})
    assert len(data["masked"]) >= 3, data
    _assert_clean(_everything(_data_root(), repo))


def _raw_file(repo: Path, **fields: object) -> str:
    """A memory that arrived by another road (a teammate without hooks): written and committed
    with plain git, secrets in every string field."""
    m = model.create("the billing job runs nightly", scope="project", review_state="approved")
    m.fm.update(fields)
    folder = repo / MEM
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "--no-verify", "-m", "from elsewhere", cwd=repo)
    return m.id


RAW_FIELDS = {"title": f"stripe {STRIPE}", "canonical_ref": f"https://x.example/{GITHUB}", "tags": ["billing", STRIPE],
              "paths": [f"src/{GITHUB}/**"], "summary": f"key {AWS}", "aliases": [AWS],
              # where an id or a hash belongs (the attack on the merged main: these leaked from show,
              # export, inventory, audit, doctor and log)
              "related": [GITHUB], "supersedes": STRIPE, "repo_id": AWS}


def test_inventory_export_list_and_search_mask_every_field(ready: Path) -> None:
    mid = _raw_file(ready, **RAW_FIELDS)
    for args in (("inventory",), ("inventory", "--format", "json"), ("inventory", "--format", "html"), ("export",), ("export", "--json"), ("list", "--json"),
                 ("search", "billing", "--json"), ("list",), ("search", "billing"), ("audit",), ("audit", "--json"),
                 ("doctor",), ("doctor", "--json"), ("log", mid), ("log", mid, "--json")):
        r = run_cli(*args)
        assert r.code in ((0, 1) if args[0] in ("doctor", "audit") else (0,)), (args, r.err)
        _assert_clean(r.out + r.err)
    assert mid in run_cli("export").out
    shown = run_cli("show", mid, "--json")
    assert shown.code == 0 and shown.json()["frontmatter"]["tags"][0] == "billing"
    _assert_clean(shown.out)
    explained = run_cli("search", "billing", "--explain", "--json")
    assert explained.code == 0 and explained.json()["hits"][0]["canonical_ref"].startswith("https://x.example/")
    _assert_clean(explained.out)
    for tool, arguments in (("memory_get", {"id": mid}), ("memory_search", {"query": "billing"})):
        res = call(tool, arguments)
        assert not res.is_error, text(res)
        _assert_clean(text(res) + json.dumps(res.structured_content))


def test_import_masks_every_field(ready: Path, tmp_path: Path) -> None:
    mid = run_cli("add", "the billing job runs nightly", "--json").json()["id"]
    bundle = json.loads(run_cli("export").out)
    bundle["memories"][0]["frontmatter"].update(RAW_FIELDS)
    bundle["memories"][0]["frontmatter"]["id"] = mid[:-1] + ("A" if mid[-1] != "A" else "B")
    bundle["memories"][0]["id"] = bundle["memories"][0]["frontmatter"]["id"]
    bundle["memories"][0]["body"] = "the billing job runs nightly, and weekly on sundays"
    (tmp_path / "b.json").write_text(json.dumps(bundle))
    r = run_cli("import", str(tmp_path / "b.json"), "--json")
    assert r.code == 0, r.err
    _assert_clean(_everything(_data_root(), ready) + r.out + r.err)


def _conflict_with_secret(repo: Path) -> str:
    """A real conflicted merge (plain git, no driver) whose other side holds a secret."""
    m = model.create("line one\nline two\nline three", scope="project", review_state="proposed")
    folder = repo / MEM
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{m.id}.md"
    path.write_text(frontmatter.serialize(m.fm, m.body))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "base", cwd=repo)
    git("checkout", "-q", "-b", "theirs", cwd=repo)
    fm = dict(m.fm, tags=["base", STRIPE], title=f"t {AWS}")
    path.write_text(frontmatter.serialize(fm, f"line one\ntoken {GITHUB}\nline three"))
    git("commit", "-q", "-am", "theirs", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    fm = dict(m.fm, tags=["base", "ours"], title="t ours")
    path.write_text(frontmatter.serialize(fm, "line one\nline two (ours)\nline three"))
    git("commit", "-q", "-am", "ours", cwd=repo)
    assert git("merge", "theirs", cwd=repo, check=False).returncode != 0
    return m.id


def test_resolve_never_prints_the_other_sides_secret(repo: Path) -> None:
    mid = _conflict_with_secret(repo)
    for args in (("resolve", mid), ("resolve", mid, "--json")):
        r = run_cli(*args)
        assert r.code == 3, r.out + r.err
        assert "body" in r.out
        _assert_clean(r.out + r.err)


def test_mcp_resolve_never_shows_the_other_sides_secret(repo: Path) -> None:
    mid = _conflict_with_secret(repo)
    res = call("memory_resolve", {"target": mid})
    assert "body" in text(res)
    _assert_clean(text(res) + json.dumps(res.structured_content))


PUTTY_LINES = "AAAAIBz3mQq9Kx2LrT5vYw8ZpN4cHdF6gJ1sE7aU0bVnMkXo\nAAAAIHc8Rj2pL5qW9xN3vT7yB1mK4dF6gH0sZaUeVnMiXoQr"
HOLE5 = [
    ("curl -u admin:Pr0d-S3cret!x https://ci.internal/api", "Pr0d-S3cret!x"),
    ("curl -s --user deploy:Zq8#mW2vLp7w https://nexus/", "Zq8#mW2vLp7w"),
    ("sshpass -p 'Kx9$mQ2vLp7w' ssh root@10.0.0.5", "Kx9$mQ2vLp7w"),
    ("DBのパスワード: Hj7#kL2mNp9q", "Hj7#kL2mNp9q"),
    ("Kennwort: Wq4%tY8uIo2p", "Wq4%tY8uIo2p"),
    ("mot de passe : Rt5&yU9iOp3a", "Rt5&yU9iOp3a"),
    ("пароль: Ew6*rT0yUi4s", "Ew6*rT0yUi4s"),
    ("password:\u3000Mn3@bV7cXz1q", "Mn3@bV7cXz1q"),
    ("password:\u00a0Lk2!jH6gFd0w", "Lk2!jH6gFd0w"),
    ('pass: "Po9_iU5yTr1e"', "Po9_iU5yTr1e"),
    ("The staging password:\nQa1-zX5cVb9n\n", "Qa1-zX5cVb9n"),
    ("token " + GITHUB[:10] + "\u200b" + GITHUB[10:], GITHUB[10:]),
    ("key:\n-----begin rsa private key-----\nMIIEowIBAAKCAQEAx7Yb3kQ9mWzT2pLrN5vC8dF1gH4jK6sE0aU\n-----end rsa private key-----",
     "MIIEowIBAAKCAQEAx7Yb3kQ9mWzT2pLrN5vC8dF1gH4jK6sE0aU"),
    ("----BEGIN PRIVATE KEY----\nMIIEowIBAAKCAQEAx7Yb3kQ9mWzT2pLrN5vC8dF1gH4jK6sE0aU\n----END PRIVATE KEY----",
     "MIIEowIBAAKCAQEAx7Yb3kQ9mWzT2pLrN5vC8dF1gH4jK6sE0aU"),
    ("-----BEGIN RSA PRI\u200bVATE KEY-----\nMIIEowIBAAKCAQEAx7Yb3kQ9mWzT2pLrN5vC8dF1gH4jK6sE0aU\n-----END RSA PRIVATE KEY-----",
     "MIIEowIBAAKCAQEAx7Yb3kQ9mWzT2pLrN5vC8dF1gH4jK6sE0aU"),
    ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\nPrivate-Lines: 2\n"
     + PUTTY_LINES + "\nPrivate-MAC: 0a1b", PUTTY_LINES.split("\n")[1]),
]


@pytest.mark.parametrize(("note", "secret"), HOLE5, ids=[repr(n)[:30] for n, _ in HOLE5])
def test_common_credential_forms_are_masked_by_add(repo: Path, note: str, secret: str) -> None:
    r = run_cli("add", "-", "--scope", "personal", "--json", input=note)
    assert r.code == 0, r.err
    assert r.json()["masked"], note
    blob = _everything(_data_root()) + r.out + r.err
    assert secret not in blob


def test_propose_masks_a_tag_of_a_hand_edited_personal_memory(ready: Path) -> None:
    r = run_cli("add", "I deploy billing from my laptop", "--scope", "personal", "--json")
    path = Path(r.json()["path"])
    fm, body = frontmatter.parse(path.read_text())
    fm["tags"] = ["billing", STRIPE]
    fm["title"] = f"key {GITHUB}"
    path.write_text(frontmatter.serialize(fm, body))  # edited by hand: no write path saw it
    r = run_cli("propose", r.json()["id"], "--json")
    assert r.code == 0, r.err
    outbox = [p for p in _data_root().rglob("*.md") if p != path and "outbox" in str(p)]
    assert outbox, r.out
    _assert_clean("".join(p.read_text() for p in outbox) + r.out + r.err)


# The forms the attack on the merged main found: passwords with spaces, values ending in a secret
# word, labels in more languages, prose, a shell alias, homoglyphs. FAKE values.
ATTACK2 = [
    ('DB_PASSWORD="p@ss w0rd!"', "p@ss w0rd!"),
    ("password: p@ss w0rd!", "p@ss w0rd!"),
    ("export PGPASSWORD='Tr4ck Field 22'", "Tr4ck Field 22"),
    ("password: hunter2secret", "hunter2secret"),
    ("client_secret = Kx81MonsterSecret", "Kx81MonsterSecret"),
    ("كلمة المرور: Qw7!mZ92a", "Qw7!mZ92a"),
    ("पासवर्ड: Mz4$pl9Hs", "Mz4$pl9Hs"),
    ("mật khẩu: Xe2*gn6Dt", "Xe2*gn6Dt"),
    ("the password for prod is hunter2-Xyz", "hunter2-Xyz"),
    ("pw: Gl4ss-Onion7", "Gl4ss-Onion7"),
    ("alias dbp=\"mysql -uadmin -p'Jx7#mw2Lt' prod\"", "Jx7#mw2Lt"),
    ("p\u0430ssword: Yt6!pw2Rn", "Yt6!pw2Rn"),
]


def _masked_by_add(note: str, secret: str) -> None:
    r = run_cli("add", "-", "--scope", "personal", "--json", input=note)
    assert r.code == 0, r.err
    assert r.json()["masked"], note
    assert secret not in _everything(_data_root()) + r.out + r.err


def _commit_refused(ready: Path, about: str, notes: list[tuple[str, str]], extra: Callable[[], model.Memory],
                    secrets: list[str]) -> None:
    """Each note in its own memory file, plus one memory `extra` shapes, committed with plain git:
    the hook `init` installed refuses the commit, names every file and prints no secret."""
    folder = ready / MEM
    folder.mkdir(parents=True, exist_ok=True)
    ids = []
    for note, _ in notes:
        m = model.create(f"notes on the {about}\n{note}\n", scope="project", review_state="proposed")
        (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
        ids.append(m.id)
    m = extra()
    (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body))
    ids.append(m.id)
    git("add", "-A", cwd=ready)
    r = git("commit", "-q", "-m", "memories", cwd=ready, check=False)
    assert r.returncode == 1, r.stdout + r.stderr
    for mid in ids:
        assert f"{mid}.md" in r.stderr, (mid, r.stderr)
    for secret in [s for _, s in notes] + secrets:
        assert secret not in r.stdout + r.stderr
    _assert_clean(r.stdout + r.stderr)
    assert git("rev-list", "--count", "HEAD", cwd=ready).stdout.strip() == "2"


@pytest.mark.parametrize(("note", "secret"), ATTACK2, ids=[repr(n)[:30] for n, _ in ATTACK2])
def test_attack2_forms_are_masked_by_add(repo: Path, note: str, secret: str) -> None:
    _masked_by_add(note, secret)


def test_pre_commit_refuses_the_attack2_forms_and_a_token_as_a_key(ready: Path) -> None:
    """Each form in its own memory file, plus a frontmatter key that is itself a token, committed
    with plain git: the hook `init` installed refuses the commit and names every file."""

    def token_as_key() -> model.Memory:
        m = model.create("the release bot reads org members", scope="project", review_state="proposed")
        m.fm["grants"] = {GITHUB: "read:org"}
        return m

    _commit_refused(ready, "database", ATTACK2, token_as_key, [])


# The forms the third attack found: spaced passwords under labels in other languages, `pass` and
# `passphrase` labels, "X is VALUE" prose in those languages. FAKE values.
ATTACK3 = [
    ('senha: "verde mar 77"', "verde mar 77"),
    ('mot de passe: "lune bleue 77"', "lune bleue 77"),
    ('пароль: "зимний лес 42"', "зимний лес 42"),
    ("Passwort: Sommer Wind 2024", "Sommer Wind 2024"),
    ("Passwort=Sommer Wind 2024", "Sommer Wind 2024"),
    ("la password è Hunter2xyzQ", "Hunter2xyzQ"),
    ("pass: S3cr3tV@lue9", "S3cr3tV@lue9"),
    ("db pass Kx81Mq22pz", "Kx81Mq22pz"),
    ("passphrase is horse battery staple 9", "horse battery staple 9"),
]


@pytest.mark.parametrize(("note", "secret"), ATTACK3, ids=[repr(n)[:30] for n, _ in ATTACK3])
def test_attack3_forms_are_masked_by_add(repo: Path, note: str, secret: str) -> None:
    _masked_by_add(note, secret)


@pytest.mark.parametrize(("tag", "secret"), [("pass: S3cr3tV@lue9", "s3cr3tv@lue9"),
                                             ("mot de passe: Soleil Rouge 58", "soleil-rouge-58")])
def test_a_password_in_a_tag_is_masked_after_normalisation(repo: Path, tag: str, secret: str) -> None:
    """`add` lower-cases a tag and makes its spaces dashes (`pass:-s3cr3tv@lue9`) before it is
    masked; the normalised form is masked like the one written."""
    r = run_cli("add", "the smtp relay for billing", "--tags", f"smtp,{tag}", "--scope", "personal", "--json")
    assert r.code == 0, r.err
    assert r.json()["masked"], r.out
    stored = _everything(_data_root()) + r.out + r.err
    assert secret not in stored and secret not in stored.lower()


def test_pre_commit_refuses_the_attack3_forms(ready: Path) -> None:
    """Each form in a hand-written memory file (and one as a normalised tag), committed with plain
    git: the pre-commit hook `init` installed refuses the commit and names every file."""

    def tagged() -> model.Memory:
        m = model.create("the smtp relay for billing", scope="project", review_state="proposed")
        m.fm["tags"] = ["smtp", "pass:-s3cr3tv@lue9"]
        return m

    _commit_refused(ready, "mail server", ATTACK3, tagged, ["s3cr3tv@lue9"])


def test_import_masks_a_token_used_as_a_frontmatter_key(ready: Path, tmp_path: Path) -> None:
    mid = run_cli("add", "the release bot reads org members", "--json").json()["id"]
    bundle = json.loads(run_cli("export").out)
    fm = bundle["memories"][0]["frontmatter"]
    fm["grants"] = {GITHUB: "read:org", "billing": [{STRIPE: "charges"}]}
    fm[AWS] = "ci"
    fm["id"] = bundle["memories"][0]["id"] = mid[:-1] + ("A" if mid[-1] != "A" else "B")
    bundle["memories"][0]["body"] = "the release bot reads org members, and teams"
    (tmp_path / "b.json").write_text(json.dumps(bundle))
    r = run_cli("import", str(tmp_path / "b.json"), "--json")
    assert r.code == 0, r.err
    _assert_clean(_everything(_data_root(), ready) + r.out + r.err)
    shown = run_cli("show", fm["id"], "--json")
    assert shown.code == 0, shown.err
    assert shown.json()["frontmatter"]["grants"]["ghp_" + "x" * 36] == "read:org"


def test_outputs_mask_a_token_used_as_a_frontmatter_key(ready: Path) -> None:
    """A file committed with --no-verify whose frontmatter has a token as a key: every listing
    that prints frontmatter masks the key like any other string."""
    mid = _raw_file(ready, grants={GITHUB: "read:org", "billing": [{STRIPE: "charges"}]})
    for args in (("export",), ("export", "--json"), ("show", mid, "--json"), ("inventory", "--format", "json")):
        r = run_cli(*args)
        assert r.code == 0, (args, r.err)
        _assert_clean(r.out + r.err)
    assert "ghp_" + "x" * 36 in run_cli("show", mid, "--json").out


def test_an_error_that_quotes_an_argument_never_prints_its_secret(repo: Path) -> None:
    """The attack on the merged main: "no memory with id sk_live_…" for `--related sk_live_…`."""
    for args in (("add", "a linked note", "--related", STRIPE), ("add", "an expiring note", "--expires", GITHUB),
                 ("show", STRIPE)):
        r = run_cli(*args)
        assert r.code != 0 and r.err.startswith("git-memex: "), (args, r.err)
        _assert_clean(r.out + r.err)
    res = call("memory_get", {"id": STRIPE})
    assert res.is_error
    _assert_clean(text(res) + json.dumps(res.structured_content))
    res = call("memory_add", {"text": "an expiring note", "scope": "personal", "expires": GITHUB})
    assert res.is_error
    _assert_clean(text(res) + json.dumps(res.structured_content))
