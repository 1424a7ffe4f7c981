"""`@record`: the part of `@dataclass` we use, without importing `dataclasses`.

Importing `dataclasses` pulls in `inspect`, `ast`, `dis` and `tokenize`: ~6 ms (median of 15 runs
of `python -X importtime -c 'import dataclasses'`, Python 3.11, 2-core machine), and each
decorated class costs another ~0.4 ms of code generation (median of 40, five fields). Hooks, the merge driver and `search`
start a fresh process per call, so that is paid on every prompt and every git command.

Supported: fields from the class annotations (in order), plain defaults,
``field(default_factory=...)``, ``__init__``/``__repr__``/``__eq__``, ``__match_args__``, and
``frozen=True`` (assignment raises AttributeError; instances are hashable). Not supported, on
purpose: inheritance between records, ``ClassVar`` fields, keyword-only fields, ``__post_init__``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs ~2 ms to import; the capture hook imports this module without it
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform

    T = TypeVar("T")
else:  # the same names at run time, as no-ops, so `typing` is not imported

    def dataclass_transform(**_kwargs: Any) -> Any:
        return lambda func: func

_MISSING: Any = object()


class Field:
    """A field's default, as written in the class body: ``x: list = field(default_factory=list)``."""

    __slots__ = ("default", "default_factory")

    def __init__(
        self, default: Any = _MISSING, default_factory: Callable[[], Any] | Any = _MISSING
    ) -> None:
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("give a default or a default_factory, not both")
        self.default = default
        self.default_factory = default_factory


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] | Any = _MISSING) -> Any:
    return Field(default, default_factory)


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise AttributeError(f"cannot assign to field {name!r} of frozen {type(self).__name__}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise AttributeError(f"cannot delete field {name!r} of frozen {type(self).__name__}")


def _make(cls: type[T], frozen: bool) -> type[T]:
    # The class's own annotations (strings under `from __future__ import annotations`, which every
    # module using this has); `cls.__annotations__` also works where they are built lazily (3.14+).
    annotations = cls.__dict__.get("__annotations__")
    if annotations is None:
        annotations = getattr(cls, "__annotations__", {})
    names = [
        n for n, a in annotations.items() if not str(a).startswith(("ClassVar", "typing.ClassVar"))
    ]
    params: list[str] = []
    body: list[str] = []
    env: dict[str, Any] = {"_MISSING": _MISSING, "_set": object.__setattr__}
    seen_default = False
    for name in names:
        value = cls.__dict__.get(name, _MISSING)
        if isinstance(value, Field):
            if value.default_factory is not _MISSING:
                env[f"_factory_{name}"] = value.default_factory
                params.append(f"{name}=_MISSING")
                expr = f"_factory_{name}() if {name} is _MISSING else {name}"
                delattr(cls, name)
            elif value.default is not _MISSING:
                env[f"_default_{name}"] = value.default
                params.append(f"{name}=_default_{name}")
                expr = name
                setattr(cls, name, value.default)
            else:
                raise TypeError(
                    f"{cls.__name__}.{name}: field() needs a default or a default_factory"
                )
            seen_default = True
        elif value is not _MISSING:
            if isinstance(value, (list, dict, set)):
                raise ValueError(f"{cls.__name__}.{name}: mutable default {type(value).__name__}; "
                                 "use field(default_factory=...)")
            env[f"_default_{name}"] = value
            params.append(f"{name}=_default_{name}")
            expr = name
            seen_default = True
        else:
            if seen_default:
                raise TypeError(
                    f"{cls.__name__}: field {name!r} without a default follows one with a default"
                )
            params.append(name)
            expr = name
        body.append(f"    _set(self, {name!r}, {expr})" if frozen else f"    self.{name} = {expr}")
    src = (
        f"def __init__(self, {', '.join(params)}) -> None:\n"
        + ("\n".join(body) or "    pass")
        + "\n"
    )
    exec(src, env)  # noqa: S102 - the source is built from the class's own field names
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[method-assign]

    fields = tuple(names)

    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in fields)
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in fields)

    cls.__repr__ = __repr__  # type: ignore[method-assign]
    cls.__eq__ = __eq__  # type: ignore[method-assign]
    cls.__match_args__ = fields  # type: ignore[attr-defined, misc]
    cls.__record_fields__ = fields  # type: ignore[attr-defined]
    if frozen:
        cls.__setattr__ = _frozen_setattr  # type: ignore[method-assign]
        cls.__delattr__ = _frozen_delattr  # type: ignore[method-assign]
        cls.__hash__ = lambda self: hash(tuple(getattr(self, n) for n in fields))  # type: ignore[method-assign]
    else:
        cls.__hash__ = None  # type: ignore[assignment]  # mutable and compared by value: unhashable, as with @dataclass
    return cls


@dataclass_transform(field_specifiers=(field,))
def record(cls: type[T] | None = None, /, *, frozen: bool = False) -> Any:
    """Class decorator (type checkers see it as a dataclass transform, PEP 681): ``@record`` or ``@record(frozen=True)``."""
    if cls is None:
        return lambda c: _make(c, frozen)
    return _make(cls, frozen)


def fields(obj: Any) -> tuple[str, ...]:
    """The field names of a record class or instance, in order."""
    return tuple(obj.__record_fields__)


__all__ = ["field", "fields", "record"]
