"""The admission memo (`secrets.admission._CLEAN`) changes how often the detector runs, never what
an admission masks: every field of every admission is masked exactly as without it.

Real detector, the labelled corpus (tests/data/secret_corpus.json), real memories through
`admit` and `core.files.file_text` (the backstop of every write path)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memex.core import model
from git_memex.core.files import file_text
from git_memex.secrets import admission, redact
from git_memex.secrets.admission import admit, known_clean, mask_text

CORPUS = json.loads((Path(__file__).resolve().parents[1] / "data" / "secret_corpus.json").read_text("utf-8"))
TEXTS = [c["text"] for c in CORPUS["positives"] + CORPUS["negatives"]]
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def fresh() -> None:
    admission._CLEAN.clear()
    admission._CLEAN_CHARS[0] = 0


def test_masking_with_a_warm_memo_is_masking_without_one() -> None:
    fresh()
    cold = [mask_text(t) for t in TEXTS]
    warm = [mask_text(t) for t in TEXTS]  # every text, and every masked text, is now remembered
    again = [mask_text(t) for t in cold]
    fresh()
    assert warm == cold and again == cold
    assert again == [mask_text(t) for t in cold]  # the masked texts were fixpoints: the memo told the truth


def test_only_what_the_detector_passed_or_made_is_remembered() -> None:
    fresh()
    text = f"deploy with token {SECRET} from the vault"
    masked = mask_text(text)
    assert masked != text and SECRET not in masked
    assert not known_clean(text) and known_clean(masked)
    assert not known_clean(text.replace("vault", "safe"))  # a text one word apart is scanned again
    assert not known_clean(masked, ["vault"])  # a clean verdict holds for the patterns it was made with


def test_a_memory_admitted_with_team_patterns_is_still_masked_by_the_backstop(tmp_path: Path) -> None:
    """The write path admits with the team's patterns; the backstop in `file_text` (no patterns)
    scans again what it was not told is clean, and masks a secret a path forgot."""
    fresh()
    m = model.create("the staging box is zebra-7731", scope="personal", tags=["ops"])
    assert admit(m, [r"zebra-\d+"]) == ("zebra-\\d+",)
    assert "zebra-7731" not in m.body
    forgot = model.create("the relay reads its token from env", scope="personal", tags=["ops"])
    forgot.fm["title"] = f"token {SECRET}"  # a field no write path masked
    text = file_text(forgot, tmp_path / f"{forgot.id}.md")
    assert SECRET not in text and "ghp_xxxx" in text


def test_each_string_is_scanned_once_between_the_write_path_and_the_backstop(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    fresh()
    calls: list[str] = []
    real = redact.find_secrets
    def counted(text: str, *a: object, **k: object) -> list[redact.Finding]:
        calls.append(text)
        return real(text, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(redact, "find_secrets", counted)
    m = model.create("the osprey relay restarts nightly", scope="personal", tags=["relay", "osprey"])
    m.fm["title"] = "osprey relay schedule"
    admit(m)
    first = len(calls)
    file_text(m, tmp_path / f"{m.id}.md")
    assert len(calls) == first  # the backstop found every string in the memo
    assert len(calls) == len(set(calls))  # each string once: the body, the values, the keys (a key can be a token)
    assert {"the osprey relay restarts nightly", "osprey relay schedule", "relay", "osprey", "title"} <= set(calls)


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh()
    monkeypatch.setattr(admission, "CLEAN_MEMO_CHARS", 400)
    for i in range(40):
        mask_text(f"a harmless note number {i} about the heron feeder")
    assert admission._CLEAN_CHARS[0] <= 400
    assert sum(len(s) for held in admission._CLEAN.values() for s in held) == admission._CLEAN_CHARS[0]
