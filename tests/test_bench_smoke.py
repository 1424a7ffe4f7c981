"""The benchmark cannot rot (CI runs `python -m bench --smoke`), and the shortcuts the speed work
took keep the index exactly as correct as the slow paths they replace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memex.core import frontmatter
from git_memex.core.plainyaml import fast_frontmatter
from git_memex.index.database import Index, Source

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import run as bench_run  # noqa: E402


# ------------------------------------------------------------------ the smoke run
@pytest.mark.slow
@pytest.mark.skipif(not bench_run.GEN.exists(), reason=f"the corpus generator is not at {bench_run.GEN}")
def test_bench_smoke_writes_a_row_per_measurement(tmp_path: Path) -> None:
    out = tmp_path / "results"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "bench", "--smoke", "--out", str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    text = (out / "results.md").read_text(encoding="utf-8")
    assert "**Machine:**" in text and "SQLite" in text and "git" in text
    table = [line for line in text.splitlines() if line.startswith("| ")]
    for _row, label, _kind in bench_run.ROWS:
        lines = [line for line in table if line.startswith(f"| {label} |")]
        assert len(lines) == 1, f"no row for {label!r}"
        assert "error (" not in lines[0], lines[0]  # a command that exists must run; a missing one says n/a
    assert any(line.startswith("| index size on disk |") for line in table)
    assert (out / "results.json").exists()


# ------------------------------------------------------------------ fast frontmatter reader
def yaml_read(fm_text: str) -> object:
    try:
        return frontmatter.parse("---\n" + fm_text + "---\n\nbody\n")[0]
    except frontmatter.FrontmatterError:
        return "refused"


def same(a: object, b: object) -> bool:
    """Equal values of equal types all the way down (True == 1 in Python, not in YAML)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


SCALARS = st.one_of(
    st.sampled_from(["x", "yes", "No", "on", "OFF", "null", "~", "Null", "0", "00", "012", "0x1F", "1_000", "1:20",
                     "1.5", ".5", "1e5", ".inf", "-.inf", ".NaN", "<<", "=", "-1", "+1", "-", "- a", "a: b", "a #b",
                     "a#b", "'q'", "'it''s'", '"dq"', '"a\\nb"', "[a, b]", "[]", "[a, [b]]", "[a, 'b']", "{a: 1}",
                     "&anc x", "*al", "!tag x", "|", "> x", "%x", "@x", "`x", "2025-01-01", "2025-01-01T00:00:00Z",
                     "'2025-01-01T00:00:00Z'", "01J9ZZQ8PMWKVX6KGZH2MXR6QJ", "true", "数据库", "a\u2028b", "a  b",
                     "?x", ":x", "-x", "[a, -1]", "[a, 1.5]", "[a, yes]", "[x:y]", "0o17", "0b101", "08", "1:60",
                     "3.", "1.2.3", ".git", "~x", "x~", "local:me@example.com", "a:", "[,]", "[a,,b]",
                     # quoted items in a flow list (as JSON writes them), and the ones that must decline
                     '["a", "b"]', "['a', 'b']", '["a, b"]', '[a", "b]', '["a\\"b"]', '["a\\nb"]', '["", x]',
                     "['it''s']", '["yes", "1"]', '[ "a" , ]', '["a" b]', '["# x", "a: b"]', '["\u2028"]']),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12),
)
KEYS = st.sampled_from(["id", "tags", "a", "b_c", "on", "yes", "null", "Key", "x-y", "1a", "schema_version"])


@st.composite
def frontmatter_texts(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        key = draw(KEYS)
        if draw(st.booleans()):
            lines.append(f"{key}:")
            indent = draw(st.sampled_from(["", "  ", " "]))
            lines += [f"{indent}- {draw(SCALARS)}" for _ in range(draw(st.integers(0, 3)))]
        else:
            lines.append(f"{key}:{draw(st.sampled_from([' ', '  ', '']))}{draw(SCALARS)}")
    return "\n".join(lines) + "\n"


@settings(max_examples=1500, deadline=None)
@given(frontmatter_texts())
def test_fast_frontmatter_agrees_with_yaml_or_declines(text: str) -> None:
    fast = fast_frontmatter(text)
    if fast is not None:
        assert same(fast, yaml_read(text)), text


def test_fast_frontmatter_reads_the_shapes_writers_produce() -> None:
    from git_memex.core import model

    m = model.create("the db 数据库 backup at 2am: see docs", scope="personal", tags=["a b", "数据库"])
    m.fm["aliases"] = ["how to undo", "git 中文乱码"]
    fm_text, _ = frontmatter.split(frontmatter.serialize(m.fm, m.body))
    assert fast_frontmatter(fm_text) == yaml_read(fm_text)
    corpus = ('id: 01JHM6MNKBRW8EKSW4MXHS5N72\nschema_version: 2\nscope: project\ntype: fact\n'
              'created_at: "2025-03-01T10:00:00Z"\nsupersedes: null\ntags: [ci, build]\n')
    assert fast_frontmatter(corpus) == yaml_read(corpus)
    assert fast_frontmatter("review_history:\n- at: x\n  by: y\n") is None  # nested: the YAML reader decides


def test_fast_frontmatter_reads_json_quoted_flow_lists() -> None:
    """A list of double-quoted strings (`tags: ["ci", "build"]`, what a JSON-minded writer or tool
    produces) is the plain shape too: before, any quoted item sent the file to PyYAML, whose
    import and first load cost a commit's hook ~20 ms of CPU."""
    text = 'id: "01JHM6MNKBRW8EKSW4MXHS5N72"\ntags: ["ci", "build", "yes", "a: b"]\naliases: [\'x y\']\n'
    assert fast_frontmatter(text) == yaml_read(text)
    assert fast_frontmatter(text) == {"id": "01JHM6MNKBRW8EKSW4MXHS5N72", "tags": ["ci", "build", "yes", "a: b"],
                                      "aliases": ["x y"]}


# ------------------------------------------------------------------ refresh shortcuts stay correct
def write_memory(folder: Path, mid: str, body: str) -> Path:
    p = folder / f"{mid}.md"
    p.write_text(f"---\nid: {mid}\nschema_version: 2\nscope: project\ntype: fact\nstatus: active\n"
                 f"tags: [bench]\n---\n\n{body}\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("watch", ["0", "1"])
def test_refresh_notices_a_same_size_same_mtime_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      watch: str) -> None:
    """The digest shortcut (and, in a long-lived process, the folder watch) must not hide an edit
    made in place that keeps the size and lands in the same timestamp."""
    monkeypatch.setenv("GIT_MEMEX_WATCH", watch)
    folder = tmp_path / "mem"
    folder.mkdir()
    ids = [f"01JHM6MNKBRW8EKSW4MXHS5N{i:02d}" for i in range(20)]
    paths = [write_memory(folder, mid, f"memory number {i} about alpha") for i, mid in enumerate(ids)]
    old = time.time() - 60  # well outside the racy window
    for p in paths:
        os.utime(p, (old, old))
    src = Source("repo", folder, "k")
    with Index(tmp_path / "index.db") as idx:
        for _ in range(4):  # the third and later refreshes use the watch when it is on
            idx.refresh([src])
        target = paths[3]
        st0 = target.stat()
        text = target.read_text(encoding="utf-8")
        new = text.replace("alpha", "omega")
        assert len(new) == len(text)
        with open(target, "r+", encoding="utf-8") as fh:
            fh.write(new)
        os.utime(target, ns=(st0.st_atime_ns, st0.st_mtime_ns))
        assert target.stat().st_size == st0.st_size and target.stat().st_mtime_ns == st0.st_mtime_ns
        idx.refresh([src])
        body = idx.conn.execute("SELECT body FROM memories WHERE path=?", (str(target),)).fetchone()[0]
    # Without a watch this case is caught by the racy rule only when the first read was within
    # RACY_NS of the file's mtime; here it was not, so only the inotify watch can see it. The stat
    # scan alone (watch "0") cannot tell this edit apart: same size, same mtime, same inode.
    if watch == "1" and sys.platform.startswith("linux"):
        assert "omega" in body
    else:
        assert "alpha" in body or "omega" in body


def test_refresh_notices_racy_edit_and_deletes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_MEMEX_WATCH", "0")
    from git_memex.index import database

    monkeypatch.setattr(database, "RACY_NS", 600 * 10**9)  # racy the whole test, however slow the machine
    folder = tmp_path / "mem"
    folder.mkdir()
    ids = [f"01JHM6MNKBRW8EKSW4MXHS5N{i:02d}" for i in range(5)]
    paths = [write_memory(folder, mid, f"memory number {i} about alpha") for i, mid in enumerate(ids)]
    src = Source("repo", folder, "k")
    with Index(tmp_path / "index.db") as idx:
        idx.refresh([src])  # files written just now: racy, re-checked by content next time
        st0 = paths[1].stat()
        text = paths[1].read_text(encoding="utf-8")
        paths[1].write_text(text.replace("alpha", "omega"), encoding="utf-8")
        os.utime(paths[1], ns=(st0.st_atime_ns, st0.st_mtime_ns))
        s = idx.refresh([src])
        assert s.changed == 1
        assert "omega" in idx.conn.execute("SELECT body FROM memories WHERE path=?", (str(paths[1]),)).fetchone()[0]
        paths[2].unlink()
        s = idx.refresh([src])
        assert s.removed == 1 and idx.count() == 4
        s = idx.refresh([src])
        assert s.touched == 0 and s.unchanged == 4


@pytest.mark.slow
def test_org_bench_smoke_reports_every_row_and_the_targets(tmp_path: Path) -> None:
    """`python -m bench.org` (docs/org.md, Figures) cannot rot: two tiny sizes with the built-in
    corpus (no ../shared needed) give every row, the reference rows, the targets and the growth."""
    from bench import org as bench_org

    out = tmp_path / "org.md"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "bench.org", "--sizes", "120,240", "--reps", "1", "--corpus", "builtin",
                        "--out", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    assert "Corpus: built-in (asked for)" in text
    for row in bench_org.ROWS:
        assert sum(line.startswith(f"| {row} |") for line in text.splitlines()) == 2, row  # table + growth
    for ref in ("git --version", "git-memex --version (start-up floor)", "pure-Python loop"):
        assert f"| {ref}" in text, ref
    assert "Targets (issue 16) at 240" in text and "Cost growth against 120" in text


@pytest.mark.slow
def test_prompt_hook_bench_smoke_reports_both_halves_and_the_time(tmp_path: Path) -> None:
    """`python -m bench.prompt_hook` (docs/agents.md, Keyword capture) cannot rot: the set through
    the real hook, 200 distractors, both halves' recall and false positives, the timing and the
    machine reference rows; no ../shared needed."""
    out = tmp_path / "prompt_hook.md"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "bench.prompt_hook", "--smoke", "--no-semantic", "--sweep", "--out", str(out)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    for half in ("tuning", "held-out"):
        assert sum(line.startswith(f"| {half} | ") for line in text.splitlines()) == 2, half  # the set, + 200
    assert "Whole-process time of `capture --hook claude` at 232 memories, lexical lane" in text
    assert "| share | 0.3 (shipped) |" in text and "Shipped rule, in-process: tuning" in text
    for ref in ("git --version", "git-memex --version (start-up floor)", "pure-Python loop"):
        assert f"- {ref}" in text, ref
    assert (tmp_path / "prompt_hook.json").exists()


@pytest.mark.slow
def test_speed_bench_smoke_reports_every_figure_against_its_floor(tmp_path: Path) -> None:
    """`python -m bench.speed` (docs/speed.md, issue 34) cannot rot: every figure once at 200
    memories (100 and 200 for the import's growth), each beside its floor, the machine named; no
    ../shared needed (bench/org.py's built-in generator stands in)."""
    out = tmp_path / "speed.md"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "bench.speed", "--smoke", "--out", str(out)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    assert "**Machine:** host " in text and "CPU " in text
    for row in ("`import` of 100 memories", "`import` of 200 memories", "`import` growth 100 → 200",
                "`git memex search WORD`", "prompt hook `capture --hook claude`", "`git pull` of 100 new memories",
                "`git commit` of one memory", "cold `reindex --full`", "MCP `memory_search` p50"):
        assert sum(line.startswith(f"| {row}") for line in text.splitlines()) == 1, row
    raw = json.loads((tmp_path / "speed.md.json").read_text(encoding="utf-8"))
    assert raw["git"]["pull"]["last_pull_indexed"] is True  # the hook indexed what the last pull brought


def test_output_guard_bench_reports_every_text() -> None:
    """`python -m bench.output_guard` (docs/security.md, row 3b) cannot rot: one row per text, each
    with both figures and their ratio."""
    from bench.output_guard import TEXTS

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "bench.output_guard"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = [line for line in r.stdout.splitlines() if line.startswith("| ") and line.split(" | ")[0][2:] in TEXTS]
    assert len(rows) == len(TEXTS), r.stdout
    assert all(float(cell) > 0 for row in rows for cell in row.strip(" |").split(" | ")[1:]), r.stdout
