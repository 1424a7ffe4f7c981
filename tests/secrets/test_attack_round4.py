"""The outside attack's fourth round (issue 31), on the third round's rules: the cost of masking
a body secret's copies in every field, secrets main masked that the third round's rules left
raw, tags masked after they were lower-cased, and letters-only values copied into paths. Each
family through `redact` or `admit`, and through `git memex add` in a child process. Every secret
here is written for this file (FAKE)."""

from __future__ import annotations

import random
from pathlib import Path

from git_memex.core import model

from conftest import grows_linearly

_ALNUM = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def _stored(isolated_env: Path, mid: str) -> str:
    return "\n".join(p.read_text("utf-8") for p in (isolated_env / "data").rglob(f"{mid}*.md"))


# ------------------------------------------------------------------ P1: copies in many fields

def _memory(n: int) -> model.Memory:
    """A body of n ``password: <14 alnum>`` lines and n tags: n fields against n values."""
    rnd = random.Random(n)
    values = ["".join(rnd.choice(_ALNUM) for _ in range(13)) + "7" for _ in range(n)]
    body = "".join(f"password: {v}\n" for v in values)
    tags = [f"topic-{i}" for i in range(n - 1)] + [values[0].lower()]
    return model.create(body, scope="project", review_state="proposed", tags=tags)


def test_copies_in_many_fields_cost_linear_time() -> None:
    """`admit` builds the search for the found values once for all the fields (`redact.CopyMask`):
    one build per string cost fields x values (1,000 tags and 2,559 values: 21 s)."""
    from git_memex.secrets.admission import admit

    m = _memory(50)
    admit(m)
    assert m.fm["tags"][-1] == "x" * 14 and m.fm["tags"][0] == "topic-0"
    ok, small, big = grows_linearly(lambda n: admit(_memory(n)), 800)
    assert ok, f"{big:.2f} s for 800 fields and values, {small:.2f} s for 200"
