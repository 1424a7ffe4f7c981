"""The secret detector runs in linear time by construction (issue 31, item 1): every pattern that
reads memory text runs on RE2, and the sweep of adversarial inputs (tests/secrets/linear_sweep.py)
finds no case that grows faster than its input.

No wall-clock assertion: a case passes when it grows like its own run at a quarter of the size
(`conftest.grows_linearly`), and the child processes' timeouts only guard against a hang.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memex.secrets.dsplugins import DsRegex
from git_memex.secrets.rx import PatternError, Rx, to_re2

from conftest import git, run_cli

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import linear_sweep  # noqa: E402

# The input that hung `add` and the pre-commit hook: Python's re backtracked exponentially in
# `_REF_SEGMENT` (assignments.py) on a dotted reference whose last segment almost matched.
HANG = 'google_secret: "ya29.' + "a" * 36 + '_aV"'


def _rx_patterns() -> list[tuple[str, Rx]]:
    return [(n, p) for n, p in linear_sweep.patterns() if isinstance(p, Rx)]


def test_every_secrets_pattern_runs_on_re2() -> None:
    """Every pattern of git_memex.secrets (and of secrets.formats, when present) is an Rx that
    compiles on RE2; detect-secrets' patterns too, rewritten by `dsplugins.re2_form`."""
    found = linear_sweep.patterns()
    in_secrets = [(n, p) for n, p in found if n.startswith(("git_memex.secrets", "dsplugins"))]
    assert len(in_secrets) > 100
    for name, p in in_secrets:
        assert isinstance(p, Rx | DsRegex), name
        if isinstance(p, Rx):
            p.compile()
        else:
            assert p._rx is not None, f"{name} fell back to Python's re: {p.pattern[:80]}"


def test_look_arounds_and_back_references_are_refused() -> None:
    for bad in (r"(?<![a-z])x", r"x(?=y)", r"x(?!y)", r"(?<=a)x", r"(?P<q>')x(?P=q)"):
        with pytest.raises(PatternError):
            Rx(bad).compile()
    assert to_re2(r"[\w.-]+\s\S\Z").endswith(r".-]+[\t-\r\x1c-\x20][^\t-\r\x1c-\x20]\z")
    word = Rx(r"\w+")
    for w in ("ab_9", "naïve", "пароль", "密码", "パスワード"):
        assert word.fullmatch(w) is not None, w
    for not_word in ("“", "—", "、", " ", "-", "«"):
        assert word.search(not_word) is None, not_word


def _python_spans(rx: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    """What `Rx.finditer` does, with Python's re: the match is group `_0` (or the `_0__N` that
    took part), and the next search starts at its end (the context after it is read again)."""
    out: list[tuple[int, int]] = []
    pos = 0
    while pos <= len(text) and (m := rx.search(text, pos)) is not None:
        zero = [g for g in m.groupdict() if g == "_0" or g.startswith("_0__")]
        live = [g for g in zero if m.start(g) >= 0]
        s, e = m.span(live[0]) if live else m.span()
        out.append((s, e))
        pos = e if e > s else e + 1
    return out


_EQUIVALENCE = [(n, p) for n, p in _rx_patterns() if not p.raw]


@pytest.mark.parametrize("name,p", _EQUIVALENCE, ids=[n.rsplit(".", 1)[-1] for n, _ in _EQUIVALENCE])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_re2_finds_what_python_re_finds(name: str, p: Rx, data: st.DataObject) -> None:
    """Each pattern as RE2 runs it (before/after context, alias groups) finds the same matches
    as the same pattern with look-arounds under Python's re, on ASCII texts made of its own
    pieces (RE2's \\b and \\d are ASCII; on ASCII the two engines agree)."""
    lits, probes = linear_sweep.pieces(p.python)
    alphabet = [c for c in probes if c.isascii()] + list(" \n:=\"'-_aZ09")
    part = st.one_of(st.sampled_from(lits or ["a"]), st.text(st.sampled_from(alphabet), max_size=12))
    text = "".join(data.draw(st.lists(part, max_size=12)))
    python = re.compile(p.python)
    assert [m.span() for m in p.finditer(text)] == _python_spans(python, text), (name, text)


def test_search_from_a_position_reads_the_character_before_it() -> None:
    """`before` is a look-behind: a search from `pos` sees the character at `pos - 1`."""
    rx = Rx(r"ghp_[A-Za-z0-9]{4}", before="[^A-Za-z0-9_]")
    assert rx.search("xghp_abcd", 1) is None
    assert (m := rx.search(" ghp_abcd", 1)) is not None and m.span() == (1, 9)
    assert [m.span() for m in rx.finditer("ghp_abcd ghp_efgh_ghp_ijkl")] == [(0, 8), (9, 17)]
    text = "é " * 3 + "ghp_abcd"  # offsets in characters, not UTF-8 bytes
    assert (m := rx.search(text)) is not None and m.span() == (6, 14)


def test_a_search_from_inside_a_text_compiles_one_pattern() -> None:
    """RE2's `^` never matches at a search's start past the text's first character, so the
    pattern with its `(?:^|before)` reads the character before `pos` itself: a second form
    (without `^`) is compiled only for a search from the second character, where `^` could
    match (a hook pays each compile: ~0.5-2 ms for a pattern with Unicode classes)."""
    rx = Rx(r"ghp_[A-Za-z0-9]{4}", before="[^A-Za-z0-9_]", flags=re.M)
    text = "a\nghp_abcd xghp_efgh ghp_ijkl\nghp_mnop"
    assert [m.span() for m in rx.finditer(text)] == [(2, 10), (21, 29), (30, 38)]
    assert (m := rx.search(text, 3)) is not None and m.span() == (21, 29)
    assert rx.search(text, 31) is None and (m := rx.search(text, 30)) is not None and m.span() == (30, 38)
    assert rx._shifted is None  # one compiled pattern answered every search
    assert rx.search("xghp_abcd", 1) is None and (m := rx.search(" ghp_abcd", 1)) is not None and m.span() == (1, 9)
    assert rx._shifted is not None


@pytest.mark.slow
def test_no_builtin_pattern_grows_faster_than_its_input() -> None:
    """Every built-in pattern (found in the modules, not listed) on long runs of each character
    class it uses, runs ended by another class, its literals followed by runs, near-miss repeats
    and its literals one after another: each case grows like its own quarter-size run."""
    done = subprocess.run([sys.executable, str(HERE / "linear_sweep.py")], capture_output=True,
                          text=True, timeout=1800)  # a hang guard only
    assert done.returncode == 0, done.stderr[-2000:]
    records = [json.loads(line) for line in done.stdout.splitlines()]
    summary = records[-1]
    assert summary.get("summary") and summary["patterns"] > 150 and summary["cases"] > 10000, summary
    slow = records[:-1]
    assert not slow, "\n".join(json.dumps(r, ensure_ascii=False) for r in slow[:20])


def _timed(cmd: list[str], cwd: Path, timeout: float | None = None) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return time.perf_counter() - t, done


def test_the_input_that_hung_add_is_masked_like_any_other(ready: Path) -> None:
    """`git memex add` of the line that never returned finishes within a few times a plain
    `add` of a text as long, measured just before (the timeout guards the hang, it asserts no
    speed), and masks the token."""
    cmd = [sys.executable, "-m", "git_memex", "add", "--json"]
    plain, done = _timed([*cmd, "a plain note of the same length: " + "b" * (len(HANG) - 33)], ready)
    assert done.returncode == 0, done.stderr
    _took, done = _timed([*cmd, HANG], ready, timeout=max(20 * plain, 5 * plain + 10))
    assert done.returncode == 0, done.stderr
    assert "ya29." + "a" * 10 not in json.dumps(json.loads(done.stdout))
    assert json.loads(done.stdout)["masked"]


def test_the_input_that_hung_the_hook_is_refused_like_any_other(ready: Path) -> None:
    """The pre-commit hook `init` installed, run by a real `git commit` of a hand-written memory
    file holding the line, refuses it within a few times a commit of a plain file."""
    from git_memex.core import frontmatter, model

    folder = ready / ".ai" / "open-memex"
    folder.mkdir(parents=True, exist_ok=True)

    def write(body: str) -> None:
        m = model.create(body, scope="project", review_state="proposed")
        (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body), "utf-8")
        git("add", "-A", cwd=ready)

    write("a plain note: " + "b" * (len(HANG) - 14))
    plain, done = _timed(["git", "commit", "-qm", "plain"], ready)
    assert done.returncode == 0, done.stderr
    write(HANG)
    _took, done = _timed(["git", "commit", "-qm", "token"], ready, timeout=max(20 * plain, 5 * plain + 10))
    assert done.returncode != 0
    assert ".md:" in done.stderr and "commit refused" in done.stderr
    assert "aaaaaaaaaa" not in done.stderr + done.stdout
    assert run_cli("scan").code != 0
