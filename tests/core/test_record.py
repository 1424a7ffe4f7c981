"""`git_memex.core.record`: the slice of @dataclass the package uses, checked against @dataclass itself."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from git_memex.core.record import field, fields, record


@record
class Mutable:
    name: str
    count: int = 0
    items: list[str] = field(default_factory=list)
    note: str = field(default="n")


@record(frozen=True)
class Frozen:
    a: str
    b: tuple[int, ...] = ()


@dataclasses.dataclass
class MutableDC:
    name: str
    count: int = 0
    items: list[str] = dataclasses.field(default_factory=list)
    note: str = dataclasses.field(default="n")


def test_init_defaults_and_factories_match_dataclass() -> None:
    for args, kwargs in (
        ((), {"name": "x"}),
        (("x", 3), {}),
        (("x",), {"items": ["a"], "note": "z"}),
    ):
        ours, theirs = Mutable(*args, **kwargs), MutableDC(*args, **kwargs)
        assert [getattr(ours, f) for f in fields(ours)] == [
            getattr(theirs, f.name) for f in dataclasses.fields(theirs)
        ]
    one, two = Mutable("a"), Mutable("a")
    one.items.append("x")
    assert two.items == []  # a fresh list per instance, not a shared default
    assert Mutable.note == "n" and "items" not in Mutable.__dict__


def test_repr_eq_and_hash_follow_dataclass_rules() -> None:
    assert repr(Mutable("a", 1)) == "Mutable(name='a', count=1, items=[], note='n')"
    assert Mutable("a") == Mutable("a") and Mutable("a") != Mutable("b")
    assert Mutable("a") != MutableDC("a")  # another class never compares equal
    with pytest.raises(TypeError):
        hash(Mutable("a"))  # mutable and compared by value: unhashable
    assert hash(Frozen("a", (1,))) == hash(Frozen("a", (1,)))
    assert len({Frozen("a"), Frozen("a"), Frozen("b")}) == 2
    match Frozen("a", (1, 2)):
        case Frozen(a, b):
            assert (a, b) == ("a", (1, 2))


def test_frozen_refuses_assignment_and_deletion() -> None:
    f = Frozen("a")
    with pytest.raises(AttributeError):
        f.a = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del f.a
    assert f.a == "a"


def test_bad_declarations_are_refused() -> None:
    with pytest.raises(TypeError):

        @record
        class Bad:
            a: int = 1
            b: int  # type: ignore[misc]  # the mistake under test

    with pytest.raises(ValueError):
        field(default=1, default_factory=list)
    with pytest.raises(ValueError):

        @record
        class Shared:
            items: list[str] = []  # noqa: RUF012 - the mistake under test
    with pytest.raises(TypeError):
        Mutable()  # type: ignore[call-arg]


def test_hot_modules_do_not_import_dataclasses_or_inspect() -> None:
    """The reason the module exists: the command path of search/context/capture stays off them."""
    probe = (
        "import sys; import git_memex.search.engine, git_memex.agents.session, git_memex.agents.capture, git_memex.ops, "
        "git_memex.secrets.redact, git_memex.git.merge; print(sorted(m for m in ('dataclasses', 'inspect') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
