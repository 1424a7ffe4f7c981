"""Edit a JSON text in place: only the members and items that change are touched, so a file a
person formatted by hand keeps its layout, and a member added and then removed gives back the
same bytes (`init --client` and `init --uninstall`, docs/agents.md).

`rewrite(text, new)` turns `text` into a JSON text whose value is `new`, one small edit at a time:
a member missing from `new` is cut out with its comma, a new one is appended after the last
member (in the file's own layout: the separator and indentation of its neighbours), an item
appended to or removed from an array likewise, and a value that differs otherwise is replaced.
The result is parsed again and must equal `new` exactly (types too), or `rewrite` returns None
and the caller writes the whole document in its own layout. A text whose line breaks are all CRLF
is edited as LF and given back CRLF (every line break of a JSON text is whitespace between tokens),
so what is added has the file's line ending too.
"""

from __future__ import annotations

import json
import json.decoder
import re
from typing import Any

from git_memex.core.record import field, record

scanstring = json.decoder.scanstring  # type: ignore[attr-defined]  # the decoder's own string reader
_WS = re.compile(r"[ \t\r\n]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")


@record
class Node:
    kind: str  # object | array | scalar
    start: int
    end: int
    value: Any
    keys: list[str] = field(default_factory=list)  # object: member names, in order
    key_starts: list[int] = field(default_factory=list)  # object: where each member's name begins
    key_ends: list[int] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)  # member values, or array items


class _Bad(ValueError):
    pass


def _skip(text: str, i: int) -> int:
    m = _WS.match(text, i)
    return m.end() if m else i


def _parse(text: str, i: int, depth: int = 0) -> Node:
    if depth > 200:
        raise _Bad("too deep")
    i = _skip(text, i)
    if i >= len(text):
        raise _Bad("end of text")
    c = text[i]
    if c == "{":
        node = Node("object", i, i, {})
        j = _skip(text, i + 1)
        if j < len(text) and text[j] == "}":
            node.end = j + 1
            return node
        while True:
            j = _skip(text, j)
            if j >= len(text) or text[j] != '"':
                raise _Bad("a name")
            key, k = scanstring(text, j + 1)
            k = _skip(text, k)
            if k >= len(text) or text[k] != ":":
                raise _Bad("a colon")
            child = _parse(text, k + 1, depth + 1)
            node.keys.append(key)
            node.key_starts.append(j)
            node.key_ends.append(k)
            node.children.append(child)
            node.value[key] = child.value
            j = _skip(text, child.end)
            if j < len(text) and text[j] == ",":
                j += 1
                continue
            if j < len(text) and text[j] == "}":
                node.end = j + 1
                return node
            raise _Bad("a comma or a brace")
    if c == "[":
        node = Node("array", i, i, [])
        j = _skip(text, i + 1)
        if j < len(text) and text[j] == "]":
            node.end = j + 1
            return node
        while True:
            child = _parse(text, j, depth + 1)
            node.children.append(child)
            node.value.append(child.value)
            j = _skip(text, child.end)
            if j < len(text) and text[j] == ",":
                j += 1
                continue
            if j < len(text) and text[j] == "]":
                node.end = j + 1
                return node
            raise _Bad("a comma or a bracket")
    if c == '"':
        s, k = scanstring(text, i + 1)
        return Node("scalar", i, k, s)
    for word, value in (("true", True), ("false", False), ("null", None)):
        if text.startswith(word, i):
            return Node("scalar", i, i + len(word), value)
    m = _NUMBER.match(text, i)
    if not m:
        raise _Bad("a value")
    return Node("scalar", i, m.end(), json.loads(m.group()))


def parse(text: str) -> Node:
    node = _parse(text, 0)
    if _skip(text, node.end) != len(text):
        raise _Bad("text after the value")
    return node


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values, types included (1, 1.0 and true are three values)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _line_indent(text: str, i: int) -> str:
    start = text.rfind("\n", 0, i) + 1
    m = re.match(r"[ \t]*", text[start:i])
    return m.group() if m else ""


def _unit(text: str) -> str:
    m = re.search(r"\n([ \t]+)\S", text)
    return m.group(1) if m else "  "


def _render(value: Any, indent: str, unit: str, multiline: bool) -> str:
    if not multiline:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, indent=unit).replace("\n", "\n" + indent)


def _item_starts(node: Node) -> list[int]:
    return node.key_starts if node.kind == "object" else [c.start for c in node.children]


def _append(text: str, node: Node, key: str | None, value: Any) -> str:
    """A member (key) or an item (key None) added at the end of `node`, laid out like its siblings."""
    starts = _item_starts(node)
    unit = _unit(text)
    if node.children:
        last = node.children[-1]
        if len(starts) >= 2:
            sep = text[node.children[-2].end:starts[-1]]
            sep = sep[sep.index(",") + 1:] if "," in sep else sep
        else:
            sep = text[node.start + 1:starts[0]]
        colon = text[node.key_ends[-1]:last.start] if key is not None else ""
        multiline = "\n" in sep
        indent = sep.rsplit("\n", 1)[-1] if multiline else ""
        closing = _line_indent(text, node.end - 1)
        inner_unit = indent[len(closing):] if multiline and indent.startswith(closing) and len(indent) > len(closing) else unit
        head = "" if key is None else json.dumps(key, ensure_ascii=False) + colon
        piece = "," + sep + head + _render(value, indent, inner_unit, multiline)
        return text[:last.end] + piece + text[last.end:]
    own = _line_indent(text, node.start)
    indent = own + unit
    head = "" if key is None else json.dumps(key, ensure_ascii=False) + ": "
    inner = "\n" + indent + head + _render(value, indent, unit, True) + "\n" + own
    return text[:node.start + 1] + inner + text[node.end - 1:]


def _remove(text: str, node: Node, index: int) -> str:
    starts = _item_starts(node)
    n = len(node.children)
    if n == 1:
        return text[:node.start + 1] + text[node.end - 1:]
    if index == n - 1:  # the last one: from the end of the one before it
        return text[:node.children[index - 1].end] + text[node.children[index].end:]
    return text[:starts[index]] + text[starts[index + 1]:]


def _replace(text: str, node: Node, value: Any) -> str:
    indent = _line_indent(text, node.start)
    multiline = "\n" in text[node.start:node.end] or (node.kind != "scalar" and "\n" in text)
    return text[:node.start] + _render(value, indent, _unit(text), multiline) + text[node.end:]


def _step(text: str, node: Node, new: Any) -> str | None:
    """`text` with the first difference between `node` and `new` mended, or None when none is left."""
    if node.kind == "object" and isinstance(new, dict):
        for i, key in enumerate(node.keys):
            if key not in new or node.keys.count(key) > 1:
                return _remove(text, node, i)
        for key in new:
            if key not in node.value:
                return _append(text, node, key, new[key])
        for key, child in zip(node.keys, node.children, strict=True):
            out = _step(text, child, new[key])
            if out is not None:
                return out
        return None
    if node.kind == "array" and isinstance(new, list):
        old = node.value
        if len(new) > len(old) and all(same(a, b) for a, b in zip(old, new, strict=False)):
            return _append(text, node, None, new[len(old)])
        if len(new) < len(old):
            i = next((k for k in range(len(new)) if not same(old[k], new[k])), len(new))
            return _remove(text, node, i)
        for child, value in zip(node.children, new, strict=True):
            out = _step(text, child, value)
            if out is not None:
                return out
        return None
    if same(node.value, new):
        return None
    return _replace(text, node, new)


def rewrite(text: str, new: Any) -> str | None:
    """`text` edited into a JSON text of value `new`, its layout kept; None when that fails."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom):]
    crlf = "\r\n" in body and body.count("\n") == body.count("\r\n")
    if crlf:  # a JSON text's line breaks are all whitespace between tokens: edit in LF, give CRLF back
        body = body.replace("\r\n", "\n")
    try:
        for _ in range(1000):
            out = _step(body, parse(body), new)
            if out is None:
                break
            body = out
        else:
            return None
        if not same(json.loads(body), new):
            return None
    except (ValueError, RecursionError):
        return None
    return bom + (body.replace("\n", "\r\n") if crlf else body)
