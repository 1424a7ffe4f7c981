"""Detector family 3: values assigned to secret-named keys (`password = …`, `API_KEY: …`).

The name says whether it holds a secret (`_name_kind`); `_plausible_value` then keeps out the
placeholders, references, identifiers and code that such names are also given.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

from git_memex.secrets.masking import (
    REDACTED,
    _has_digit,
    _is_masked,
    _Lazy,
    _lazy,
    _mixed_case,
    stand_in_word,
)
from git_memex.secrets.rx import Match

_PASSWORD_PARTS = frozenset(
    {"password", "passwd", "passphrase", "pwd", "pw", "pass", "contraseña", "contrasena", "passwort"}
)
_SECRET_PARTS = _PASSWORD_PARTS | {
    "secret",
    "secrets",
    "token",
    "apikey",
    "credential",
    "credentials",
}
_KEY_QUALIFIERS = frozenset(
    {
        "api", "access", "private", "priv", "auth", "client", "signing", "encryption", "master",
        "secret", "service", "account", "db", "database", "app", "license", "session", "webhook",
        "hmac",
    }
)
# A trailing part that makes the name describe the secret rather than hold it.
_META_PARTS = frozenset(
    {
        "count", "len", "length", "min", "max", "type", "types", "url", "uri", "endpoint", "file",
        "path", "dir", "name", "names", "id", "ids", "env", "var", "ttl", "expiry", "expires",
        "expiration", "at", "timeout", "limit", "size", "header", "field", "policy", "rotation",
        "scanning", "hint", "enabled", "required", "format", "prefix", "version", "ref", "arn",
        "store", "manager", "provider", "source", "location", "mode", "kind", "used", "budget",
        "strength", "label", "description", "help", "regex", "pattern", "rule", "rules", "scope",
        "scopes", "issuer", "audience", "algorithm", "alg", "lifetime", "age", "error", "errors",
        "message", "prompt", "placeholder", "test", "tests", "check", "validation", "column",
        "rate", "ratio", "through", "thru", "percent", "score", "threshold", "status", "state",
        "result", "results", "level", "strategy", "method", "methods", "flow", "grant", "range",
        "time", "timestamp", "date", "window", "interval", "duration", "period",
    }
)
_NON_SECRET_QUALIFIERS = frozenset(
    {
        "next", "starting", "start", "continuation", "page", "paging", "pagination", "resumption",
        "progress", "action", "sync", "idempotency", "cancellation", "request", "marker", "end",
        "last", "first", "prev", "previous", "backward", "forward", "max", "min", "num", "total",
        "lock", "change",
        # anti-forgery and public values: a CSRF or form token, a public or publishable key
        "csrf", "xsrf", "authenticity", "public", "publishable",
    }
)
# An upper-case run not followed by a lower-case letter (`(?![a-z])`: read after the run, not
# kept in the part), a capitalised or lower-case word, a number.
_CAMEL_PARTS = _lazy(r"(?P<_0__1>[A-Z]+)(?:[^a-z]|\Z)|(?P<_0__2>[A-Z]?[a-zß-öø-ÿ]+)|(?P<_0__3>[0-9]+)")


@functools.lru_cache(maxsize=4096)  # names repeat (every line of an env dump, every config)
def _name_kind(name: str) -> str | None:
    """Classify a key name: "password", "secret", or None when it does not hold a secret."""
    parts = [p.lower() for p in _CAMEL_PARTS.findall(name)]
    if not parts or parts[-1] in _META_PARTS:
        return None
    if any(w in name.lower() for w in ("password", "passwd", "passphrase", "sshpass")):
        return "password"  # PGPASSWORD, DBPASSWORD: glued upper-case names
    kind: str | None = None
    for i, p in enumerate(parts):
        if p == "pass" and (len(parts) == 1 or i != len(parts) - 1):
            continue  # "First pass: …", pass_fds, pass_rate are not passwords; db_pass is
        if p in _PASSWORD_PARTS:
            return "password"
        if i > 0 and (
            parts[i - 1] in _NON_SECRET_QUALIFIERS or (p == "token" and parts[i - 1] == "client")
        ):
            continue  # next_token, page_token, ClientToken (idempotency): protocol values
        if p in _SECRET_PARTS or (p == "key" and i > 0 and parts[i - 1] in _KEY_QUALIFIERS):
            kind = "secret"
    return kind


# A value in the same quotes on both sides (one alternative per quote: RE2 has no
# back-reference; at most `_MAX_VALUE` characters, `_fits`: a counted repeat of a class that holds every
# non-ASCII character is costly to compile), or unquoted: printable ASCII but quotes (not a
# negated class, and outside (?i): case folding adds non-ASCII letters to it).
_MAX_VALUE = 4096  # a JWT or an OAuth refresh token runs to 1-2 KB
_ASSIGN_VALUE = (
    r"(?-i:(?P<q__1>\")(?P<vq__1>[^\n\"'`]+)\"|(?P<q__2>')(?P<vq__2>[^\n\"'`]+)'"
    r"|(?P<q__3>`)(?P<vq__3>[^\n\"'`]+)`"
    r"|(?P<vu>[!#-&(-_a-~]{1,256}))"
)


def _fits(m: Match) -> bool:
    """The quoted value of an `_ASSIGN_VALUE` match is at most `_MAX_VALUE` characters."""
    try:
        vq = m.group("vq")
    except IndexError:  # a pattern without a quoted value (`_XML_ASSIGN`)
        return True
    return vq is None or len(vq) <= _MAX_VALUE
# (An unquoted value that starts with "//" is a URL's rest, not a value: `_assignment_candidates`.)
_ASSIGN = _lazy(
    r"(?P<name>[A-Za-z][A-Za-z0-9_.-]{0,63}|contraseña)[\"']?\]?[ \t]*"
    r"(?P<sep>:::=|::=|:=|=>|\.=|\?=|\+=|=|:|：)[ \t]*" + _ASSIGN_VALUE,
    before="[^A-Za-z0-9_.:]",
)
# Go, Kotlin, Swift, TypeScript, Rust: a type between the name and "=" (`var dbPassword string =`,
# `val apiKey: String =`, `let api_key: &str =`).
_TYPED_ASSIGN = _lazy(
    r"\b(?:var|val|let|const)[ \t]+(?:mut[ \t]+)?(?P<name>[A-Za-z_][A-Za-z0-9_]{0,63})"
    r"(?:[ \t]*:[ \t]*|[ \t]+)&?'?[A-Za-z_][\w.\[\]*<>]{0,40}[ \t]*(?P<sep>=)[ \t]*" + _ASSIGN_VALUE
)
# A secret set by a call: `System.setProperty("X_TOKEN", "…")`, `os.Setenv("DB_PASSWORD", "…")`,
# an HTTP header (`req.Header.Set("X-Api-Key", "…")`, `xhr.setRequestHeader("X-Auth-Token", "…")`),
# `os.environ.setdefault("API_KEY", "…")`, `putenv("X=…")` is `_ASSIGN`'s.
_CALL_ASSIGN = _lazy(
    r"\b(?:setProperty|Setenv|setenv|putenv|setdefault|set_var|SetEnvironmentVariable"
    r"|[Hh]eaders?\.(?:Set|Add|set|add|append)|setRequestHeader|setHeader|addHeader|set_header|add_header)[ \t]*\([ \t]*"
    r"[\"'](?P<name>[A-Za-z][\w.-]{0,63})[\"'][ \t]*,[ \t]*" + _ASSIGN_VALUE
)
# Log lines: "[DEBUG] Using Key=…", "auth: using token … for upload". Only a value that looks
# generated (16 characters or more, letters and digits) counts: "Using Key=default" is a word.
_LOG_ASSIGN = _lazy(
    r"(?i)\b(?:using|with|got|loaded|sending|sent|found|read|generated|created|issued)[ \t]+"
    r"(?:(?:the|a|an|new)[ \t]+)?(?:(?:api|access|secret|auth|session|bearer|private|client)[ _-]?)?"
    r"(?P<name>key|token|secret|password|apikey)[ \t]*(?:[=:][ \t]*|[ \t]+)"
    r"[\"']?(?P<vu>[A-Za-z0-9_\-./+=]{16,256})",
    after=r"[\s\"',;)\]]",  # the whole word: "Key=VmFYK7WG3CkgVmTl:c*X" is not a value of this shape
)
# A literal compared with a secret-named variable, either side (`if (password == "X")`,
# `"X" !== user_secret`), and a test's expectation (`expect(token).toBe("X")`).
_COMPARE = _lazy(
    r"(?P<name__1>[A-Za-z_][\w.]{0,63})[ \t]*(?:===?|!==?)[ \t]*"
    r"(?-i:\"(?P<vq__1>[^\n\"'`]{1,256})\"|'(?P<vq__2>[^\n\"'`]{1,256})')"
    r"|(?-i:\"(?P<vq__3>[^\n\"'`]{1,256})\"|'(?P<vq__4>[^\n\"'`]{1,256})')[ \t]*(?:===?|!==?)[ \t]*"
    r"(?P<name__2>[A-Za-z_][\w.]{0,63})"
    r"|\bexpect\([ \t]*(?P<name__3>[A-Za-z_][\w.]{0,63})[ \t]*\)\.to(?:Be|Equal|StrictEqual)\([ \t]*"
    r"(?-i:\"(?P<vq__5>[^\n\"'`]{1,256})\"|'(?P<vq__6>[^\n\"'`]{1,256})')"
)
# "set `API_KEY` to X" in prose, and .NET-style <add key="Password" value="X" />.
_SET_TO = _lazy(
    r"(?i)\bset[ \t]+[`\"']?(?P<name>[A-Za-z][\w.-]{0,63})[`\"']?[ \t]+(?:to|=)[ \t]+"
    + _ASSIGN_VALUE
)
_KEY_VALUE_ATTR = _lazy(
    r"\b(?:key|name)=[\"'](?P<name>[A-Za-z][\w.:-]{0,63})[\"'][ \t]+value=" + _ASSIGN_VALUE
)
# A bare value that is a call: a name or dotted path written as code names are (a lower-case
# first letter: `getPassword1`, `hashlib.sha256`, `input`), "(", arguments without brackets,
# ")"; or only its head, when the value stopped at a quote (`input("pw")`). `Pa55(word` and
# `Pa55(word)` are no call: a password may hold brackets (issue 31), and is masked.
_CALL_VALUE = _lazy(r"[a-z_][\w.]*\((?:[^()]*\))?")
_BARE_IDENT = _lazy(r"[A-Za-z_]\w*")
_CODE_AFTER = _lazy(r"[ \t]*(?:\||=[^=]|\(|\[)")
# "--password X": values must look strong, since "the --password options" is prose.
_FLAG_ASSIGN = _lazy(r"--(?P<name>[A-Za-z][A-Za-z0-9-]{1,40})[ \t]+" + _ASSIGN_VALUE, before=r"[^\w-]")
# The closing tag must name the opening one: checked in `_assignment_candidates`.
# The value may stand on its own line between the tags, and may be a braced blob with spaces in
# it: Jenkins keeps credentials encrypted as `<secret>{AQAAABAAAA…}</secret>` (`_BRACED`).
_XML_ASSIGN = _lazy(
    r"<(?P<name>[A-Za-z][\w.-]{0,40})>[ \t]*(?:\r?\n[ \t]*)?"
    r"(?P<vu>\{[^<>{}\n]{8,256}\}|[^<>\s]{1,256})[ \t]*(?:\r?\n[ \t]*)?</(?P<close>[A-Za-z][\w.-]{0,40})>"
)
# Prose: "the staging password is Pr0d-S3cret" — only accepted for strong-looking values.
# "pass" counts only before "is"/"was" (`_PASS_IS`, checked on the match).
_IS_ASSIGN = _lazy(
    r"(?i)(?P<name>password|passwd|passphrase|pwd|pw|secret|token|api[ _-]?key|requirepass"
    r"|masterauth|pass)"
    r"s?(?P<link>[ \t]+(?:(?:is|was|has[ \t]+been|will[ \t]+be)[ \t]+)?"
    r"(?:(?:set|changed|rotated|reset|updated)[ \t]+)?(?:to[ \t]+|:[ \t]*|=[ \t]*)?)"
    + _ASSIGN_VALUE,
    before=r"[^\w-]",
)
_PASS_IS = _lazy(r"[ \t]+(?:is|was)\b")
# Where an unquoted value ends before its line does: the next pair of a connection string or a
# query (";Encrypt=false", "&user=x"), or the closing tag around it ("…</jdbc-url>").
# A Dockerfile's `ENV NAME value` (the form without "="), the value one word ending the line
_DOCKER_ENV = _lazy(r"(?m)^[ \t]*ENV[ \t]+(?P<name>[A-Za-z_][A-Za-z0-9_]{0,63})[ \t]+(?P<vu>[^\s\"'=$][^\s\"'$]{0,255})[ \t]*$")
# the next pair of a list: `a=1;b=2`, `a=1&b=2`, and `A=1,B=2` when B is an upper-case variable
# (`DB_PASSWORD=Password123,REDIS_PASSWORD=password1`: each value is its own)
_NEXT_PAIR = _lazy(r"[;&][A-Za-z_][\w.-]{0,63}=|,[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*=|</")
_TOKEN_CHARS = _lazy(r"[A-Za-z0-9_.~+/=:-]+")
# A dash between a label and a quoted value: "stripe token - 'V'", "root password - \"V\"" (a
# list of credentials in a note). Only a quoted value: "api key - rotated monthly" is prose.
_DASH_ASSIGN = _lazy(
    r"(?i)(?P<name>password|passwd|passphrase|pwd|secret|token|api[ _-]?key|key)s?[ \t]+[-–—][ \t]+"
    r"(?-i:\"(?P<vq__1>[^\n\"'`]{1,256})\"|'(?P<vq__2>[^\n\"'`]{1,256})')",
    before=r"[^\w-]",
)
# Prose with the password's target between the label and its value: "the password for prod is
# X", "password for the admin account: X", "the root password on db-03 was changed to X". The
# target is at most 40 characters (bounded: linear); only strong values count (`_strong_prose`).
_FOR_ASSIGN = _lazy(
    r"(?i)(?P<name>password|passwd|passphrase|pwd|pw|secret|token|api[ _-]?key)s?"
    r"[ \t]+(?:for|on|of|at|in)[ \t]+[^\n:=]{1,40}?"
    r"(?P<link>[ \t]*[:=][ \t]*|[ \t]+(?:is|was|has[ \t]+been|will[ \t]+be)[ \t]+"
    r"(?:(?:set|changed|rotated|reset|updated)[ \t]+)?(?:to[ \t]+)?)"
    + _ASSIGN_VALUE,
    before=r"[^\w-]",
)
# Kubernetes / ECS env lists: "- name: DB_PASSWORD" with "value: …" on the next line.
_NAME_VALUE = _lazy(
    r"\bname:[ \t]*[\"']?(?P<name>[A-Za-z][\w.-]{0,63})[\"']?[ \t]*\r?\n[ \t]*-?[ \t]*value:[ \t]*"
    + _ASSIGN_VALUE
)
_CJK_ASSIGN = _lazy(
    r"(?P<name>密码|口令|密钥|秘钥|令牌|密碼|金鑰)(?P<sep>[ \t]*(?:[:：=]|是|为|為)|[ \t]+)[ \t]*"
    r"[\"'“「]?(?P<vu>[!-~]{1,256})"
)
# Password labels in other languages: "DBのパスワード: X", "Passwort für den Server: X",
# "Le mot de passe est X", "Пароль от сервера: X". A few words may sit between the label and
# its separator (bounded: linear). Only strong values count (`_strong`): "Passwort: erforderlich"
# is prose. Chinese labels are `_CJK_ASSIGN`'s.
_I18N_PASSWORD_WORDS = (
    r"passwort|kennwort|mot[ \t]+de[ \t]+passe|contrase[ñn]a|пароль|senha|has[łl]o|wachtwoord"
    r"|l[öo]senord|salasana|adgangskode|passord|heslo|jelsz[óo]|[şs]ifre|parol[aă]|κωδικός"
    r"|contrasenya|m[ậa]t[ \t]+kh[ẩa]u|kata[ \t]+sandi|kata[ \t]+laluan|lozink[aeu]|лозинк[аеу]"
)
# Scripts whose words take glued prefixes ("הסיסמה", "the password"; "ورمز", "and the code") or
# are written without spaces (Thai): no word boundary is asked before these.
_I18N_GLUED_WORDS = (
    r"パスワード|暗証番号|비밀번호|비번|암호|كلمة[ \t]+(?:المرور|السر)|رمز[ \t]+(?:عبور|ورود|المرور)"
    r"|گذرواژه|पासवर्ड|कूटशब्द|סיסמ[הא]|รหัสผ่าน"
)
# One label table: every password label the detector knows, English and the rest, with the
# words for "is" of the same languages. `_LABEL_ASSIGN` reads a value after any of them, quoted
# or not, spaced or not ("senha: \"verde mar 77\"", "Passwort: Sommer Wind 2024", "la password è
# X", "db pass X"); `_tag_candidates` reads a tag after normalisation ("pass:-s3cr3tv@lue9").
_ENGLISH_PASSWORD_WORDS = r"password|passwd|passphrase|pwd|pass|pw"
_COPULAS = (
    r"ist|lautet|est|es|é|è|är|er|is|was|este|je|és|jest|to|это|—|-|là|adalah|ialah|هي|היא|הוא"
)
# A label that is a word of its own (the character before it, when any, is read: not a word
# character nor "-") or a glued one; a separator, or none before an opening quote 「『“.
_LABEL_ASSIGN = _lazy(
    r"(?i)(?:(?:^|[^\w-])(?P<name__1>" + _ENGLISH_PASSWORD_WORDS + "|" + _I18N_PASSWORD_WORDS + r")"
    r"|(?P<name__2>" + _I18N_GLUED_WORDS + r"))"
    r"(?P<mid>[ \t][^\n:：=]{0,30}?)?"
    r"(?:(?:[ \t]*[:：=]|[ \t]+(?P<cop>" + _COPULAS + r")[ \t]|[ \t]*คือ[ \t]*|[ \t]*は|[ \t]*는)"
    r"[ \t]*(?:(?P<q__1>[\"'“«„「])(?P<vq__1>[^\n\"'“”«»„「」]+)[\"'”»“」]"
    r"|[\"'“«„「]?(?P<vu__1>[^\s\"'“”«»„「」]+))"
    r"|[ \t]*(?:(?P<q__2>[「“])(?P<vq__2>[^\n\"'“”«»„「」]+)[\"'”»“」]"
    r"|[「“](?P<vu__2>[^\s\"'“”«»„「」]+)|(?P<vu__3>『[^\s\"'“”«»„「」]*)))"
)
# (The value classes hold non-ASCII holes: unbounded here, a quoted value of more than 128
# characters skipped and an unquoted one cut at 256 in `_label_candidates`.)
# "db pass Kx81Mq22pz", "wifi pass Tz9!qw4Rm5": a short label after what it opens, with only a
# space before the value; the value must hold a letter and a digit.
_QUALIFIED_PASS = _lazy(
    r"(?i)(?:db|database|root|admin|wifi|wi-fi|smtp|ftp|sftp|ssh|vpn|mail|e-?mail|imap"
    r"|pop3?|mysql|postgres|redis|sudo|login|user|app|api|server|router)[ _-]?"
    r"(?:pass|pwd|pw)[ \t]+(?P<vu>[^\s\"'`]{6,128})",
    before=r"[^\w-]",
)
_VERSION = _lazy(r"(?i)v?[0-9]+(?:\.[0-9]+)+(?:[-+.][a-z0-9.]+)?")
_ENGLISH_LABELS = frozenset(_ENGLISH_PASSWORD_WORDS.split("|"))
_LOOSE_LABELS = frozenset({"pass", "pw"})  # also English words: a spaced value must be quoted
_ENGLISH_ONLY_COPULAS = frozenset({"is", "was"})
_NOT_AFTER_ENGLISH = frozenset({"to", "-", "—", "er", "je", "là"})
# A tag is lower-cased and its spaces made dashes ("pass: S3cr3tV@lue9" → "pass:-s3cr3tv@lue9").
# A tag stands alone: on its own line, in a YAML list ("- pass:-x"), quoted, or in a flow list
# ("[smtp, pass:-x]"); never inside a word or a shell default ("${DB_PASSWORD:-x}").
_TAG_FORM = _lazy(
    r"(?P<label>[^\s:=,\[\]\"'{}$]{1,64})[:=]-(?P<value>[^\s,\[\]]{1,128}?)",
    before=r"[\s,\[\"']",
    after=r"[\"']?(?:[\s,\]]|\Z)",
)
# "password:" with the value alone on the next line (a note pasted from a chat or a wiki).
_NEXT_LINE = _lazy(
    r"(?i)(?P<name>password|passwd|passphrase|pwd|pass|secret|token|api[ _-]?key)s?[ \t]*[:：=][ \t]*"
    r"\r?\n[ \t]*(?P<vu>[!-~]{6,256})[ \t]*",
    before=r"[^\w-]",
    after=r"\r?\n",
)

# JSON written inside a string (a log line, a payload stored as a string, an env var holding
# JSON): every quote escaped, once or more (`{\"password\": \"…\"}`, `\\\"api_key\\\"`).
# RE2 finds the key and the value's opening quote (a Ruby hash's `=>` too); the value ends at the
# next quote escaped as often as its opening one (`_escaped_json_candidates`, in Python): any
# escape inside it (`\\/`, `\\u0026`, `\\\\`, a quote escaped once more) is part of the value.
_ESCAPED_JSON = _lazy(
    r'\\+"(?P<name>[A-Za-z_][\w.-]{0,63})\\+"[ \t]*(?:=>|[:=])[ \t]*(?P<open>\\+)"'
)
# A markdown table row: cells between pipes (`_table_candidates`).
_TABLE_SEPARATOR = _lazy(r"[ \t]*(?:>[ \t]*)*\|?(?:[ \t]*:?-+:?[ \t]*\|)+(?:[ \t]*:?-+:?[ \t]*)?")
_TABLE_NAME = _lazy(r"[A-Za-z][\w.-]{0,63}(?: [A-Za-z][\w.-]{0,31}){0,3}")

_PLACEHOLDER_WORDS = frozenset(
    {
        "bearer", "basic", "oauth", "oauth2", "jwt", "hmac", "digest",
        "password", "passwd", "passphrase", "secret", "token", "apikey", "api_key", "changeit",
        "redacted", "none", "null", "nil", "undefined", "true", "false", "yes", "no", "on", "off",
        "required", "optional", "empty", "unset", "example", "placeholder", "dummy", "sample",
        "todo", "tbd", "fixme", "xxx", "notasecret", "secretvalue", "mysecret", "mypassword",
        "default", "string", "str", "value", "hidden", "masked",
    }
)
# Lower-case words that describe a password rather than being one ("password: required").
_DESCRIPTIVE_WORDS = frozenset(
    {
        "enabled", "disabled", "rotated", "expired", "expires", "reset", "changed", "encrypted",
        "hashed", "protected", "stored", "managed", "missing", "invalid", "incorrect", "wrong",
        "correct", "blank", "prompt", "prompted", "interactive", "manual", "automatic", "inherit",
        "inherited", "generated", "random", "strong", "weak", "secure", "insecure", "unknown",
        "same", "different", "updated", "removed", "revoked", "keychain", "keyring", "vault",
        "bitwarden", "lastpass", "onepassword", "1password", "environment", "stdin", "file", "sops", "agent",
        "provided", "supplied", "configured", "ignored", "optional", "mandatory", "needed",
        "forbidden", "allowed", "accepted", "rejected", "sensitive", "confidential", "private",
        "public", "internal", "external", "local", "remote", "shared", "personal", "temporary",
        "expected", "unchanged", "unused", "ignore", "skip", "skipped", "none", "omitted",
    }
)
_ENV_REF = _lazy(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%")
_ENV_NAME = _lazy(r"_*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_HEADER_NAME = _lazy(r"[A-Z][a-z]+(?:-[A-Z][a-z]*)+")
_DOTTED_REF = _lazy(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_REF_SEGMENT = _lazy(r"_*(?:[A-Z]?[a-z0-9]+)+_?|[a-z_][a-z0-9_]*|[A-Z0-9_]+")
_KWARG = _lazy(r"[A-Za-z_]\w*=\w*")
_IDENT = _lazy(r"[A-Za-z_][A-Za-z0-9_.]*")
_CAMEL_IDENT = _lazy(r"_?[A-Z][a-z]+(?:[A-Z][a-z]+)*|_?[a-z]+(?:[A-Z][a-z]+)+")
_SNAKE_IDENT = _lazy(r"_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_WORDY = _lazy(r"[a-z]+(?:[_.-][a-z]+)*")
_NUMBERISH = _lazy(r"[0-9][0-9_.:,/+-]*[a-zA-Z]{0,3}")
_FILE_PATH = _lazy(r"(?:~|\.{1,2})?/[\w.@%+-]|[A-Za-z]:\\")
_PLACEHOLDER_SHAPE = _lazy(r"(?i)(?:your|insert|enter|replace|put|add)[_-]?[\w-]*|[\w-]*[_-]here")
# ... and its words must stand as words (`stand_in_word`): "YoUr5e4RDqshbOYlSt" is a password
_PLACEHOLDER_SHAPE_WORDS = ("your", "insert", "enter", "replace", "put", "add", "here")


# Words that ask for the real value or say the value is not one.
# ("changeme" is not one: a default password is the live one wherever nobody changed it.)
_STAND_IN_WORDS = ("example", "placeholder", "dummy", "fake", "your_", "_your", "your-", "_here", "here_",
                   "replace", "insert_")
_STAND_IN_FILL = ("xxxxxx", "######")


def _plausible_value(value: str, kind: str, quoted: bool = True, *, literal: bool = False) -> bool:
    """Precision guard for secret-named assignments: is ``value`` a literal credential?

    ``quoted`` is False for a bare value (YAML, env, code), where identifiers are far more
    likely to be variables and type names than passwords. ``literal`` is True where the value
    cannot be code (a table's password cell with a digit): identifier shapes with a secret word
    (``Password123``, ``redis_pass_01``) are then passwords, not variables.
    """
    if len(value) < (6 if kind == "password" else 10) or _is_masked(value):
        return False
    low = value.lower()
    if low in _PLACEHOLDER_WORDS or value.startswith(REDACTED[:-1]):
        return False
    if (
        value[0] in "<*#"
        or (value[0] in "{[(" and (not quoted or value[1:].rstrip(")]}").isalpha()))  # structure; "(unchanged)"
        or value.startswith(("--", "$(", "%("))
        or any(c.isspace() for c in value)
    ):
        return False
    if stand_in_word(value, _STAND_IN_WORDS) or any(w in low for w in _STAND_IN_FILL):
        return False  # "REPLACE_WITH_YOUR_API_KEY", "thisisfake", "sha256~XXXX_PUT_YOUR_TOKEN_HERE"
    if len(set(value)) <= 2 or "%s" in value or "%d" in value:  # "********", printf formats
        return False
    if value[0] == "!" and value[1:].isalpha():  # YAML tag: "!vault |", "!Ref"
        return False
    if _templated(value) or (
        not quoted and (_KWARG.fullmatch(value) or ("=" in value and "," in value))
    ):
        return False  # a template ("//{}:_authToken", "Bearer {token}") or code ("Token=None")
    if (
        "://" in value
        or _ENV_REF.fullmatch(value)
        or _ENV_NAME.fullmatch(value)
        or _HEADER_NAME.fullmatch(value)  # "Access-Control-Allow-Credentials"
        or _FILE_PATH.match(value)
        or (_PLACEHOLDER_SHAPE.fullmatch(value) and stand_in_word(value, _PLACEHOLDER_SHAPE_WORDS))
        or _CALL.match(value)  # os.getenv("DB_PASSWORD"), os.environ["API_KEY"]
    ):
        return False
    if _DOTTED_REF.fullmatch(value) and all(_REF_SEGMENT.fullmatch(p) for p in value.split(".")):
        return False  # settings.SECRET_KEY, jinja2.pass_context
    if literal:
        pass
    elif _IDENT.fullmatch(value) and not _names_itself(value, kind, quoted) and not _generated(value):
        words = {p.lower() for p in _CAMEL_PARTS.findall(value)}
        if words & (_SECRET_PARTS | {"key", "keys", "passwords", "tokens"}):
            return False  # key_password, AccessToken, credential_tuple: a variable or a type
    if not quoted and not literal and (
        (_is_camel_ident(value) and not (kind == "password" and _letters_password(value)))
        or (_SNAKE_IDENT.fullmatch(value) and not _generated_tail(value))
    ):
        return False  # "token: AccessToken", "user, password = proxy_auth": code, not a literal
    if low.startswith(
        ("arn:", "projects/", "vault:", "op://", "ssm:", "sm://", "awskms:", "sha256:")
    ) or (low.startswith("env:") and _ENV_VARIABLE.fullmatch(value[4:]) and not _generated(value[4:])):
        return False  # a reference to where the secret lives (env: only before a variable's name)
    if _algorithm_name(value):
        return False  # "secret: AES-256-GCM", "password: Argon2id": how it is kept, not what
    if kind == "password":
        return low not in _DESCRIPTIVE_WORDS
    if _WORDY.fullmatch(value) or _NUMBERISH.fullmatch(value) or _is_slug(value):
        return False
    return not (value.isalpha() and value.islower())


_ENV_VARIABLE = _lazy(r"[A-Za-z_][A-Za-z0-9_]*")
"""An environment variable's name, what `env:NAME` references (`env:Xq7#kP9!` is a password)."""


# Placeholders: the ones no password holds (`${X}`, `{{ x }}`, `{% %}`, `$(cmd)`, `%(x)s`, `#{x}`),
# and the plain ones a password may hold by chance (`{river}`, `[shadow]`, `<name>`, `{0}`).
# A template's expression: a name or path (`vault_pw`, `.Values.apiKey`, `env.X`) with calls,
# subscripts and filters after it (`lookup('env', 'X')`, `a['b']`, `| b64enc`); "7]Lm$(zP" is none.
_TEMPLATE_EXPR = (r"[ \t]*[A-Za-z_.$][\w.]*(?:[ \t]*(?:\|[ \t]*[\w.]+|\([^(){}\n]*\)|\[[^\[\]{}\n]*\]|\.\w+))*[ \t]*")
_STRONG_TEMPLATE = _lazy(
    r"\$\{[A-Za-z_][\w.]*(?:[:}=?+\[-]|\Z)"  # ${VAR}, ${VAR:-default}, ${a[0]} (maybe cut at its end)
    r"|\{\{-?" + _TEMPLATE_EXPR + r"-?\}\}|\{%[^%\n]*%\}"  # Jinja, Go, Liquid
    r"|\$\([A-Za-z_][^()\n]*\)|%\([A-Za-z_]\w*\)[sdr]|#\{[^{}\n]*\}"  # $(cmd), %(x)s, #{ruby}
)
_PLAIN_PLACEHOLDER = _lazy(r"\{[A-Za-z_]*\}|\{[0-9]{0,2}\}|\{[A-Za-z_]\w*![rsa]\}|\[[A-Za-z_ -]+\]|<[A-Za-z_][\w .-]*>")
_CALL = _lazy(r"[A-Za-z_][A-Za-z_.]*[(\[]")  # a call or a subscript: os.environ["X"], form.data['p']


def _templated(value: str) -> bool:
    """A template, not a literal: a placeholder no password holds (``${DB_PASSWORD}``,
    ``{{ secret }}``, ``$(pass show x)``), or plain placeholders (``{token}``, ``[TOKEN]``,
    ``<your-token>``) with nothing around them but words ("Bearer {token}"). A password may hold
    ``{}[]()$`` ("blue {river} 42", "p@ss(w0rd)!"): what is around its brackets has a digit or a
    symbol."""
    if _STRONG_TEMPLATE.search(value) is not None:
        return True
    pieces = [m.span() for m in _PLAIN_PLACEHOLDER.finditer(value)]
    if not pieces:
        return False
    rest, pos = [], 0
    for s, e in pieces:
        rest.append(value[pos:s])
        pos = e
    rest.append(value[pos:])
    around = "".join(rest)
    return not any(c.isdigit() or not (c.isalpha() or c in " -_./:") for c in around)


_GLUED_SECRET_WORD = _lazy(r"[a-z0-9](?:secret|token|passw(?:or)?d|pass|key)s?\Z")
_TRAILING_SECRET_WORD = _lazy(r"(?i)(?:secret|token|passw(?:or)?d|pass|key)s?\Z")


def _names_itself(value: str, kind: str, quoted: bool) -> bool:
    """A value that holds a secret word yet is a literal, not a variable or type name: a quoted
    string under a password key ("MyAppSecret"); a word glued without a case change after a
    digit or a letter, when the value has a digit or a capital ("hunter2secret"); or a word
    after 8 or more random characters, digits and both cases ("Kx81MonsterSecret"), where a
    name would have words ("oauth2Token")."""
    if "_" in value or "." in value:
        return False
    if kind == "password" and quoted:
        return True
    m = _GLUED_SECRET_WORD.search(value)
    if m is not None and (_has_digit(value) or value.lower() != value):
        return True
    m = _TRAILING_SECRET_WORD.search(value)
    head = value[: m.start()] if m is not None else ""
    return len(head) >= 8 and _has_digit(head) and _mixed_case(head)


_SEGMENT_SEPARATORS = str.maketrans("-_.", "///")


def _is_slug(value: str) -> bool:
    """A lower-case name made of words ("prod-cert-2024", "v2-compatible"): names a secret. A
    generated segment (12 characters or more, letters and digits mixed) makes it a value with a
    word prefix instead ("key-3ax6xnjp29jd6fds…", "shippo_live_0b1c…", "pul-35254…"; `_generated`)."""
    if value.lower() != value:
        return False
    segments = [s for s in value.translate(_SEGMENT_SEPARATORS).split("/") if s]
    if any(_generated(s) for s in segments):
        return False
    words = sum(1 for s in segments if s.isalpha() and len(s) >= 3)
    return len(segments) >= 2 and words * 2 >= len(segments)


def _generated_tail(value: str) -> bool:
    """A snake_case value whose last part is generated (`_generated`): a vendor's word prefix and
    a key ("shippo_live_0b1c…"), not a variable's name."""
    return _generated(value.rsplit("_", 1)[-1])


def _generated(segment: str) -> bool:
    """12 characters or more, letters and at least 3 digits: generated, not a word ("ec2capacity…")."""
    if len(segment) < 12 or sum(c.isdigit() for c in segment) < 3 or not any(c.isalpha() for c in segment):
        return False
    steps = sum(1 for a, b in zip(segment, segment[1:], strict=False) if ord(b) - ord(a) == 1)
    return steps * 2 < len(segment)  # "abcdefghijklmnopqrstuvwxyz123" is an alphabet, not a key


# Last words of a PascalCase name that make it a type or a class, not a password: "password:
# HiddenInput", "password: PlainTextField", "password: FormControl;" (a type annotation, a
# form's field or control).
_TYPE_WORDS = frozenset(
    {
        "field", "input", "type", "types", "str", "string", "value", "object", "class", "model",
        "form", "widget", "data", "info", "config", "settings", "hash", "hasher", "encoder",
        "validator", "policy", "manager", "provider", "handler", "error", "exception", "option",
        "options", "dict", "list", "map", "schema", "dto", "entity", "interface", "props", "state",
        "text", "area", "box", "bytes", "buffer", "array", "enum", "name", "id", "ref",
        "control", "controller", "component", "element", "column", "attribute", "property",
        "annotation", "decorator", "serializer", "factory", "builder", "service", "repository",
        "wrapper", "parser", "view", "bean", "result", "response", "request", "param", "params",
        "argument", "spec", "definition", "descriptor", "formatter", "converter", "adapter",
        "constraint", "rule", "matcher", "mask", "editor", "picker", "prompt", "dialog", "label",
        "interrupt", "warning", "exit", "signal", "event", "variable", "placeholder", "default",
    }
)


# Algorithms, modes and column types a value under a secret-named key may name instead of the
# secret itself ("| signing secret | HMAC-SHA256 |", "secret: AES-256-GCM", "| password_hash |
# varchar255 |"): the value is exactly one such name in its usual spelling (any case), with its
# usual parameters (`_algorithm_name`). A mix of algorithm words and numbers is no name but a
# password made of them ("bcrypt2024", "Sha256Rsa2048", "Argon2id9", "Hmac-Sha256-Key": issue
# 31, the attack's fourth round), and is masked.
_SHA = r"sha-?(?:1|224|256|384|512)|sha3-(?:224|256|384|512)"
_ALGORITHM_NAME = _lazy(
    r"(?i:"
    r"aes(?:-?(?:128|192|256))?(?:-(?:gcm|cbc|ctr|ecb|ccm|siv|ocb|xts))?"
    r"|3des|des3|tripledes|des-ede3(?:-cbc)?|blowfish|twofish"
    r"|x?chacha20(?:-poly1305)?|salsa20|poly1305"
    r"|rsa(?:-(?:1024|2048|3072|4096))?|rsa-oaep(?:-256)?|rsa-pss|rsassa-pss|rsassa-pkcs1-v1_5"
    r"|(?:ecdsa|ecdh)(?:-p-?(?:256|384|521))?|eddsa|ed25519|ed448|x25519|x448|secp256k1|secp256r1|secp384r1"
    r"|hmac(?:-(?:" + _SHA + r"|md5))?|[hrep]s(?:256|384|512)"
    r"|" + _SHA + r"|md5|blake2[bs]?|blake3|keccak-?256|ripemd-?160"
    r"|argon2(?:id|i|d)?|bcrypt|yescrypt|scrypt(?:-n\d{1,7})?"
    r"|pbkdf2(?:-(?:hmac-)?(?:" + _SHA + r"))?|pbkdf2withhmacsha(?:1|256|512)|hkdf(?:-(?:" + _SHA + r"))?"
    r"|ntlm|totp|hotp|kmac(?:128|256)|gmac|cmac"
    r"|(?:n?varchar|varbinary|bytea|bigint|tinytext|mediumtext|longtext|jsonb)(?:\(\d{1,5}\)|\d{1,5})?"
    r"|(?:char|binary)(?:\(\d{1,5}\)|\d{1,5})"
    r")"
)


def _algorithm_name(value: str) -> bool:
    """``value`` is one algorithm's or type's name (`_ALGORITHM_NAME`): ``Argon2id``,
    ``AES-256-GCM``, ``PBKDF2``, ``scrypt-N16384``, ``VARCHAR(255)``, ``CHAR(60)``; never a mix
    of such words (``Sha512Salt2024``) nor one with a number after it (``bcrypt2024``)."""
    return len(value) <= 40 and _ALGORITHM_NAME.fullmatch(value) is not None


# Words that make a PascalCase value a description of where the password comes from or what it
# is ("AutoGenerated", "StoredInVault", "NeverExpires", "SameAsUsername"), not a password:
# prepositions, articles, negations and verbs of configuration.
_DESCRIPTION_WORDS = frozenset(
    {
        "a", "an", "the", "by", "from", "in", "on", "at", "as", "to", "of", "for", "with", "without",
        "via", "per", "into", "onto", "not", "no", "none", "never", "always", "use", "uses", "same",
        "if", "when", "or", "and", "is", "are", "be", "only", "each", "every", "any", "all", "set",
        "get", "see", "ask", "read", "must", "should", "can", "will", "auto", "manual", "default",
        "expires", "expire", "please", "change", "random", "empty", "blank", "unset", "later",
        "here", "there", "now", "env", "environment", "vault", "keychain", "prompt", "login",
        "user", "username", "required", "optional", "disabled", "enabled", "inherit", "inherits",
    }
)
_DESCRIPTION_SUFFIXES = ("ed", "ing", "ion", "ions", "ment", "ments", "ity", "ness", "ly", "able", "ible")


def _descriptive(parts: list[str]) -> bool:
    """PascalCase parts that read as a description (`_DESCRIPTION_WORDS`, or a participle, a
    noun of action, an adverb by its ending: "Generated", "Requirements", "Randomly")."""
    for part in parts:
        low = part.lower()
        if low in _DESCRIPTION_WORDS or (len(low) >= 5 and low.endswith(_DESCRIPTION_SUFFIXES)):
            return True
    return False


def _letters_password(value: str) -> bool:
    """A password of letters only under a password key, though it reads like a PascalCase name
    (``password: TangerineMonsoon``): 10 letters or more, upper case at the start and at least
    once more, its last word no type word (`_TYPE_WORDS`: ``HiddenInput``). A camelCase value
    (``userPass``) stays a variable; ``Required``, ``None`` are one capital."""
    if not (value.isalpha() and value.isascii() and len(value) >= 10 and value[0].isupper()):
        return False
    if sum(c.isupper() for c in value) < 2:
        return False
    parts = _CAMEL_PARTS.findall(value)
    return bool(parts) and parts[-1].lower() not in _TYPE_WORDS and not _descriptive(parts)


def _is_camel_ident(value: str) -> bool:
    """PascalCase/camelCase made of pronounceable parts ("AccessToken"), unlike random letters."""
    if not _CAMEL_IDENT.fullmatch(value):
        return False
    return all(any(c in "aeiouy" for c in part.lower()) for part in _CAMEL_PARTS.findall(value))


def _strong(value: str) -> bool:
    """For prose forms ("password is X"): letters plus a digit or symbol, like a real password."""
    has_alpha = any(c.isalpha() for c in value)
    return has_alpha and (_has_digit(value) or any(not c.isalnum() for c in value))


def _strong_prose(value: str, kind: str = "secret") -> bool:
    """Stricter, for free prose ("the token will be created.</p>"): no markup, no slugs. After a
    password label an upper-case letter is enough to tell "hunter2-Xyz" from a slug."""
    if not _strong(value) or any(c in "<>/\\" for c in value):
        return False
    return not _is_slug(value if kind == "password" else value.lower())



# Words that make a spaced value a description or an instruction ("password: at least 12
# characters", "password: 'see the vault'"), not a passphrase.
_PROSE_WORDS = frozenset(
    {
        "the", "an", "is", "are", "was", "be", "been", "must", "should", "will", "can", "not",
        "no", "at", "least", "most", "of", "in", "on", "for", "from", "to", "with", "by", "as",
        "or", "and", "your", "enter", "please", "type", "here", "see", "use", "set", "required",
        "characters", "chars", "char", "minimum", "maximum", "min", "max", "length", "long",
        "digits", "symbols", "letters", "password", "passwords", "passphrase", "secret", "token",
        "key", "value", "example", "placeholder", "same", "one", "it", "this", "that", "if",
        "when", "then", "only", "every", "each", "any", "none", "null", "empty", "blank",
        "change", "changed", "reset", "stored", "vault", "ask", "asked", "prompt", "prompted",
        "since", "after", "before", "until", "days", "months", "weeks",
        # the same in the label table's other languages ("senha: veja o cofre", "Passwort: siehe
        # Tresor", "la password è cambiata ogni 90 giorni")
        "veja", "ver", "vea", "voir", "siehe", "zie", "se", "смотри", "см", "im", "nel", "nella",
        "na", "dans", "di", "de", "du", "des", "da", "do", "em", "en", "und", "et",
        "и", "в", "во", "не", "ogni", "cada", "chaque", "jede", "jeden", "alle", "tous",
        "todos", "mindestens", "minimo", "mínimo", "caractères", "zeichen", "caracteres",
        "caratteri", "символов", "steht", "ist", "est", "é", "è", "es", "wird", "muss", "doit",
        "deve", "debe", "seit", "desde", "depuis", "od", "sedan", "sinds", "giorni", "tage",
        "jours", "días", "dias", "дней", "cambiata", "geändert", "changé", "cambiada", "alterada",
        "abgelaufen", "expirée", "expirada", "scaduta", "obrigatória", "obligatoire",
        "erforderlich", "requerida", "obbligatoria", "у", "спросите", "wie", "como", "comme",
        "come", "как", "jak", "zoals", "som", "mit", "con", "com", "avec", "с", "met", "med",
        "ohne", "sin", "sem", "sans", "für", "per", "par", "pour", "para", "über", "von", "zu",
        "bei", "nach", "geschützt", "gesperrt", "pessoal", "personnel", "personnelle",
    }
)
_SPACED_BAD = _lazy(r"[<>`]|\$[({A-Z_]|://|%[sd]")
_LINE_WINDOW = 130  # characters looked at for an unquoted value that runs to the line's end


def _spaced_value(text: str, m: Match, key: str) -> str | None:
    """The whole of a password value that holds spaces (``DB_PASSWORD="p@ss w0rd!"``,
    ``password: p@ss w0rd!``), or None when the value has none or reads as prose.

    A quoted value is taken as quoted. An unquoted one runs to the end of its line (a YAML or
    ``.properties`` value), but never after ``NAME=`` with an upper-case name: in a shell, a
    space ends ``PGPASSWORD=x`` and the next word is a command. Only a few words, with a digit
    or a symbol, and none of `_PROSE_WORDS`; a quoted value under an environment-variable name
    needs no digit (``PGPASSWORD='a b c'``).
    """
    name = m.group("name")
    env = name.isupper() or _ENV_NAME.fullmatch(name) is not None
    if key == "vq":
        value = m.group("vq")
        if not any(c in " \t" for c in value):
            return None
        code = m.groupdict().get("sep") in ("=", ":=", "=>") and not env
        if code and _code_passphrase(value):
            return value
        return value if _plausible_spaced(value, quoted=True, env=env) else None
    start, end = m.span("vu")
    sep = m.groupdict().get("sep")
    if text[end : end + 1] not in (" ", "\t") or (env and sep == "="):
        return None
    stop = text.find("\n", end, start + _LINE_WINDOW)
    if stop < 0:
        if start + _LINE_WINDOW < len(text):
            return None  # a long line: not a value standing alone
        stop = len(text)
    value = text[start:stop]
    comment = value.find(" #")
    if comment >= 0 and sep != "=":
        value = value[:comment]  # a YAML comment
    value = value.rstrip(" \t\r")
    if not (sep in (":", "=") and _mapping_line(text, m.start("name"))):
        value = _unspaced_head(value)  # a key in mid-sentence: the value may end before prose
    elif sep == "=":
        value = value.split("\t", 1)[0].rstrip(" ")  # a .properties line: a tab ends a column
    if not any(c in " \t" for c in value):
        return None
    return value if _plausible_spaced(value, quoted=False, env=env) else None


_MAPPING_LEAD = _lazy(r"[ \t]*(?:-[ \t]+)?[\"']?[A-Za-z0-9_.-]*")


def _mapping_line(text: str, name_at: int) -> bool:
    """The key at ``name_at`` starts its line (after indentation, a list's ``- `` or a quote,
    and the rest of a dotted key: ``spring.datasource.password``): a YAML mapping or a
    ``.properties`` line, whose unquoted value is the whole rest of the line, tabs and all."""
    lead = text[max(0, name_at - 64) : name_at]  # bounded: a long line costs each key no more
    line_at = lead.rfind("\n") + 1
    if line_at == 0 and name_at > 64:
        return False
    return _MAPPING_LEAD.fullmatch(lead[line_at:]) is not None


def _unspaced_head(value: str) -> str:
    """An unquoted value read to the end of its line, cut where it stops being one value (not
    on a YAML mapping line, `_mapping_line`: there the value is the rest of the line): at a
    tab (a column of a TSV row or an aligned log, not a passphrase's space), and after its first
    word when that word is a password on its own (`_self_standing`: 8 characters or more with a
    digit and both cases, or already masked) and every word after it is lower-case letters (``Vq7kLm2pZx9w next
    words`` is a password and prose; ``p@ss w0rd!`` stays one passphrase)."""
    value = value.split("\t", 1)[0].rstrip(" ")
    first, _, rest = value.partition(" ")
    if rest and _self_standing(first) and all(w.isalpha() and w.islower() for w in rest.split()):
        return first
    return value


def _self_standing(word: str) -> bool:
    """A password alone, or one a first round of `redact` already masked (its fixpoint must not
    take the words after the mask in a second round)."""
    return (len(word) >= 8 and _has_digit(word) and _mixed_case(word)) or _is_masked(word)


# Words of the strings code assigns to a password variable that are not passwords: prompts,
# rules and errors ("Enter your password", "must be at least 8 characters", "is too short").
_INSTRUCTION_WORDS = frozenset(
    {
        "enter", "your", "must", "should", "least", "most", "characters", "chars", "char", "required",
        "invalid", "incorrect", "wrong", "too", "short", "long", "minimum", "maximum", "please", "type",
        "here", "see", "example", "placeholder", "cannot", "can't", "don't", "not", "is", "are",
        "match", "matches", "confirm", "retype", "again", "empty", "missing", "expired", "forgot",
    }
)


def _code_passphrase(value: str) -> bool:
    """A quoted value with spaces assigned in code to a password-named variable
    (``password = "copper kettle on the stove"``): a passphrase, unless it reads as a prompt, a
    rule or an error (`_INSTRUCTION_WORDS`, row 4b's descriptive words) or is not a literal."""
    words = value.split()
    if not 5 <= len(value) <= 128 or not 2 <= len(words) <= 8:
        return False
    if value[0] in "*#<" or _SPACED_BAD.search(value) or _templated(value) or _is_masked(value):
        return False
    low = value.lower()
    if any(w in low for w in ("password", "passwd", "passphrase", "secret", "token")):
        return False
    stripped = {w.strip(".,;:!?\"'()").lower() for w in words}
    return not stripped & (_INSTRUCTION_WORDS | _DESCRIPTIVE_WORDS)


def _plausible_spaced(value: str, *, quoted: bool, env: bool) -> bool:
    words = value.split()
    if not 5 <= len(value) <= 128 or not 2 <= len(words) <= (5 if quoted else 4):
        return False
    low = value.lower()
    if value[0] in "*#" or _SPACED_BAD.search(value) or _templated(value) or _is_masked(value):
        return False
    if any(w in low for w in ("password", "passwd", "passphrase", "secret", "token")):
        return False  # 'password="a bpassword=': a run of labels, or a sentence about one
    if any(w.strip(".,;:!?\"'").lower() in _PROSE_WORDS | _DESCRIPTIVE_WORDS for w in words):
        return False  # "at least 12 chars", "siehe Tresor", "SHA256 hashed"
    if not quoted and (
        any(c in value for c in "=()")
        or any(w.endswith(":") or _SNAKE_IDENT.fullmatch(w) or _DOTTED_REF.fullmatch(w) for w in words)
    ):
        return False  # "password == confirm_password:", "= bcrypt.hashpw(pw, …)": code; "user: x"
    return _strong(value) or (quoted and env)


def _finditer_names(regex: _Lazy, text: str) -> Iterator[Match]:
    """Like ``finditer`` but resumes after the *name*, so "note: password = x" finds both."""
    pos = 0
    while (m := regex.search(text, pos)) is not None:
        if _fits(m):
            yield m
        pos = max(m.end("name"), pos + 1)


# Literals every match of a pattern holds, in the lowered text (as `tokens._PROVIDER_HINTS`): a
# text without them skips the pattern. `_LABEL_HINTS` gate the label-driven prose forms (each of
# their labels holds one: password, passwd, passphrase, pwd, pass, pw, secret, token, api key,
# requirepass, masterauth; the log form's key, token, secret, password).
_HINTS: dict[_Lazy, tuple[str, ...]] = {
    _ASSIGN: (":", "=", "："),
    _TYPED_ASSIGN: ("var", "val", "let", "const"),
    _CALL_ASSIGN: ("set", "putenv", "header"),
    _FLAG_ASSIGN: ("--",),
    _XML_ASSIGN: ("</",),
    _NAME_VALUE: ("value:",),
    _SET_TO: ("set",),
    _KEY_VALUE_ATTR: ("value=",),
}
_LABEL_HINTS = ("pass", "pw", "secret", "token", "key", "masterauth")


def _finditer_unless(regex: _Lazy, text: str, reject: Callable[[str, Match], bool]) -> Iterator[Match]:
    """Like ``finditer``, but a match ``reject`` refuses is skipped and the search resumes after
    its name, as if the pattern had failed there (a look-ahead RE2 cannot spell)."""
    pos = 0
    while (m := regex.search(text, pos)) is not None:
        if reject(text, m) or not _fits(m):
            pos = max(m.end("name"), pos + 1)
            continue
        yield m
        pos = max(m.end(), pos + 1)


_CLOSES = {")": "(", "]": "[", "}": "{", ">": "<"}


def _trim_value(value: str, chars: str = ".,;:)]}>") -> str:
    """`value` without what ends the sentence after it (`chars`): a full stop, or a bracket that
    closes one opened before the value ("(password: X)"). A closing bracket whose opener is in the
    value stays: `Pa55(word)` is one password, masked whole, never with its ")" left."""
    while value and value[-1] in chars:
        opener = _CLOSES.get(value[-1])
        if opener is not None and value.count(opener) >= value.count(value[-1]):
            break
        value = value[:-1]
    return value


def _code_value(text: str, m: Match, raw: str) -> bool:
    """A bare value `raw` (as matched, untrimmed) after a secret's name that is code: a call
    (``password = getPassword1()``, ``= hashlib.sha256(password1)``: `_CALL_VALUE`), or a variable
    set to an attribute (``self.password = password1``)."""
    bare = raw.rstrip(".,;:")
    if _CALL_VALUE.fullmatch(bare):
        return True
    owner = text[max(0, m.start("name") - 5) : m.start("name")]
    return (m.group("name").startswith(("self.", "this.")) or owner.endswith(("self.", "this."))) and bool(
        _BARE_IDENT.fullmatch(bare))


def _not_pass_is(text: str, m: Match) -> bool:
    """"pass" is a password label only before "is"/"was" ("the pass is X"; "First pass: …" is not)."""
    return m.group("name").lower() == "pass" and _PASS_IS.match(text, m.end("name")) is None


def _assignment_candidates(text: str, tags: bool = True) -> Iterator[tuple[str, int, int]]:
    # Tags first: "pass:-x" is a tag, not a value "-x"; the dash before each tag's value.
    tagged = tags and (":-" in text or "=-" in text)
    tag_dashes = {m.start("value") - 1 for m in _TAG_FORM.finditer(text)} if tagged else set()
    if tag_dashes:
        yield from _tag_candidates(text)
    low = text.lower()
    labelled = any(w in low for w in _LABEL_HINTS)
    for regex in (_ASSIGN, _TYPED_ASSIGN, _CALL_ASSIGN, _FLAG_ASSIGN, _XML_ASSIGN, _NAME_VALUE, _SET_TO,
                  _KEY_VALUE_ATTR):
        if not any(h in low for h in _HINTS[regex]):
            continue  # a literal every match holds is absent: the pattern is neither compiled nor run
        for m in _finditer_names(regex, text):
            if regex is _ASSIGN and (m.group("vu") or "").startswith("//"):
                continue  # "https://…": the rest of a URL, not a value
            if regex is _XML_ASSIGN and m.group("close") != m.group("name"):
                continue  # <a>x</b>: not an element
            if regex is _XML_ASSIGN and m.group("vu").startswith("{") and _name_kind(m.group("name")):
                # a braced blob in a secret-named element: an encrypted credential (Jenkins), whole
                yield "generic-secret-assignment", m.start("vu"), m.end("vu")
                continue
            kind = _name_kind(m.group("name"))
            if kind is None and _any_key(m.group("name")):
                value = m.group("vq") if regex is not _XML_ASSIGN and m.group("vq") is not None else m.group("vu")
                if _generated_key(value.rstrip(".,;:)]}>")):
                    kind = "secret"  # braintreeKey := "f7b3…", clarifai_key: "WCFc…": a vendor's key
            if kind is None and regex is _ASSIGN and (
                m.group("sep") in ("=", ":=", "=>") or m.group("vq") is not None
            ):
                # "pass=…" and 'pass: "…"' are passwords; "First pass: …" is English.
                kind = "password" if m.group("name").lower() == "pass" else None
            if kind is None:
                continue
            key = "vq" if regex is not _XML_ASSIGN and m.group("vq") is not None else "vu"
            start, end = m.span(key)
            value = m.group(key)
            foreign = not m.group("name").isascii() or any(
                w in m.group("name").lower() for w in ("passwort", "kennwort", "contrase")
            )
            if (regex is _FLAG_ASSIGN or foreign) and not _strong(value):
                continue  # "contraseña: requerida" is prose
            if key == "vu":
                if start in tag_dashes:
                    continue  # a tag ("passwort:-siehe-tresor"): `_tag_candidates`'
                if _CODE_AFTER.match(text, m.end(key)):
                    continue  # "token: Foo | None = None", "x = y(": an expression, not a literal
                if _code_value(text, m, value):
                    continue
                cut = _NEXT_PAIR.search(value)
                trimmed = _trim_value(value[: cut.start()] if cut else value)
                end -= len(value) - len(trimmed)
                value = trimmed
            if kind == "password" and regex is not _FLAG_ASSIGN and regex is not _XML_ASSIGN:
                spaced = _spaced_value(text, m, key)
                if spaced is not None:
                    yield "generic-secret-assignment", start, start + len(spaced)
                    continue
            shell_word = _shell_word_password(text, m, key, kind, value)
            if shell_word and text[m.end(key) : m.end(key) + 1] in ("\"", "'") and end == m.end(key):
                end = _shell_word_end(text, end)  # DB_PASSWORD=Password123"x": one shell word, masked whole
            if _plausible_value(value, kind, quoted=key == "vq", literal=shell_word):
                yield "generic-secret-assignment", start, end
    for_assign = _finditer_unless(_FOR_ASSIGN, text, lambda _t, _m: False) if labelled else ()
    is_assign = _finditer_unless(_IS_ASSIGN, text, _not_pass_is) if labelled else ()
    for m in _COMPARE.finditer(text) if ("==" in text or "!=" in text or "expect(" in text) else ():
        name = m.group("name").rsplit(".", 1)[-1]
        kind = _name_kind(name)
        value = m.group("vq")
        if kind is not None and _plausible_value(value, kind) and (kind == "password" or _letter_and_digit(value)):
            yield "generic-secret-assignment", m.start("vq"), m.end("vq")
    for m in _DASH_ASSIGN.finditer(text) if labelled and "-" in text else ():
        value = m.group("vq")
        kind = "password" if m.group("name").lower().startswith("p") else "secret"
        if kind == "secret" and not (_letter_and_digit(value) and _TOKEN_CHARS.fullmatch(value)):
            continue  # a generated token: letters and digits in a URL-safe alphabet ("?", "!" are not)
        if _plausible_value(value, kind):
            yield "generic-secret-assignment", m.start("vq"), m.end("vq")
    for m in (*is_assign, *for_assign):
        key = "vq" if m.group("vq") is not None else "vu"
        value = _trim_value(m.group(key), ".,;:)]}>*_")  # also markdown emphasis: "**policy**"
        if key == "vu" and _code_value(text, m, m.group("vu")):
            continue
        name = m.group("name").lower()
        kind = "password" if name.startswith(("p", "req", "mas")) else "secret"
        if kind == "secret" and not m.group("link").strip():
            continue  # "token X" with no verb is too loose ("--next-token X"); "password X" is not
        linked = kind if m.group("link").strip() else "secret"  # "password 2FA-enabled accounts"
        if _strong_prose(value, linked) and _plausible_value(value, kind):
            yield "generic-secret-assignment", m.start(key), m.start(key) + len(value)
    yield from _label_candidates(text, tag_dashes)
    if "\\" in text and '"' in text:
        yield from _escaped_json_candidates(text)
    if "|" in text:
        yield from _table_candidates(text)
    for m in _LOG_ASSIGN.finditer(text) if labelled else ():
        value = m.group("vu").rstrip(".,;:)]}>")
        if _letter_and_digit(value) and len(value) >= 16 and _plausible_value(value, "secret"):
            yield "generic-secret-assignment", m.start("vu"), m.start("vu") + len(value)
    for m in _QUALIFIED_PASS.finditer(text) if labelled else ():
        value = m.group("vu").rstrip(".,;:)]}>")
        if not value.startswith("-") and _letter_and_digit(value) and _strong_prose(value, "password") and _plausible_value(value, "password"):
            yield "generic-secret-assignment", m.start("vu"), m.start("vu") + len(value)
    for m in _NEXT_LINE.finditer(text) if labelled and "\n" in text else ():
        value = m.group("vu")
        kind = "password" if m.group("name").lower().startswith("p") else "secret"
        if value.endswith(":") or not _strong_prose(value):
            continue  # the next label, or a heading
        if _plausible_value(value, kind):
            yield "generic-secret-assignment", m.start("vu"), m.end("vu")
    for m in _DOCKER_ENV.finditer(text) if "ENV" in text else ():
        value = m.group("vu")  # `ENV DB_PASSWORD Password123`: Dockerfile's older form, no "="
        kind = _name_kind(m.group("name"))
        if kind is not None and _plausible_value(value, kind, quoted=False, literal=kind == "password" and _WORD_AND_DIGITS.fullmatch(value) is not None):
            yield "generic-secret-assignment", m.start("vu"), m.end("vu")
    for m in _CJK_ASSIGN.finditer(text) if not text.isascii() else ():
        value = m.group("vu").rstrip(".,;:)]}>\"'")
        kind = "password" if m.group("name") in ("密码", "口令", "密碼") else "secret"
        if not m.group("sep").strip() and not _strong(value):
            continue  # "密码 bcrypt 加密": only a strong value may follow a bare space
        if _plausible_value(value, kind):
            yield "generic-secret-assignment", m.start("vu"), m.start("vu") + len(value)



# Keys that are no credential, whatever their value looks like: a database's, a map's, a cache's,
# a translation's, a keyboard's, an idempotent request's, a public key.
_PLAIN_KEYS = frozenset(
    {
        "primary", "foreign", "sort", "partition", "composite", "unique", "index", "cache", "map",
        "dict", "hash", "lookup", "row", "object", "bucket", "s3", "translation", "i18n", "hot",
        "short", "shortcut", "keyboard", "sign", "ssh", "host", "gpg", "pgp", "jwk", "kid", "key",
        "routing", "shard", "dedup", "dedupe", "group", "message", "cursor", "storage",
    }
) | _NON_SECRET_QUALIFIERS
_KEY_RUN = _lazy(r"[A-Za-z0-9]{16,}")
_KEY_ALPHABET = _lazy(r"[A-Za-z0-9_+/=.-]+")


_SHELL_NAME = _lazy(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
_ENV_FILE_NAME = _lazy(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
_WORD_AND_DIGITS = _lazy(r"[A-Za-z][a-z]+[0-9]+")
# What stands between a shell-like name and its value: `=` (shell, .env, a compose list), `:`
# and a space (a compose or Kubernetes env map: `POSTGRES_PASSWORD: Password123`), a Makefile's
# `:=`, `::=`, `?=` with or without spaces.
_SHELL_SEP = _lazy(r"=|:[ \t]+|[ \t]*(?::=|::=|\?=)[ \t]*")
# The start of a .env line before its name: spaces, `export`, a compose list's dash.
_LINE_HEAD = _lazy(r"[ \t]*(?:export[ \t]+|-[ \t]+)?")
# A bare value that ends its line (a comment after it at most): a .env line, not a keyword argument
_LINE_REST = _lazy(r"[ \t]*(?:#[^\n]*)?(?:\n|$)")


def _shell_word_password(text: str, m: Match, key: str, kind: str, value: str) -> bool:
    """A word and digits (``Password123``, ``password1``) set bare to a password-named shell,
    .env, compose or Makefile variable: ``DB_PASSWORD=Password123``, ``POSTGRES_PASSWORD:
    Password123`` (an env map), ``DB_PASSWORD := Password123`` (`_SHELL_SEP`), an upper-case name
    anywhere, or a lower-case one (``db_password=Password123``) alone on a .env line: at its
    start (`_LINE_HEAD`), ``=`` right after it, the value ending the line (`_LINE_REST`; a
    keyword argument ``f(db_password=password1,`` is code). Such a line holds no variable
    without ``$``, so the value is a literal, not the variable or type name `_plausible_value`
    takes an identifier with a secret word for in code (the table rule reads ``| DB_PASSWORD |
    Password123 |`` the same way). `value`: the value as the caller trimmed it (a next pair, a
    closing bracket cut off)."""
    if kind != "password" or key != "vu" or m.groupdict().get("sep") is None:  # an XML element has no sep
        return False
    if _WORD_AND_DIGITS.fullmatch(value) is None:
        return False
    name, between = m.group("name"), text[m.end("name") : m.start("vu")]
    if _SHELL_NAME.fullmatch(name) is not None:
        return _SHELL_SEP.fullmatch(between) is not None
    if between != "=" or _ENV_FILE_NAME.fullmatch(name) is None:
        return False
    head_from = max(0, m.start("name") - 64)  # a line head is short: read no further back (linear)
    line_start = text.rfind("\n", head_from, m.start("name")) + 1
    if line_start == 0 and head_from > 0:
        return False
    return (_LINE_HEAD.fullmatch(text[line_start : m.start("name")]) is not None
            and m.group("vu") == value and _LINE_REST.match(text, m.end("vu")) is not None)


def _shell_word_end(text: str, end: int, limit: int = 256) -> int:
    """The end of the shell word whose unquoted start ends at `end`: quoted parts and the
    characters glued after it belong to it (``Password123"x"`` is one word, ``Password123"x"y``),
    up to a space, a shell operator or the end of the line; a quote not closed on the line ends
    it. At most `limit` characters are read (a value's own bound, `_ASSIGN_VALUE`), so the cost
    per value is bounded whatever the text glues on (linear in the text)."""
    stop = min(len(text), end + limit)
    while end < stop:
        c = text[end]
        if c in "\"'":
            close = text.find(c, end + 1, stop)
            if close < 0 or "\n" in text[end:close]:
                break
            end = close + 1
        elif c.isspace() or c in ";&|<>()`":
            break
        else:
            end += 1
    return end


def _any_key(name: str) -> bool:
    """A name that ends in ``key`` after some other word (``clarifai_key``, ``braintreeKey``):
    a vendor's key when its value is generated (`_generated_key`), unless the word before says
    what kind of key it is and that kind holds no credential (`_PLAIN_KEYS`)."""
    if name[-3:].lower() != "key":
        return False  # most names: no split needed
    parts = [p.lower() for p in _CAMEL_PARTS.findall(name)]
    return len(parts) >= 2 and parts[-1] == "key" and parts[-2] not in _PLAIN_KEYS


def _generated_key(value: str) -> bool:
    """A value as a key generator writes it: a token alphabet with a run of 16 letters and digits
    or more that holds both (hex, base62), nothing like words joined by separators or a path."""
    if not 16 <= len(value) <= 256 or not _KEY_ALPHABET.fullmatch(value) or value.count(".") > 2:
        return False
    return any(_letter_and_digit(run) and _spread_enough(run) for run in _KEY_RUN.findall(value))


def _spread_enough(run: str) -> bool:
    """Varied characters, not an alphabet written out ("ABCDEFGHIJ…0123")."""
    steps = sum(1 for a, b in zip(run, run[1:], strict=False) if ord(b) - ord(a) == 1)
    return len(set(run.lower())) >= min(10, len(run) // 2) and steps * 2 < len(run)


def _letter_and_digit(value: str) -> bool:
    return _has_digit(value) and any(c.isalpha() for c in value)


def _label_candidates(text: str, tag_dashes: set[int]) -> Iterator[tuple[str, int, int]]:
    """Values after a label of the one label table (`_LABEL_ASSIGN`): a spaced value whole (quoted,
    or unquoted to the end of its line), else its first word when it looks like a password."""
    for m in _LABEL_ASSIGN.finditer(text):
        if m.group("vq") is not None and len(m.group("vq")) > 128:
            continue
        name = m.group("name").lower()
        english = name in _ENGLISH_LABELS
        cop = (m.group("cop") or "").lower()
        if english and (
            (m.group("mid") and (not cop or cop in _ENGLISH_ONLY_COPULAS)) or cop in _NOT_AFTER_ENGLISH
        ):
            continue  # "password policy: X", "password for X is Y": `_FOR_ASSIGN`'s
        if not english and cop == "was":
            continue  # German "was" is "what"
        loose = name in _LOOSE_LABELS
        if m.group("vq") is not None:
            value = m.group("vq")
            if any(c in " \t" for c in value):
                if _plausible_spaced(value, quoted=True, env=False):
                    yield "generic-secret-assignment", m.start("vq"), m.end("vq")
                continue
        else:
            value = m.group("vu")[:256]
            cut = _NEXT_PAIR.search(value)
            value = value[: cut.start()] if cut else value
            if m.start("vu") in tag_dashes:
                continue  # a tag ("senha:-veja-o-cofre"): `_tag_candidates`'

            if not loose:
                spaced = _rest_of_line(text, m.start("vu"))
                if spaced is not None and _plausible_spaced(spaced, quoted=False, env=False):
                    yield "generic-secret-assignment", m.start("vu"), m.start("vu") + len(spaced)
                    continue
        value = value.rstrip(".,;:)]}>\"'”」»")
        if loose and (
            not (_letter_and_digit(value) and _strong_prose(value, "password")) or _VERSION.fullmatch(value)
        ):
            continue  # "First pass: rename", "mountain pass: 2,000 m", "pass: v1.2.3-rc1"
        start = m.start("vq") if m.group("vq") is not None else m.start("vu")
        if _strong(value) and _plausible_value(value, "password"):
            yield "generic-secret-assignment", start, start + len(value)


_WINDOWS_PATH = _lazy(r"(?:[A-Za-z]:|%[A-Za-z_]+%)\\[\w .$-]+(?:\\[\w .$-]+)*\Z")


def _escaped_json_candidates(text: str) -> Iterator[tuple[str, int, int]]:
    """Values of secret-named keys in JSON written inside a string (`_ESCAPED_JSON`), judged as a
    quoted value of that key would be (its escapes read as the characters they stand for, one
    letter each). Each character is read by at most one value: linear."""
    done = 0
    for m in _ESCAPED_JSON.finditer(text):
        if m.start() < done:
            continue  # inside a value already read
        start = m.end()
        end, done = _escaped_close(text, start, len(m.group("open")))
        if end is None:
            continue  # unclosed: no key inside what was read is read again
        name, value = m.group("name"), text[start:end]
        plain = _unescaped(value)
        kind = _name_kind(name)
        if kind is None and name.lower() in _ENGLISH_LABELS:
            if not (_has_digit(plain) or any(not c.isalnum() for c in plain)):
                continue  # "pass": "partial", "passed": a test result, not a password
            kind = "password"  # "pass", "pw"
        if "\\" in value and _WINDOWS_PATH.match("\\".join(p for p in value.split("\\") if p)):
            continue  # C:\\Users\\bob\\secrets.json, %APPDATA%\\app\\key.pem: where a secret is kept
        if kind is None and _any_key(name) and _generated_key(plain):
            kind = "secret"
        if kind is None or not value or len(value) > _MAX_VALUE:
            continue
        spaced = " " in plain
        if (spaced and _plausible_spaced(plain, quoted=True, env=False)) or (
            not spaced and _plausible_value(plain, kind)
        ):
            yield "generic-secret-assignment", start, end


def _unescaped(value: str) -> str:
    """``value`` with each escape (backslashes and the character after them; ``\\uXXXX`` whole)
    read as one letter ``e``, so the guards see a password's length and shape, not a path's."""
    out: list[str] = []
    i, n = 0, len(value)
    while i < n:
        if value[i] != "\\":
            out.append(value[i])
            i += 1
            continue
        while i < n and value[i] == "\\":
            i += 1
        i += 5 if value[i : i + 1] == "u" and all(c in _HEX for c in value[i + 1 : i + 5]) and i + 5 <= n else 1
        out.append("e")
    return "".join(out)


_HEX = frozenset("0123456789abcdefABCDEF")


def _escaped_close(text: str, start: int, level: int) -> tuple[int | None, int]:
    """Where the value that starts at ``start`` ends: the first quote after exactly ``level``
    backslashes (a quote after more is escaped inside the value), before the line ends and
    within `_MAX_VALUE` characters, or None when there is none; and how far it read."""
    i, stop = start, min(len(text), start + _MAX_VALUE + level + 1)
    while i < stop:
        c = text[i]
        if c == "\n":
            return None, i
        if c != "\\":
            i += 1
            continue
        run = i
        while i < stop and text[i] == "\\":
            i += 1
        if i < len(text) and text[i] == '"' and i - run == level:
            return run, i + 1
        i += 1
    return None, i


def _table_candidates(text: str) -> Iterator[tuple[str, int, int]]:
    """Secrets in markdown tables, one pass over the lines: a cell that names a secret and the
    value in the next cell (``| DB_PASSWORD | Vq7kLm2pZx9w |``), and the cells under a header
    cell that names one (``| service | password |``, ``|---|---|``, ``| db | Vq7kLm2pZx9w |``),
    to the end of the table. A value is one word, in backticks or quotes or bare, that a quoted
    value of that key would pass (`_plausible_value`) and that reads as a credential
    (`_table_value`): a column of "required", "string", "bcrypt" or "see vault" is left alone.

    A line is a row only in a table's shape (GFM): it starts with ``|`` (after indentation or a
    blockquote's ``>``), or it follows a header row and its separator (``Name | Value``,
    ``---|---``). A shell pipeline (``echo password | sha256sum``) is no row; outside a table
    only a secret's name beside a generated value (`_generated_key`) is read (``apiKey |e9e0f062…``)."""
    pos = 0
    header: list[tuple[int, str, bool]] = []  # (column, kind, a column of names) of each secret-named header
    previous: list[tuple[int, int]] | None = None  # the cells of the row above
    previous_line = ""
    in_table = False  # under a header and its separator
    n = len(text)
    while pos < n:
        stop = text.find("\n", pos)
        stop = n if stop < 0 else stop
        line = text[pos:stop]
        if "|" not in line:
            header, previous, in_table = [], None, False
            pos = stop + 1
            continue
        if _TABLE_SEPARATOR.fullmatch(line.rstrip("\r")):
            if previous is not None:
                kinds = (
                    (i, _table_kind(previous_line[a:b]), _names_header(previous_line[a:b]))
                    for i, (a, b) in enumerate(previous)
                )
                header = [(i, kind, names) for i, kind, names in kinds if kind is not None]
                in_table = True
            previous = None
            pos = stop + 1
            continue
        cells = _table_cells(line)
        if not in_table and not line.lstrip(" \t>").startswith("|"):
            # Not a row (maybe a header without outer pipes): only a secret name beside a
            # generated value ("apiKey |e9e0f062…"), never "echo password | sha256sum".
            for i, (a, b) in enumerate(cells[:-1]):
                kind = _table_kind(line[a:b])
                span = _table_value(line, cells[i + 1], kind) if kind is not None else None
                if span is not None and _generated_key(line[span[0] : span[1]]):
                    yield "generic-secret-assignment", pos + span[0], pos + span[1]
            header, previous, previous_line = [], cells, line
            pos = stop + 1
            continue
        found: set[int] = set()
        for i, (a, b) in enumerate(cells[:-1]):
            kind = _table_kind(line[a:b])
            if kind is not None:
                span = _table_value(line, cells[i + 1], kind)
                if span is not None:
                    found.add(span[0])
                    yield "generic-secret-assignment", pos + span[0], pos + span[1]
        for i, kind, names in header:
            if i >= len(cells):
                break  # a short row: no more columns (and a wide header costs a row nothing more)
            span = _table_value(line, cells[i], kind, names=names)
            if span is not None and span[0] not in found:
                yield "generic-secret-assignment", pos + span[0], pos + span[1]
        previous, previous_line = cells, line
        pos = stop + 1


def _table_cells(line: str) -> list[tuple[int, int]]:
    """The (start, end) of each cell's text, spaces trimmed, between the pipes of a row (the
    outer pipes optional; an escaped pipe ``\\|`` stays inside its cell)."""
    bars = [i for i, c in enumerate(line) if c == "|" and (i == 0 or line[i - 1] != "\\")]
    edges = [-1, *bars, len(line)]
    cells = []
    for a, b in zip(edges, edges[1:], strict=False):
        a += 1
        while a < b and line[a] in " \t":
            a += 1
        while b > a and line[b - 1] in " \t\r":
            b -= 1
        cells.append((a, b))
    if cells and cells[0][0] >= cells[0][1] and bars and not line[: bars[0]].strip():
        cells = cells[1:]  # before the leading pipe
    if cells and cells[-1][0] >= cells[-1][1] and bars and not line[bars[-1] + 1 :].strip():
        cells = cells[:-1]  # after the trailing pipe
    return cells


_TABLE_LABEL = _lazy(r"(?i)(?:" + _I18N_PASSWORD_WORDS + "|" + _I18N_GLUED_WORDS + r"|密码|口令|密碼)")
_TABLE_KEY_LABEL = _lazy(r"密钥|秘钥|令牌|金鑰")


def _table_kind(cell: str) -> str | None:
    """The kind of secret a table cell names (`_name_kind`), markup and backticks aside, and a
    label's colon or a qualifier in brackets after it (``Password:``, ``password (prod)``); a
    password label of another language (``密码``, ``Passwort``) names a password."""
    name = cell.strip("`*_ ").rstrip(":：").rstrip()
    if name.endswith((")", "]")):
        cut = max(name.rfind("("), name.rfind("["))
        if cut > 0:
            name = name[:cut].rstrip("`*_ :：")
    if _TABLE_LABEL.fullmatch(name):
        return "password"
    if _TABLE_KEY_LABEL.fullmatch(name):
        return "secret"
    if not _TABLE_NAME.fullmatch(name):
        return None
    return _name_kind(name.replace(" ", "_"))


def _table_value(line: str, cell: tuple[int, int], kind: str, *, names: bool = False) -> tuple[int, int] | None:
    """The span of the credential a table cell holds, or None: the whole cell (in backticks,
    quotes or ``**`` bold, or bare), or its first word when that word is in backticks, quotes or
    bold and words follow (``| `V` (rotated) |``). Only in a column of secret names (`names`:
    `_names_header`) is a name-shaped value with a secret word a name (`_secret_name`); beside
    a secret-named cell or under a password header, ``Password123`` and ``KeyLime2024Pie`` are
    passwords (issue 31, the attack's fourth round)."""
    a, b = cell
    for mark in ("**", "__"):
        if b - a > 4 and line.startswith(mark, a):
            close = line.find(mark, a + 2, b)
            if close > a + 2:
                a, b = a + 2, close  # bold, maybe with words after it
                break
    if b - a >= 2 and line[a] in "`\"'" and line[b - 1] != line[a]:
        close = line.find(line[a], a + 1, b)
        if close > a + 1 and line[close + 1 : close + 2] in (" ", ""):
            b = close + 1  # a quoted first word, then words
    quoted = b - a >= 2 and line[a] in "`\"'" and line[b - 1] == line[a]
    if quoted:
        a, b = a + 1, b - 1
    value = line[a:b]
    literal = kind == "password" and not names and _has_digit(value)  # a cell is no code
    if not value or any(c.isspace() for c in value) or not _plausible_value(value, kind, quoted=quoted, literal=literal):
        return None
    if _WORDY.fullmatch(value) or (names and _secret_name(value)):
        return None  # "required-on-boot" describes; `prod-db-Password2`, `stripeKey2024` name one
    credential = (_strong(value) and (_has_digit(value) or len(value) >= 8)) or (
        kind == "password" and _letters_password(value)
    )
    return (a, b) if credential else None


_NAMES_LAST_WORD = frozenset({"name", "names", "variable", "variables", "var", "vars", "env"})


def _names_header(cell: str) -> bool:
    """A header cell over a column of secret names, not values: ``Secret``, ``Keys``,
    ``Secret name``, ``Env variable``; never ``password`` nor ``token``."""
    words = cell.strip("`*_ ").rstrip(":").replace("_", " ").replace("-", " ").lower().split()
    return bool(words) and (words in (["secret"], ["secrets"], ["key"], ["keys"]) or words[-1] in _NAMES_LAST_WORD)


_NAME_SHAPE = _lazy(r"[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)*")


def _secret_name(value: str) -> bool:
    """A table cell that names a secret rather than holding one: identifier-shaped (words of
    letters and a few digits, camelCase or joined by ``-_.``) with a secret word among its
    words (``prod-db-Password2``, ``stripeKey2024``, ``DB_PASSWORD``)."""
    if not _NAME_SHAPE.fullmatch(value):
        return False
    parts = [p.lower() for p in _CAMEL_PARTS.findall(value)]
    return bool(set(parts) & (_SECRET_PARTS | {"key", "keys", "passwords", "tokens"}))


def _rest_of_line(text: str, start: int) -> str | None:
    """An unquoted value that holds spaces, to the end of its line (a YAML comment cut off), or
    None when it has no space or the line is too long to be a value standing alone."""
    stop = text.find("\n", start, start + _LINE_WINDOW)
    if stop < 0:
        if start + _LINE_WINDOW < len(text):
            return None
        stop = len(text)
    value = text[start:stop]
    comment = value.find(" #")
    if comment >= 0:
        value = value[:comment]
    value = _unspaced_head(value.rstrip(" \t\r"))
    return value if any(c in " \t" for c in value) else None


def _tag_candidates(text: str) -> Iterator[tuple[str, int, int]]:
    """A tag is normalised before it is stored: lower case, spaces made dashes. A tag that reads
    ``label:-value`` is read again with its dashes as spaces (one character for one, so the
    spans are the tag's), and what the other rules find in its value is masked."""
    for m in _TAG_FORM.finditer(text):
        value_at = m.start("value")
        spaced = m.group(0).replace("-", " ")
        for rule, start, end in _assignment_candidates(spaced, tags=False):
            if m.start() + start >= value_at:
                yield rule, m.start() + start, m.start() + end
