"""Keyword-triggered capture: find "remember …" / "记住…" memories in a user's message.

Pure and dependency-free so the per-prompt hook stays cheap. Callers pass only USER text:
an assistant saying "remember that …" must never become a memory.

Routing follows D18: "我" (me) → personal, "我们" (we) → the current project. English
``remember …`` is project; ``remember for me …`` is personal. Personal patterns are tried first
and *claim* the line: once one matches, no other pattern sees that line, even if its body is
rejected. Otherwise ``记住我：OK`` would fall through to the generic ``记住`` and save ``我：OK``
to the project.

The memory is the statement the trigger introduces, not the rest of the line: it ends with its
sentence or where a clause turns to a new request (`first_statement`), so "remember that we use
pnpm. Also … Now fix the failing test" keeps "we use pnpm.".

Every pattern is anchored at the start of a line (after optional whitespace, a list bullet and
a polite lead-in such as "please" or 请). A trigger word in the middle of a sentence is narration
("I can't remember that …"), not an instruction.
"""

from __future__ import annotations

import re

from git_memex.core.record import record

__all__ = ["MAX_CAPTURE_CHARS", "MIN_CAPTURE_CHARS", "CaptureHit", "CaptureScan", "scan"]

MIN_CAPTURE_CHARS = 3
MAX_CAPTURE_CHARS = 2000

PERSONAL = "personal"
PROJECT = "project"


@record(frozen=True)
class CaptureHit:
    """One memory found in one line of the user's message."""

    body: str
    scope: str  # "personal" | "project"
    trigger: str  # the pattern name that fired, e.g. "remember", "til", "zh-jizhu"
    line: str  # the source line


@record(frozen=True)
class CaptureScan:
    """Result of a scan. Rejected bodies are reported so a capture never vanishes silently."""

    hits: tuple[CaptureHit, ...]
    dropped: tuple[str, ...]  # lines whose trigger fired but whose body was too short/long


# --- pattern pieces ---------------------------------------------------------------------------
# Start of line: optional indentation and a Markdown-style bullet, so "- remember that …" in a
# list still counts.
_START = r"^\s*+(?:[-*•]\s++)?"
# Polite English lead-ins that do not change the meaning ("Please note that …", "OK, TIL: …").
_LEAD_EN = _START + r"(?:(?:please|pls|plz|also|and|btw|ok|okay|oh|hey)\b[\s,，]*)*"
_LEAD_ZH = _START + r"请?"
# An English keyword must be followed by a separator, or end the line (give or take a full
# stop), so "remembered" and "notes" never fire. The separator itself is consumed.
_EOL = r"[.。!！]*\s*$"
_SEP_EN = r"(?:\s*[:：,，]\s*|\s+|(?=" + _EOL + r"))"
# Chinese needs no separator ("记住这个配置"); any that is present is consumed.
_SEP_ZH = r"(?:[:：,，]|\s)*"
# Same, but at least one punctuation mark is required: for triggers whose bare form is
# narration or an editor request ("别忘了带伞", "保存一下这个文件").
_SEP_ZH_REQUIRED = r"\s*[:：,，]" + _SEP_ZH
# An optional "that"/"to" after the keyword. The look-ahead keeps "to" from eating the start of
# "Toronto" and "that" from eating "that's"; "Remember that." has an empty body and is dropped.
_FOLLOWS = r"(?=[\s:：,，]|" + _EOL + r")"
_THAT = r"(?:\s+that" + _FOLLOWS + r")?"
_THAT_TO = r"(?:\s+(?:that|to)" + _FOLLOWS + r")?"
# The "write it down" verb after 帮我/替我/帮我们. Complete verb phrases need no separator
# ("帮我记一下这个配置"); a bare 记/记录 needs one ("帮我记：…"), so 记得/记着 (keep in mind,
# narration) never fire.
_VERB_ZH = (
    r"(?:记(?:住|一下|录一下|下来?)(?![了吗没着得来])"
    + _SEP_ZH
    + r"|记录?"
    + _SEP_ZH_REQUIRED
    + r")"
)
_BODY = r"(?P<body>.*)"


def _statement(verb: str) -> str:
    """Opinion/decision verbs belong to the statement ("我喜欢用 tabs"), so the body keeps the
    verb, but the length floor applies to what follows it: a bare "我们决定" is dropped."""
    return _START + r"(?P<body>" + verb + _SEP_ZH + r"(?P<payload>.*))"


# (trigger name, scope, literal, regex, case-insensitive). Order matters: the first match claims
# the line, and every personal pattern comes before every project pattern. ``literal`` must occur
# in the lower-cased line for the regex to have any chance; it lets scan() skip (and never
# compile) the patterns that cannot match.
_RULE_SOURCES: tuple[tuple[str, str, str, str, bool], ...] = (
    # --- personal ---
    (
        "remember-for-me",
        PERSONAL,
        "remember",
        _LEAD_EN + r"remember\s+for\s+me" + _THAT + _SEP_EN,
        True,
    ),
    (
        "help-me-remember",
        PERSONAL,
        "remember",
        _LEAD_EN + r"help\s+me\s+remember" + _THAT + _SEP_EN,
        True,
    ),
    ("note-to-self", PERSONAL, "note", _LEAD_EN + r"note\s+to\s+self" + _SEP_EN, True),
    ("zh-personal-tag", PERSONAL, "个人", _LEAD_ZH + r"记住[（(]个人[）)]" + _SEP_ZH, False),
    # 记住我：… marks the scope, so 我 and the separator are dropped. 记住我不喜欢… has 我 as the
    # subject of the memory, so the body keeps it. (?!们): 记住我们… is project.
    (
        "zh-personal-wo",
        PERSONAL,
        "记住我",
        _LEAD_ZH + r"记住(?:我(?:[:：,，]|\s)+|(?=我(?!们)))",
        False,
    ),
    ("zh-personal-ti", PERSONAL, "替我", _LEAD_ZH + r"替我(?!们)" + _VERB_ZH, False),
    ("zh-personal-bang", PERSONAL, "帮我", _LEAD_ZH + r"帮我(?!们)" + _VERB_ZH, False),
    ("zh-personal-juede", PERSONAL, "我觉得", _statement("我觉得"), False),
    ("zh-personal-xihuan", PERSONAL, "我喜欢", _statement("我喜欢"), False),
    # --- project ---
    ("zh-women-renwei", PROJECT, "我们认为", _statement("我们认为"), False),
    ("zh-women-jueding", PROJECT, "我们决定", _statement("我们决定"), False),
    ("zh-bang-women", PROJECT, "我们记", _LEAD_ZH + r"[帮替]我们" + _VERB_ZH, False),
    # 记住了 / 记住吗 / 记住没 are replies and questions, not instructions.
    ("zh-jizhu", PROJECT, "记住", _LEAD_ZH + r"记住(?![了吗没啦])" + _SEP_ZH, False),
    ("zh-jiyixia", PROJECT, "记一下", _LEAD_ZH + r"记一下" + _SEP_ZH, False),
    ("zh-jilu", PROJECT, "记录一下", _LEAD_ZH + r"记录一下" + _SEP_ZH, False),
    (
        "zh-biewangle",
        PROJECT,
        "忘",
        _LEAD_ZH + r"(?:别|不要)忘(?:了|记)" + _SEP_ZH_REQUIRED,
        False,
    ),
    ("zh-baocun", PROJECT, "保存一下", _LEAD_ZH + r"保存一下" + _SEP_ZH_REQUIRED, False),
    (
        "remember",
        PROJECT,
        "remember",
        _LEAD_EN + r"(?:help\s+us\s+)?remember" + _THAT_TO + _SEP_EN,
        True,
    ),
    ("note", PROJECT, "note", _LEAD_EN + r"note" + _THAT + _SEP_EN, True),
    # Upper-case TIL, or any case when a colon follows: lower-case "til tomorrow" means "till".
    (
        "til",
        PROJECT,
        "til",
        _LEAD_EN + r"(?:(?-i:TIL)|til(?=\s*[:：]))" + _THAT + _SEP_EN,
        True,
    ),
    (
        "save-this",
        PROJECT,
        "save",
        _LEAD_EN + r"save\s+(?:this|to\s+memory)" + _SEP_ZH_REQUIRED,
        True,
    ),
    ("for-the-record", PROJECT, "record", _LEAD_EN + r"for\s+the\s+record" + _SEP_EN, True),
    # "don't forget the wifi password" is a reminder, so "that" or punctuation is required.
    (
        "dont-forget",
        PROJECT,
        "forget",
        _LEAD_EN
        + r"(?:don['’]?t|do\s+not)\s+forget(?:\s+that"
        + _FOLLOWS
        + _SEP_EN
        + r"|"
        + _SEP_ZH_REQUIRED
        + r")",
        True,
    ),
)

# Compiled lazily, one pattern at a time: compiling all 23 costs ~14 ms (median of 9), more than the
# rest of a hook run, and most messages contain none of the literals.
_compiled: dict[str, re.Pattern[str]] = {}


def _pattern(name: str, src: str, fold: bool) -> re.Pattern[str]:
    """Compile one rule on first use and keep it for the life of the process."""
    rx = _compiled.get(name)
    if rx is None:
        full = src if "(?P<body>" in src else src + _BODY
        rx = _compiled[name] = re.compile(full, re.IGNORECASE if fold else 0)
    return rx


# --- where the statement ends ------------------------------------------------------------------
# A prompt line often goes on after what the trigger introduced ("remember that we use pnpm. Also
# our staging password is …. Now fix the failing test"): the memory is the trigger's own sentence.
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "approx", "incl", "esp", "mr", "mrs", "ms", "dr",
                            "no", "fig", "al", "ca", "resp", "min", "max", "sec", "a.k.a", "w.r.t"})
"""Words that end in a full stop without ending a sentence ("e.g. pnpm")."""
_CLOSERS = "\"'”’)]」』》）"
"""Closing quotes and brackets that belong to the sentence they follow ('run "make test." Then')."""
_CJK_ENDS = "。！？"
_SWITCH = re.compile(r"(?:,|，)\s*(?:and\s+|but\s+)?(?:now|please|next)\b\s*\S|，\s*(?:现在|另外|顺便|接下来|请)",
                     re.IGNORECASE)
"""A clause that turns from the statement to a new request: ", now fix …", ", please run …", "，现在修一下 …".
(", then …" and "，然后…" are left alone: "build first, then run the tests" is one statement.)"""


def first_statement(text: str) -> str:
    """The statement a trigger introduces: `text` up to the end of its first sentence (its
    terminator and closing quotes kept) or up to a clause that turns to a new request, stripped.

    A sentence ends at `.`, `!` or `?` followed by white space (not "e.g." or "v1.2") or glued to
    the next sentence's first word ("…is hunter2.Now fix it", `_glued_sentence`), at an ellipsis
    followed by a capital letter, or at `。！？`. Nothing inside a `code span` ends it. A code block
    (a ``` or ~~~ fence) ends the statement before it; a statement that is a code block ends with
    its closing fence.
    A text that is one statement comes back unchanged (but stripped)."""
    fence = _FENCE.search(text)
    if fence is not None:
        if text[: fence.start()].strip():
            text = text[: fence.start()]  # the statement ends where a code block begins
        else:  # the statement is the code block: it ends with its closing fence
            close = text.find(fence.group(), fence.end())
            return text if close < 0 else text[: close + len(fence.group())].strip()
    n = len(text)
    i = 0
    quoted = False
    while i < n:
        ch = text[i]
        if ch == "`":
            quoted = not quoted
        elif quoted:
            pass
        elif ch in _CJK_ENDS:
            return _close(text, i + 1)
        elif ch in ",，":
            if _SWITCH.match(text, i):
                return text[:i].strip()
        elif ch in ".!?…":
            j = i + 1
            while j < n and text[j] in ".!?…":
                j += 1
            end = j
            while end < n and text[end] in _CLOSERS:
                end += 1
            if end < n and not text[end].isspace():
                if ch != "…" and _glued_sentence(text, i, end):
                    return text[:end].strip()  # "…is hunter2.Now fix the test": a new sentence, no space
                i = j
                continue
            if end >= n:
                i = j
                continue
            rest = text[end:].lstrip()
            if (ch == "…" or text[i:j] == "...") and not (rest[:1].isupper() or _is_cjk(rest[:1])):
                i = j
                continue
            if ch == "." and j == i + 1 and _abbreviation(text, i):
                i = j
                continue
            return text[:end].strip()
        i += 1
    return text.strip()


_FENCE = re.compile(r"`{3,}|~{3,}")
"""A code fence: a code block in a prompt line is not part of the statement before it."""
_GLUED = re.compile(r"[A-Z][a-z]+(?=\s|$)")
"""A capitalised word right after a sentence's full stop, with no space: "…hunter2.Now fix it"."""


def _glued_sentence(text: str, stop: int, after: int) -> bool:
    """Whether the terminator at `stop` ends a sentence though no space follows it: the next
    sentence's first word (a capital and lower-case letters, then a space) is glued to it, and the
    token the terminator ends is no path, URL, address or dotted name ("src/App.Tsx", "x.Foo.Bar")."""
    if _GLUED.match(text, after) is None:
        return False
    start = stop
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    token = text[start:stop]
    return not any(c in token for c in "/\\@:.") and stop > start


def _close(text: str, end: int) -> str:
    while end < len(text) and text[end] in _CLOSERS:
        end += 1
    return text[:end].strip()


def _abbreviation(text: str, dot: int) -> bool:
    """Whether the full stop at `dot` ends an abbreviation or an initial, not a sentence."""
    start = dot
    while start > 0 and (text[start - 1].isalpha() or text[start - 1] == "."):
        start -= 1
    word = text[start:dot].lower()
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def _is_cjk(ch: str) -> bool:
    return bool(ch) and "\u3400" <= ch <= "\u9fff"


def scan(text: str, team: tuple[tuple[str, str], ...] = ()) -> CaptureScan:
    """Find keyword-triggered memories in a user's message, at most one per line; the lines of a
    fenced code block (```` ``` ```` or ``~~~``) are code the user pasted and never trigger.

    ``team`` holds (scope, regex) of the team's own triggers (`memex.capturePattern`,
    `memex.capturePersonalPattern`; docs/team-patterns.md). Team personal patterns are tried
    first, then the built-in personal ones, then team project patterns, then the built-in project
    ones. A team pattern is matched at the start of the line; the body is its group named
    ``body``, else the rest of the line."""
    hits: list[CaptureHit] = []
    dropped: list[str] = []
    personal = [(s, src) for s, src in team if s == PERSONAL]
    project = [(s, src) for s, src in team if s != PERSONAL]
    fence = ""  # the fence of the code block the line is in: its lines are code, never a trigger
    for line in text.splitlines():
        opener = line.lstrip()[:3]
        if fence:
            if opener == fence:
                fence = ""
            continue
        if opener in ("```", "~~~"):
            fence = opener
            continue
        folded = line.lower()
        if _team_match(line, personal, hits, dropped):
            continue
        team_tried = not project
        for name, scope, literal, src, fold in _RULE_SOURCES:
            if scope == PROJECT and not team_tried:
                team_tried = True
                if _team_match(line, project, hits, dropped):
                    break
            if literal not in folded:
                continue
            m = _pattern(name, src, fold).match(line)
            if m is None:
                continue
            body = first_statement(m.group("body"))
            payload = first_statement(m.group("payload")) if "payload" in m.re.groupindex else body
            _keep(hits, dropped, body, payload, scope, name, line)
            break  # the first matching pattern claims the line, hit or not
    return CaptureScan(hits=tuple(hits), dropped=tuple(dropped))


def _keep(hits: list[CaptureHit], dropped: list[str], body: str, payload: str, scope: str, trigger: str,
          line: str) -> None:
    if len(payload) >= MIN_CAPTURE_CHARS and len(body) <= MAX_CAPTURE_CHARS:
        hits.append(CaptureHit(body=body, scope=scope, trigger=trigger, line=line))
    else:
        dropped.append(line)


_TEAM_LINE_MAX = MAX_CAPTURE_CHARS + 1024
"""A longer line cannot give a body short enough, so team patterns never run on it (their cost
is bounded by the line, see core/userregex.py)."""


def _team_match(line: str, rules: list[tuple[str, str]], hits: list[CaptureHit], dropped: list[str]) -> bool:
    """Try the team's rules on one line; True when one claimed it (hit or dropped)."""
    if not rules or len(line) > _TEAM_LINE_MAX:
        return False
    from git_memex.core.userregex import compiled

    for scope, source in rules:
        rx = compiled(source)
        if rx is None:
            continue
        m = rx.match(line)
        if m is None:
            continue
        if "body" in rx.groupindex and m.group("body") is not None:
            body = m.group("body").strip()  # the team said what the body is
        else:
            body = first_statement(line[m.end():].strip().lstrip(":：,，"))
        prefix = "team-personal:" if scope == PERSONAL else "team:"
        _keep(hits, dropped, body, body, scope, prefix + source, line)
        return True
    return False
