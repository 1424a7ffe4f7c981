"""Invisible characters spliced into a token (issue 31, item 4): detection reads a copy without
them, chosen by Unicode category (format characters, combining marks after ASCII, the tag block,
the fillers drawn as nothing), and masks the span as written. Through `add`, `submit`, `scan` and
the pre-commit hook `init` installs, run by a real `git commit`."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from git_memex.secrets.redact import redact

from conftest import commit_memory_files, git, run_cli

TOKEN = "ghp_" + "R8cAZ3kQw9LmN2pX7vB5tY1uJ4hG6fD0sE3a"  # FAKE, built here so no file holds it whole

# 27 characters drawn as nothing, by kind. Before issue 31 the detector removed a list of
# zero-width and bidi characters; the variation selectors, tags, combining marks and the
# braille blank carried a token past every check.
SPLICE = {
    "variation selector U+FE00": "\ufe00", "variation selector U+FE0F": "\ufe0f",
    "variation selector U+E0100": "\U000e0100", "variation selector U+E01EF": "\U000e01ef",
    "tag U+E0041": "\U000e0041", "tag U+E0001": "\U000e0001", "cancel tag U+E007F": "\U000e007f",
    "tag block U+E0000": "\U000e0000", "tag space U+E0020": "\U000e0020",
    "combining acute U+0301": "\u0301", "combining dot U+0307": "\u0307",
    "enclosing keycap U+20E3": "\u20e3", "enclosing millions U+0489": "\u0489",
    "braille blank U+2800": "\u2800", "Hangul filler U+3164": "\u3164",
    "Hangul choseong filler U+115F": "\u115f", "Hangul jungseong filler U+1160": "\u1160",
    "halfwidth Hangul filler U+FFA0": "\uffa0", "zero-width space U+200B": "\u200b",
    "zero-width joiner U+200D": "\u200d", "word joiner U+2060": "\u2060", "BOM U+FEFF": "\ufeff",
    "soft hyphen U+00AD": "\u00ad", "right-to-left override U+202E": "\u202e",
    "left-to-right isolate U+2066": "\u2066", "Mongolian vowel separator U+180E": "\u180e",
    "Arabic letter mark U+061C": "\u061c",
}
# one of each category for the slower paths (submit, one call each)
ONE_OF_EACH = {unicodedata.category(c): name for name, c in SPLICE.items()}


def _spliced(ch: str) -> str:
    return TOKEN[:12] + ch + TOKEN[12:]


def _clean(blob: str) -> bool:
    """No trace of the token: not whole, nor with the spliced characters taken out, nor any
    run of it longer than its documented prefix."""
    seen = "".join(c for c in blob if c.isascii())
    return TOKEN not in seen and TOKEN[4:14] not in seen


def test_there_are_27_of_every_kind() -> None:
    assert len(SPLICE) == 27
    assert {"Cf", "Mn", "Me", "Lo", "So", "Cn"} <= {unicodedata.category(c) for c in SPLICE.values()}


@pytest.mark.parametrize("name", SPLICE)
def test_add_masks_a_token_with_an_invisible_character_inside(ready: Path, isolated_env: Path, name: str) -> None:
    r = run_cli("add", f"the release bot uses {_spliced(SPLICE[name])} for tags", "--json")
    assert r.code == 0, r.err
    assert r.json()["masked"] == ["github-pat"], name
    stored = "\n".join(p.read_text("utf-8") for p in (isolated_env / "data").rglob("*.md"))
    assert "the release bot uses ghp_" in stored
    assert _clean(stored), name


@pytest.mark.parametrize("category", sorted(ONE_OF_EACH))
def test_submit_refuses_a_hand_edited_draft_with_a_spliced_token(ready: Path, isolated_env: Path,
                                                                 category: str) -> None:
    ch = SPLICE[ONE_OF_EACH[category]]
    r = run_cli("add", "deploys need the release token", "--json")
    assert r.code == 0, r.err
    (draft,) = sorted((isolated_env / "data" / "memories" / "outbox").rglob("*.md"))
    draft.write_text(draft.read_text("utf-8").replace("release token", f"release token {_spliced(ch)}"), "utf-8")
    head = git("rev-parse", "HEAD", cwd=ready).stdout
    done = run_cli("submit", r.json()["id"])
    assert done.code == 2 and "github-pat" in done.err, (category, done.err)
    assert _clean(done.out + done.err)
    assert git("rev-parse", "HEAD", cwd=ready).stdout == head


def test_the_hook_and_scan_refuse_every_spliced_token(ready: Path) -> None:
    """One memory file per character, committed by a real `git commit` under the installed hook:
    refused, every file named, the token never printed; `git memex scan` names them all too."""
    done, paths = commit_memory_files(ready, {name: f"CI pushes with {_spliced(ch)} ({name})"
                                              for name, ch in SPLICE.items()})
    assert done.returncode == 1
    said = done.stdout + done.stderr
    missed = [name for name, path in paths.items() if f"{path}:" not in said]
    assert not missed, said
    assert _clean(said)
    scan = run_cli("scan")
    assert scan.code != 0
    assert all(f"{path}:" in scan.out + scan.err for path in paths.values())
    assert _clean(scan.out + scan.err)


def test_the_original_span_is_masked_and_marks_of_other_scripts_stay() -> None:
    text = f"key {_spliced(chr(0x301))} ok"
    out = redact(text).text
    assert out == "key ghp_" + "x" * (len(TOKEN) + 1 - 4) + " ok"  # the mark is part of the span
    # combining marks that spell another script's words are read, not removed: the labels match
    for label in ("पासवर्ड", "รหัสผ่าน"):
        assert redact(f"{label}: Qw7!mZ92a").text == f"{label}: " + "x" * 9, label
    assert redact("café crème, naïve résumé").text == "café crème, naïve résumé"


# Control characters (category Cc) but tab, line feed and carriage return (issue 31, F5): before,
# a token with one inside was stored whole, and a password was masked only up to it.
CONTROLS = {"NUL": "\x00", "SOH": "\x01", "BEL": "\x07", "BS": "\x08", "VT": "\x0b", "FF": "\x0c",
            "ESC": "\x1b", "US": "\x1f", "DEL": "\x7f", "PAD U+0080": "\x80", "NEL U+0085": "\x85",
            "APC U+009F": "\x9f"}


def test_every_control_character_is_there() -> None:
    assert {unicodedata.category(c) for c in CONTROLS.values()} == {"Cc"}


@pytest.mark.parametrize("name", CONTROLS)
def test_a_control_character_inside_a_secret_hides_no_part_of_it(name: str) -> None:
    ch = CONTROLS[name]
    token = _spliced(ch)
    assert redact(f"the bot uses {token} now").text == "the bot uses ghp_" + "x" * (len(token) - 4) + " now"
    password = f"Zx8!qW3eR{ch}pZx9"
    assert redact(f"DB_PASSWORD={password}\n").text == "DB_PASSWORD=" + "x" * len(password) + "\n"
    assert redact(f"é {token}").text == "é ghp_" + "x" * (len(token) - 4)  # the non-ASCII path too


def test_line_feed_and_carriage_return_still_end_a_value() -> None:
    """They are kept in the detection copy: a value ends at the line's end as before."""
    assert redact("password=Zx8!qW3eRpZx9\nnext").text == "password=" + "x" * 13 + "\nnext"
    assert redact("password=Zx8!qW3eRpZx9\r\nnext").text == "password=" + "x" * 13 + "\r\nnext"


def test_the_hook_refuses_a_token_with_a_control_character_inside(ready: Path) -> None:
    """Each control character in its own memory file, committed by a real `git commit` under the
    installed hook: refused, every file named, the token never printed."""
    done, paths = commit_memory_files(ready, {name: f"CI pushes with {_spliced(ch)} ({name})"
                                              for name, ch in CONTROLS.items()})
    assert done.returncode == 1
    said = done.stdout + done.stderr
    missed = [name for name, path in paths.items() if f"{path}:" not in said]
    assert not missed, said
    assert "github-pat" in said
    assert _clean(said)
