"""A token the frontmatter spells with YAML escapes (`"\\u0067hp_…"`): the reader decodes it, so
the pre-commit hook and `scan` refuse it as they refuse the token written out, and `show` (text
and JSON) prints it masked, saying the file holds secrets (found by an attack: a plain `git
commit` took such a file and `show` printed the decoded token)."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memex.core import frontmatter, model

from conftest import git, grows_linearly, run_cli

MEM = ".ai/open-memex"
TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
ESCAPED = {
    "unicode tag": ('tags: ["\\u0067hp_{rest}"]', "tags"),
    "hex tag": ('tags: ["\\x67hp_{rest}"]', "tags"),
    "escape inside": ('title: "gh\\x70_{rest}"', "title"),
    "joined line": ('title: "ghp_{head}\\\n  {tail}"', "title"),
}


def _file(folder: Path, line: str) -> str:
    m = model.create("the deploy key is rotated monthly", scope="project", review_state="proposed")
    text = frontmatter.serialize(m.fm, m.body)
    rest = TOKEN[4:]
    line = line.format(rest=rest, head=rest[:10], tail=rest[10:])
    key = line.split(":", 1)[0]
    lines = [ln for ln in text.splitlines() if not ln.startswith(f"{key}:")]
    lines.insert(1, line)
    (folder / f"{m.id}.md").write_text("\n".join(lines) + "\n", "utf-8")
    return m.id


@pytest.mark.parametrize("name", sorted(ESCAPED))
def test_the_hook_refuses_a_token_written_with_yaml_escapes(ready: Path, name: str) -> None:
    folder = ready / MEM
    folder.mkdir(parents=True, exist_ok=True)
    mid = _file(folder, ESCAPED[name][0])
    shown = run_cli("show", mid, "--json")
    assert shown.code == 0 and TOKEN in str(frontmatter.parse((folder / f"{mid}.md").read_text())[0]), shown.err
    git("add", "-A", cwd=ready)
    head = git("rev-parse", "HEAD", cwd=ready).stdout
    done = git("commit", "-q", "-m", "notes", cwd=ready, check=False)
    said = done.stdout + done.stderr
    assert done.returncode == 1 and "written with YAML escapes" in said, said
    assert TOKEN not in said and git("rev-parse", "HEAD", cwd=ready).stdout == head
    scan = run_cli("scan")
    assert scan.code != 0 and f"{mid}.md" in scan.out + scan.err


def test_show_masks_a_file_that_holds_secrets_and_says_so(ready: Path) -> None:
    folder = ready / MEM
    folder.mkdir(parents=True, exist_ok=True)
    mid = _file(folder, ESCAPED["unicode tag"][0])
    path = folder / f"{mid}.md"
    path.write_text(path.read_text().replace("rotated monthly", f"rotated monthly {TOKEN[:-1]}Q"), "utf-8")
    text = run_cli("show", mid)
    assert text.code == 0, text.err
    assert "ghp_a" not in text.out and "ghp_xxxx" in text.out and TOKEN[:-1] not in text.out
    assert "# masked here: this file holds secrets" in text.out
    assert TOKEN not in run_cli("show", mid, "--json").out


def test_an_escape_that_spells_no_secret_commits(ready: Path) -> None:
    folder = ready / MEM
    folder.mkdir(parents=True, exist_ok=True)
    mid = _file(folder, 'title: "C:\\\\Users\\\\ann \\u2014 notes"')
    git("add", "-A", cwd=ready)
    done = git("commit", "-q", "-m", "notes", cwd=ready, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = run_cli("show", mid)
    assert "masked here" not in shown.out and "C:\\Users\\ann" in shown.out


def test_a_frontmatter_with_a_backslash_is_judged_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check_text` (the hook's and `scan`'s check) judges a file (the format check, its model)
    once, not once more for the check of YAML escapes, which reads the frontmatter as the reader
    parses it (`frontmatter.parse`, not the normalised model); the finding is the same."""
    from git_memex.core import files
    from git_memex.secrets.scan import check_text

    mid = _file(tmp_path, ESCAPED["unicode tag"][0])
    text = (tmp_path / f"{mid}.md").read_text("utf-8")
    real, calls = files.judge_bytes, []

    def counted(raw: bytes, path: Path | str) -> model.Memory:
        calls.append(path)
        return real(raw, path)

    monkeypatch.setattr(files, "judge_bytes", counted)
    found = check_text(f"{MEM}/{mid}.md", text)
    assert [f.rule for f in found] == ["github-pat (written with YAML escapes)"], found
    assert len(calls) == 1, calls


ESC_TOKEN = f'"\\u0067hp_{TOKEN[4:]}"'  # TOKEN with its first letter escaped
# Found by an attack: each file the reader reads with TOKEN in it (or a <private> part), which the
# hook and scan took (exit 0) because their check cut the frontmatter otherwise than the reader,
# or read the fields after normalisation rewrote them, or read no key.
READER_VARIANTS = {
    "bom": ("\ufeff", [f"tags:\n- {ESC_TOKEN}"]),
    "dashes line": ("", ["---x: 1", f"tags:\n- {ESC_TOKEN}"]),
    "dashes in a quoted value": ("", ['note: "abc\n---x"', f"tags:\n- {ESC_TOKEN}"]),
    "type overwritten": ("", [f"type: {ESC_TOKEN}"]),
    "priority of a bogus type": ("", ["type: bogus", f"priority: {ESC_TOKEN}"]),
    "scope_kind of a bogus type": ("", ["type: bogus", f"scope_kind: {ESC_TOKEN}"]),
    "source of a bogus type": ("", ["type: bogus", f"source: {ESC_TOKEN}"]),
    "quoted key": ("", [f"{ESC_TOKEN}: 1"]),
    "nested key": ("", [f"extra:\n  {ESC_TOKEN}: [1]"]),
    "private part": ("", ['note: "\\x3cprivate>diary</private>"']),
    # the secret written plainly, its context spelled with escapes: only decoded is it a password
    "escaped key": ("", ['"p\\x61ssword": Hunter2024x']),
    "escaped nested key": ("", ['db:\n  "p\\x61ssword": Hunter2024x']),
    # no escape, but a shape whose text is not what YAML reads: the check reads the YAML
    "block scalar": ("", ["password: |\n  Hunter2024x"]),
    "folded scalar": ("", ["password: >-\n  Hunter2024x"]),
    "explicit key": ("", ["? password\n: Hunter2024x"]),
    "nested explicit key": ("", ["db:\n  ? password\n  : Hunter2024x"]),
}
NO_ESCAPE = {"block scalar", "folded scalar", "explicit key", "nested explicit key"}
# what the reader decodes in each variant, which no answer of the hook or scan may print
DECODED = {"private part": "<private>diary", **dict.fromkeys(
    ("escaped key", "escaped nested key", "block scalar", "folded scalar", "explicit key", "nested explicit key"),
    "'password': 'Hunter2024x")}


def _variant(folder: Path, name: str) -> str:
    prefix, lines = READER_VARIANTS[name]
    m = model.create("the build uses make", scope="project", review_state="proposed", tags=["x"])
    text = frontmatter.serialize(m.fm, m.body)
    keys = {ln.split(":", 1)[0] for ln in lines}
    kept = [ln for ln in text.splitlines() if ln.split(":", 1)[0] not in keys and not ln.startswith("- ")]
    at = kept.index("---", 1)  # the fields go last, just before the closing fence
    (folder / f"{m.id}.md").write_text(prefix + "\n".join(kept[:at] + lines + kept[at:]) + "\n", "utf-8")
    return m.id


@pytest.mark.parametrize("name", sorted(READER_VARIANTS))
def test_the_hook_and_scan_read_the_frontmatter_the_reader_reads(ready: Path, name: str) -> None:
    folder = ready / MEM
    folder.mkdir(parents=True, exist_ok=True)
    mid = _variant(folder, name)
    raw = frontmatter.parse((folder / f"{mid}.md").read_text("utf-8"))[0]  # what the reader decodes
    assert DECODED.get(name, TOKEN) in str(raw), raw
    git("add", "-A", cwd=ready)
    head = git("rev-parse", "HEAD", cwd=ready).stdout
    done = git("commit", "-q", "-m", "notes", cwd=ready, check=False)
    said = done.stdout + done.stderr
    how = "as YAML reads the frontmatter" if name in NO_ESCAPE else "written with YAML escapes"
    assert done.returncode == 1 and how in said, said
    assert TOKEN not in said and "diary" not in said and "Hunter2024x" not in said
    assert git("rev-parse", "HEAD", cwd=ready).stdout == head
    scan = run_cli("scan")
    assert scan.code != 0 and f"{mid}.md" in scan.out + scan.err and how in scan.out + scan.err
    assert TOKEN not in scan.out + scan.err and "Hunter2024x" not in scan.out + scan.err


@pytest.mark.parametrize("line", ['"p\\x61ssword": Hunter2024x', "? password\n: Hunter2024x",
                                  "db:\n  \"p\\u0061ssword\": Hunter2024x"])
def test_show_masks_a_value_that_is_a_secret_beside_its_key(ready: Path, line: str) -> None:
    """A file past the hook (--no-verify, a pull) whose key names the secret in a spelling only
    YAML reads (escapes, an explicit key): the value alone is no secret, beside its key it is.
    `show` (text, JSON) and MCP `memory_get` mask it (found by an attack: show printed it)."""
    from mcp_client import call
    from mcp_client import text as said

    folder = ready / MEM
    folder.mkdir(parents=True, exist_ok=True)
    m = model.create("the staging database notes", scope="project", review_state="proposed")
    lines = frontmatter.serialize(m.fm, m.body).splitlines()
    lines.insert(1, line)
    (folder / f"{m.id}.md").write_text("\n".join(lines) + "\n", "utf-8")
    git("add", "-A", cwd=ready)
    git("commit", "-q", "--no-verify", "-m", "by hand", cwd=ready)
    shown = run_cli("show", m.id)
    assert shown.code == 0, shown.err
    assert "Hunter2024x" not in shown.out and "# masked here" in shown.out
    assert "Hunter2024x" not in run_cli("show", m.id, "--json").out
    got = call("memory_get", {"id": m.id}, cwd=ready)
    assert not got.is_error and m.id in said(got), said(got)
    assert "Hunter2024x" not in said(got) + str(got.structured_content)


BESIDE_KEY = {
    "block list": "password:\n- Sunshine2024",
    "indented block list": "password:\n  - Sunshine2024",
    "nested block list": "db:\n  password:\n  - Sunshine2024",
    "nested mapping": "password:\n  value: Sunshine2024",
    "key with a space": '"password ": Sunshine2024',
}


@pytest.mark.parametrize("name", sorted(BESIDE_KEY))
def test_a_password_only_its_key_names_is_refused_and_shown_masked(ready: Path, name: str) -> None:
    """Found by an attack: a password as a block list item under its key (the list shape every
    writer produces, so the fast reader takes it and the text check reads no assignment), under a
    nested key, or a key with a trailing space, was committed by the hook, passed `scan`, and
    `show` printed it. Each string under a key that is not the protocol's is read beside its key."""
    folder = ready / MEM
    folder.mkdir(parents=True, exist_ok=True)
    m = model.create("the staging database notes", scope="project", review_state="proposed")
    lines = frontmatter.serialize(m.fm, m.body).splitlines()
    at = lines.index("---", 1)
    path = folder / f"{m.id}.md"
    path.write_text("\n".join(lines[:at] + BESIDE_KEY[name].splitlines() + lines[at:]) + "\n", "utf-8")
    assert "Sunshine2024" in str(frontmatter.parse(path.read_text("utf-8"))[0])
    git("add", "-A", cwd=ready)
    head = git("rev-parse", "HEAD", cwd=ready).stdout
    done = git("commit", "-q", "-m", "notes", cwd=ready, check=False)
    said = done.stdout + done.stderr
    assert done.returncode == 1 and "in the frontmatter" in said and "Sunshine2024" not in said, said
    assert git("rev-parse", "HEAD", cwd=ready).stdout == head
    scan = run_cli("scan")
    assert scan.code != 0 and f"{m.id}.md" in scan.out + scan.err and "Sunshine2024" not in scan.out + scan.err
    git("commit", "-q", "--no-verify", "-m", "by hand", cwd=ready)
    for args in ((m.id,), (m.id, "--json")):
        shown = run_cli("show", *args)
        assert shown.code == 0 and "Sunshine2024" not in shown.out, shown.out


def test_the_check_of_a_frontmatter_with_many_escaped_keys_is_linear(tmp_path: Path) -> None:
    """Found by an attack: each top-level key looked for its line by splitting the whole file
    again, so 1,000 keys spelled with escapes and a 200,000-line body took ~50 s in the hook,
    `scan` and `doctor` (keys × lines). The lines are read once."""
    from git_memex.secrets.scan import check_text

    m = model.create("the build uses make", scope="project", review_state="proposed")
    head, _sep, rest = frontmatter.serialize(m.fm, m.body).partition("\n---\n")

    def run(n: int) -> None:
        keys = "".join(f'"\\x6b{j:05d}": 1\n' for j in range(n // 100))
        check_text(f"{MEM}/{m.id}.md", f"{head}\n{keys}---\n{rest}" + "x\n" * n)

    linear, small, big = grows_linearly(run, 80_000)
    assert linear, (small, big)
