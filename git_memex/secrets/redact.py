"""Redaction of memory text on every write path (SPEC §6; design decision D14).

Two steps, in this order:

1. ``<private>…</private>`` spans become ``[REDACTED]``: the author opted out explicitly, so the
   span is gone before any detector (or index) sees it.
2. Secrets are masked in place, never refused: the first 4 characters of the secret value are
   kept, every other character becomes ``x``, so the note still says *which* credential it was
   about while the credential itself is unusable. Line breaks inside a masked span (PEM blocks)
   are kept so that line numbers and line-based git merges still work.

Detection = our own patterns for modern token formats (detect-secrets misses several of them in
markdown, FIELD-NOTES) + a hand-picked set of detect-secrets plugins for the rest + a conservative
high-entropy heuristic for ``name = value`` assignments. detect-secrets' own entropy plugins are not
used: they flag English prose. detect-secrets (and through it ``requests``, ~100 ms) is imported
only when a line could match one of its plugins, so a plain note never pays for it.

Already-masked values (``ghp_xxxx…``, ``huntxxx``) are never reported again, and :func:`redact`
iterates to a fixpoint, so ``redact(redact(t).text) == redact(t)`` with nothing reported the
second time.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence

from git_memex.core.record import record

__all__ = [
    "Finding",
    "Redaction",
    "find_high_entropy_secret",
    "find_secrets",
    "mask",
    "redact",
    "scan_text",
    "strip_private",
]


class _Lazy:
    """A regex compiled on first use.

    Compiling the ~60 patterns below costs 5-10 ms, paid by every short-lived command that merely
    imports this module (hooks, capture); it is paid once, by the first redaction, instead.
    """

    __slots__ = ("_flags", "_pattern", "_rx")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._rx: re.Pattern[str] | None = None

    @property
    def rx(self) -> re.Pattern[str]:
        if self._rx is None:
            self._rx = re.compile(self._pattern, self._flags)
        return self._rx

    @property
    def groups(self) -> int:
        return self.rx.groups

    @property
    def groupindex(self) -> Mapping[str, int]:
        return self.rx.groupindex

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.rx.search(text, pos)

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.rx.match(text, pos)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.rx.fullmatch(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.rx.finditer(text)

    def findall(self, text: str) -> list[str]:
        return self.rx.findall(text)


_lazy = _Lazy


REDACTED = "[REDACTED]"
KEEP = 4  # characters of a secret kept visible (D14)
_MIN_SECRET_LEN = KEEP + 1  # shorter values cannot be masked at all, so are not reported


@record(frozen=True)
class Finding:
    """One secret in a text; ``start``/``end`` delimit the value that gets masked."""

    rule: str
    start: int
    end: int
    line: int


@record(frozen=True)
class Redaction:
    """Result of :func:`redact`: the safe text and what was done to it."""

    text: str
    masked: tuple[str, ...]
    private_spans: int


# --------------------------------------------------------------------------- <private>

_PRIVATE_TAG = _lazy(r"<\s*(/)?\s*private(?:\s[^<>]*)?>", re.IGNORECASE)


def strip_private(text: str) -> tuple[str, int]:
    """Replace each outermost ``<private>`` span with ``[REDACTED]``; return text and count.

    Tags nest (so an inner ``</private>`` cannot leak the rest of an outer span), an unclosed
    tag redacts to the end of the text (the author meant the rest to be private), and a stray
    closing tag is left alone.
    """
    out: list[str] = []
    pos = 0
    depth = 0
    spans = 0
    for m in _PRIVATE_TAG.finditer(text):
        closing = m.group(1) is not None
        if not closing:
            if depth == 0:
                out.append(text[pos : m.start()])
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                out.append(REDACTED)
                spans += 1
                pos = m.end()
    if depth > 0:
        out.append(REDACTED)
        spans += 1
    else:
        out.append(text[pos:])
    return "".join(out), spans


# --------------------------------------------------------------------------- masking


def mask(value: str) -> str:
    """Keep the first 4 characters, turn the rest into ``x`` (same length; line breaks kept)."""
    head, tail = value[:KEEP], value[KEEP:]
    return head + "".join(c if c in "\r\n" else "x" for c in tail)


def _is_masked(value: str) -> bool:
    """True for values already masked by us (``x`` tail) or documentation placeholders (``X``)."""
    tail = value[KEEP:]
    return bool(tail) and all(c in "xX\r\n" for c in tail)


# --------------------------------------------------------------------------- our own patterns

_TB = r"(?<![A-Za-z0-9_-])"  # a token prefix must not sit inside a word ("task-", "risk-")


def _has_digit(v: str) -> bool:
    return any(c.isdigit() for c in v)


def _mixed_case(v: str) -> bool:
    return any(c.islower() for c in v) and any(c.isupper() for c in v)


def _openai_ok(v: str) -> bool:
    # "sk-learn-pipeline-for-ranking" is a name; real keys are random and contain digits.
    return _has_digit(v[3:])


# (rule id, pattern, extra check on the value). The value is group "v" if present, else the match.
_PROVIDER_SPECS: tuple[tuple[str, str, Callable[[str], bool] | None], ...] = (
    (
        "aws-access-key-id",
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])",
        None,
    ),
    (
        "aws-secret-access-key",
        r"(?i)(?<![A-Za-z0-9])(?:aws_?)?secret_?access_?key[\"']?[ \t]*(?:=|:|=>)[ \t]*[\"']?"
        r"(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        None,
    ),
    ("github-fine-grained-pat", r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{40,}", None),
    ("github-pat", r"(?<![A-Za-z0-9_])ghp_[A-Za-z0-9]{30,}", None),
    ("github-oauth-token", r"(?<![A-Za-z0-9_])gho_[A-Za-z0-9]{30,}", None),
    ("github-user-token", r"(?<![A-Za-z0-9_])ghu_[A-Za-z0-9]{30,}", None),
    ("github-app-token", r"(?<![A-Za-z0-9_])ghs_[A-Za-z0-9]{30,}", None),
    ("github-refresh-token", r"(?<![A-Za-z0-9_])ghr_[A-Za-z0-9]{30,}", None),
    ("anthropic-key", _TB + r"sk-ant-[A-Za-z0-9_-]{20,}", None),
    ("openai-key", _TB + r"sk-(?!ant-)[A-Za-z0-9_-]{20,}", _openai_ok),
    ("google-api-key", _TB + r"AIza[0-9A-Za-z_-]{30,}", None),
    ("google-oauth-client-secret", _TB + r"GOCSPX-[A-Za-z0-9_-]{24,}", None),
    ("slack-token", _TB + r"xox[abeoprs]-[A-Za-z0-9-]{10,}", lambda v: _has_digit(v[5:])),
    ("slack-app-token", _TB + r"xapp-\d-[A-Za-z0-9-]{20,}", None),
    (
        "slack-webhook",
        r"(?i)https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/-]{20,})",
        None,
    ),
    ("stripe-secret-key", r"(?<![A-Za-z0-9_])sk_(?:live|test)_[A-Za-z0-9]{20,}", None),
    ("stripe-restricted-key", r"(?<![A-Za-z0-9_])rk_(?:live|test)_[A-Za-z0-9]{20,}", None),
    ("stripe-webhook-secret", r"(?<![A-Za-z0-9_])whsec_[A-Za-z0-9+/=]{20,}", None),
    ("npm-token", r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{30,}", None),
    ("gitlab-pat", _TB + r"glpat-[A-Za-z0-9_-]{20,}", None),
    ("huggingface-token", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9_])", _mixed_case),
    ("jwt", _TB + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}", None),
    # Further vendor prefixes: distinctive enough to need no name beside them.
    ("digitalocean-token", _TB + r"do[opr]_v1_[a-f0-9]{64}", None),
    ("shopify-token", _TB + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", None),
    ("hashicorp-vault-token", _TB + r"hv[sbr]\.[A-Za-z0-9_-]{24,}", None),
    (
        "grafana-token",
        _TB + r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})",
        None,
    ),
    ("postman-api-key", _TB + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", None),
    ("linear-api-key", _TB + r"lin_api_[A-Za-z0-9]{40}", None),
    ("notion-token", _TB + r"ntn_[A-Za-z0-9]{40,}", None),
    ("doppler-token", _TB + r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", None),
    ("sentry-token", _TB + r"sntr[ysu]_[A-Za-z0-9+/=_]{40,}", None),
    ("databricks-token", r"(?<![A-Za-z0-9])dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])", None),
    ("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", None),
    ("google-oauth-token", _TB + r"ya29\.[A-Za-z0-9_-]{30,}", None),
)
_PROVIDERS = tuple((rule, _lazy(p), check) for rule, p, check in _PROVIDER_SPECS)

_PEM_BEGIN = _lazy(r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = _lazy(r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")

# scheme://user:password@host — the password is the value; "localhost:8080@" style ports are not.
_URL_CREDS = _lazy(
    r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/?#@'\"<>]*:(?P<v>[^\s/?#@'\"<>]+)@[A-Za-z0-9\[]"
)
_CLI_PASSWORD = (
    # .netrc: "machine H login U password P"
    _lazy(r"\bmachine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+\"?(?P<v>[^\s\"]+)"),
    # docker/podman/helm … login -p P, and mysql/mysqldump -pP (glued, as mysql wants it). The
    # gap is bounded (1,000 characters): unbounded, every `login` of a long line rescanned it.
    _lazy(r"\blogin\b[^\n]{0,1000}?[ \t]-p[ \t]+(?P<v>[^\s\"']+)"),
    _lazy(r"\bmysql(?:dump|admin|sh)?\b[^\n]{0,1000}?[ \t]-p(?P<v>[^\s\"']+)"),
    # .pgpass: host:port:database:user:password
    _lazy(r"(?m)^[\w.*-]+:(?:\d{1,5}|\*):[\w*.-]+:[\w*.@-]+:(?P<v>\S+)$"),
)
_AZURE_SAS = _lazy(r"[?&]sv=\d{4}-\d\d-\d\d&[^\s\"'<>]*?\bsig=(?P<v>[A-Za-z0-9%+/=]{20,})")
_AUTH_HEADER = _lazy(
    r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:bearer|basic|token|digest)[ \t]+"
    r"(?P<v>[A-Za-z0-9._~+/-]{8,}=*)"
)
_BEARER = _lazy(r"(?i)\bbearer[ \t]+(?P<v>[A-Za-z0-9._~+/-]{20,}=*)")

# --------------------------------------------------------------------------- secret-named assignments

_PASSWORD_PARTS = frozenset(
    {"password", "passwd", "passphrase", "pwd", "pass", "contraseña", "contrasena", "passwort"}
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
    }
)
_CAMEL_PARTS = _lazy(r"[A-Z]+(?![a-z])|[A-Z]?[a-zß-öø-ÿ]+|[0-9]+")


def _name_kind(name: str) -> str | None:
    """Classify a key name: "password", "secret", or None when it does not hold a secret."""
    parts = [p.lower() for p in _CAMEL_PARTS.findall(name)]
    if not parts or parts[-1] in _META_PARTS:
        return None
    if any(w in name.lower() for w in ("password", "passwd", "passphrase")):
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


_ASSIGN_VALUE = (
    r"(?:(?P<q>[\"'`])(?P<vq>[^\n\"'`]{1,256}?)(?P=q)"
    r"|(?P<vu>[!#-&(-_a-~]{1,256}))"  # printable ASCII but quotes (not a negated class: (?i))
)
_ASSIGN = _lazy(
    r"(?<![A-Za-z0-9_.:])(?P<name>[A-Za-z][A-Za-z0-9_.-]{0,63}|contraseña)[\"']?\]?[ \t]*"
    r"(?P<sep>:=|=>|=|:|：)[ \t]*(?!//)" + _ASSIGN_VALUE
)
# "set `API_KEY` to X" in prose, and .NET-style <add key="Password" value="X" />.
_SET_TO = _lazy(
    r"(?i)\bset[ \t]+[`\"']?(?P<name>[A-Za-z][\w.-]{0,63})[`\"']?[ \t]+(?:to|=)[ \t]+"
    + _ASSIGN_VALUE
)
_KEY_VALUE_ATTR = _lazy(
    r"\b(?:key|name)=[\"'](?P<name>[A-Za-z][\w.:-]{0,63})[\"'][ \t]+value=" + _ASSIGN_VALUE
)
_CODE_AFTER = _lazy(r"[ \t]*(?:\||=[^=]|\(|\[)")
# "--password X": values must look strong, since "the --password options" is prose.
_FLAG_ASSIGN = _lazy(r"(?<![\w-])--(?P<name>[A-Za-z][A-Za-z0-9-]{1,40})[ \t]+" + _ASSIGN_VALUE)
_XML_ASSIGN = _lazy(r"<(?P<name>[A-Za-z][\w.-]{0,40})>(?P<vu>[^<>\s]{1,256})</(?P=name)>")
# Prose: "the staging password is Pr0d-S3cret" — only accepted for strong-looking values.
_IS_ASSIGN = _lazy(
    r"(?i)(?<![\w-])(?P<name>password|passwd|passphrase|pwd|secret|token|api[ _-]?key|requirepass"
    r"|masterauth|pass(?=[ \t]+(?:is|was)\b))"
    r"s?(?P<link>[ \t]+(?:(?:is|was|has[ \t]+been|will[ \t]+be)[ \t]+)?"
    r"(?:(?:set|changed|rotated|reset|updated)[ \t]+)?(?:to[ \t]+|:[ \t]*|=[ \t]*)?)"
    + _ASSIGN_VALUE
)
# Cookies carry sessions: "Cookie: session=…", "Set-Cookie: sid=…".
_COOKIE = _lazy(
    r"(?i)\b(?:set-)?cookie:[^\n]{0,1000}?\b(?:session|sess|sid|sessionid|connect\.sid|auth|token|jwt|"
    r"remember_token|_session)[\w.-]*=(?P<v>[^;\s\"']{16,})"
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
        "bitwarden", "lastpass", "onepassword", "environment", "stdin", "file", "sops", "agent",
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


def _plausible_value(value: str, kind: str, quoted: bool = True) -> bool:
    """Precision guard for secret-named assignments: is ``value`` a literal credential?

    ``quoted`` is False for a bare value (YAML, env, code), where identifiers are far more
    likely to be variables and type names than passwords.
    """
    if len(value) < (6 if kind == "password" else 10) or _is_masked(value):
        return False
    low = value.lower()
    if low in _PLACEHOLDER_WORDS or value.startswith(REDACTED):
        return False
    if (
        value[0] in "<{[(*#"
        or value.startswith(("$(", "%(", "{{", "--"))
        or any(c.isspace() for c in value)
    ):
        return False
    if len(set(value)) <= 2 or "%s" in value or "%d" in value:  # "********", printf formats
        return False
    if value[0] == "!" and value[1:].isalpha():  # YAML tag: "!vault |", "!Ref"
        return False
    if ("{" in value and "}" in value) or (
        not quoted and (_KWARG.fullmatch(value) or ("=" in value and "," in value))
    ):
        return False  # a template ("//{}:_authToken") or code ("Token=None")
    if (
        "://" in value
        or _ENV_REF.fullmatch(value)
        or _ENV_NAME.fullmatch(value)
        or _HEADER_NAME.fullmatch(value)  # "Access-Control-Allow-Credentials"
        or _FILE_PATH.match(value)
        or _PLACEHOLDER_SHAPE.fullmatch(value)
        or "(" in value
        or "[" in value
    ):
        return False
    if _DOTTED_REF.fullmatch(value) and all(_REF_SEGMENT.fullmatch(p) for p in value.split(".")):
        return False  # settings.SECRET_KEY, jinja2.pass_context
    if _IDENT.fullmatch(value):
        words = {p.lower() for p in _CAMEL_PARTS.findall(value)}
        if words & (_SECRET_PARTS | {"key", "keys", "passwords", "tokens"}):
            return False  # key_password, AccessToken, credential_tuple: a variable or a type
    if not quoted and (_is_camel_ident(value) or _SNAKE_IDENT.fullmatch(value)):
        return False  # "token: AccessToken", "user, password = proxy_auth": code, not a literal
    if low.startswith(
        ("arn:", "projects/", "vault:", "op://", "ssm:", "sm://", "awskms:", "sha256:")
    ):
        return False  # a reference to where the secret lives
    if kind == "password":
        return low not in _DESCRIPTIVE_WORDS
    if _WORDY.fullmatch(value) or _NUMBERISH.fullmatch(value) or _is_slug(value):
        return False
    return not (value.isalpha() and value.islower())


def _is_slug(value: str) -> bool:
    """A lower-case name made of words ("prod-cert-2024", "v2-compatible"): names a secret."""
    if value.lower() != value:
        return False
    segments = [s for s in re.split(r"[-_./]", value) if s]
    words = sum(1 for s in segments if s.isalpha() and len(s) >= 3)
    return len(segments) >= 2 and words * 2 >= len(segments)


def _is_camel_ident(value: str) -> bool:
    """PascalCase/camelCase made of pronounceable parts ("AccessToken"), unlike random letters."""
    if not _CAMEL_IDENT.fullmatch(value):
        return False
    return all(any(c in "aeiouy" for c in part.lower()) for part in _CAMEL_PARTS.findall(value))


def _strong(value: str) -> bool:
    """For prose forms ("password is X"): letters plus a digit or symbol, like a real password."""
    has_alpha = any(c.isalpha() for c in value)
    return has_alpha and (_has_digit(value) or any(not c.isalnum() for c in value))


def _strong_prose(value: str) -> bool:
    """Stricter, for free prose ("the token will be created.</p>"): no markup, no slugs."""
    return _strong(value) and not any(c in "<>/\\" for c in value) and not _is_slug(value.lower())


# --------------------------------------------------------------------------- high-entropy heuristic

_HE_ASSIGN = _lazy(
    r"(?<![A-Za-z0-9_.:/-])(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,63})[\"']?[ \t]*(?::=|=>|=|:)[ \t]*"
    r"(?!//)[\"'`]?(?P<v>[A-Za-z0-9_\-./+=~]{20,512})(?![A-Za-z0-9_\-./+=~])"
)
_BENIGN_NAME_PARTS = frozenset(
    {
        "hash", "checksum", "digest", "integrity", "sha", "sha1", "sha256", "sha512", "md5",
        "etag", "fingerprint", "commit", "rev", "revision", "id", "uuid", "guid", "ulid",
        "version", "url", "uri", "href", "src", "path", "file", "dir", "name", "title", "image",
        "signature", "sig", "nonce", "salt", "iv", "ref", "branch", "tag", "class",
        "module", "package", "import", "from", "see", "link", "host", "domain", "email",
        "public", "pub", "publishable", "cert", "certificate", "challenge",
    }
)
_HEX = _lazy(r"[0-9a-fA-F]+")
_UUID = _lazy(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_ULID = _lazy(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")
_SEMVER = _lazy(r"v?\d+(?:\.\d+)+(?:[-+][0-9A-Za-z.-]+)?")
_LOWER_PATH = _lazy(r"[~.]?/?(?:[a-z0-9_.@+-]+/)+[a-z0-9_.@+-]*")
_HOSTNAME = _lazy(r"[\w-]+(?:\.[\w-]+)*\.[a-z]{2,12}")
_FILE_EXT = _lazy(r"\.[A-Za-z][A-Za-z0-9]{0,4}$")
_SRI = _lazy(r"(?:sha(?:1|224|256|384|512)|md5)[-:]")
_HE_THRESHOLD = 4.5  # bits/char; hex digests and prose stay near 4.0, random base62/64 goes above


def _pathish(value: str) -> bool:
    """ "app/EC2Co-EcsEl-1TKL…/targetgroup/…", "policy/S3/x.json": a path with word segments."""
    segments = [s for s in value.split("/") if s]
    if len(segments) < 2:
        return False
    if _FILE_EXT.search(segments[-1]):
        return True
    return len(segments) >= 3 and any(s.isalpha() and s.islower() and len(s) >= 4 for s in segments)


def _entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    from math import log2

    n = len(s)
    counts: dict[str, int] = {}
    for c in s:
        counts[c] = counts.get(c, 0) + 1
    return -sum(k / n * log2(k / n) for k in counts.values())


def _is_sequence(value: str) -> bool:
    """An alphabet such as "ABC…XYZabc…789": high entropy, but in order, so not random."""
    steps = sum(1 for a, b in zip(value, value[1:], strict=False) if ord(b) - ord(a) == 1)
    return steps * 2 >= len(value)


def _is_prose_base64(value: str) -> bool:
    """Base64 that decodes to readable text with spaces is encoded prose/data, not a key."""
    import binascii

    v = value.replace("-", "+").replace("_", "/")
    v += "=" * (-len(v) % 4)
    try:
        raw = binascii.a2b_base64(v)
    except (binascii.Error, ValueError):
        return False
    if len(raw) < 12:
        return False
    printable = sum(1 for b in raw if 32 <= b < 127 or b in (9, 10, 13))
    return printable / len(raw) > 0.97 and raw.count(b" ") >= 2


def _high_entropy_value(value: str) -> bool:
    """Is ``value`` (assigned to some non-descriptive name) a random-looking credential?"""
    if _is_masked(value) or len(value) < 20:
        return False
    if not (_has_digit(value) and any(c.isalpha() for c in value)):
        return False  # random 24+ char strings nearly always mix both; identifiers rarely do
    if value.startswith(("/", "~/", "./", "../")) or "=/" in value or _pathish(value):
        return False  # a file path or resource path (mixed-case paths have high entropy too)
    if _HOSTNAME.fullmatch(value.rstrip(".")) or _UUID.search(value):
        return False  # a DNS name, or a resource name built around a UUID
    if sum(value.count(c) for c in "-_./") >= 2 and _is_slug(value.lower()):
        return False  # "Infra-ECS-Cluster-project-d6bb6d5b-EC2CapacityProvider": a name
    if (
        _HEX.fullmatch(value)
        or _UUID.fullmatch(value)
        or _ULID.fullmatch(value)
        or _SEMVER.fullmatch(value)
        or _LOWER_PATH.fullmatch(value)
        or _SRI.match(value)
        or (_DOTTED_REF.fullmatch(value) and "/" not in value)
    ):
        return False
    if _entropy(value) < _HE_THRESHOLD or _is_sequence(value):
        return False
    return not _is_prose_base64(value)


def _high_entropy_candidates(text: str) -> Iterator[tuple[str, int, int]]:
    pos = 0
    while (m := _HE_ASSIGN.search(text, pos)) is not None:
        pos = max(m.end("name"), pos + 1)  # overlapping: "id=deploy_key=…" still sees deploy_key
        name, value = m.group("name"), m.group("v")
        start = m.start("v")
        before = text[max(0, m.start() - 12) : m.start()]
        if "://" in before or "://" in value:
            continue  # a URL, not an assignment
        parts = {p.lower() for p in _CAMEL_PARTS.findall(name)}
        if len(name) <= 2 or parts & (_BENIGN_NAME_PARTS | _NON_SECRET_QUALIFIERS):
            continue  # "h1:<hash>" (go.sum) and "v2:" are scheme prefixes, not names
        if _high_entropy_value(value):
            yield f"high-entropy-secret:{name}", start, start + len(value)


def find_high_entropy_secret(text: str) -> str | None:
    """Rule id of the first high-entropy ``name = value`` assignment in ``text``, else None.

    Mirrors the peer's ``findHighEntropySecret`` so the shared test vectors can target the
    heuristic alone.
    """
    for rule, _start, _end in _high_entropy_candidates(text):
        return rule
    return None


# --------------------------------------------------------------------------- detect-secrets

# A cheap superset test for the plugins below: only lines that match it are handed to them, and
# detect-secrets is imported only once some line does (importing it costs ~75-100 ms).
# KeywordDetector's deny-list words; its quotes-required forms (the only ones used) need a quote.
_KEYWORD_HINT = _lazy(
    r"(?i:pass(?:wd|word)|(?:db|database|key)_?pass|pwd|secret|contrase"
    r"|(?:api|auth|service|account|db|database|priv|private|client)_?key)"
)
_DS_HINT = _lazy(
    # IBM Cloud IAM, IBM COS HMAC, SoftLayer, Cloudant: a keyword assigned a long value, or a URL
    r"(?i:key|pwd|pw|pass|token)[\"'\]]{0,2} *(?:=|:|:=|=>|::)? *[\"']?[\w-]{24}"
    r"|(?i:cloudant\.com|api\.softlayer\.com)"
    # basic auth: the plugin's own pattern; its classes stop at ':', '/' and '@', so one pass
    # (the old `://[^\s]*:[^\s]*@` rescanned the line from every colon: ~40 s on 20k chars)
    r"|://[^:/?#\[\]@!$&'()*+,;=\s]+:[^:/?#\[\]@!$&'()*+,;=\s]+@"
    r"|(?:AC|SK)[a-z0-9]{32}"  # twilio
    r"|[0-9a-z]{32}-us[0-9]"  # mailchimp
    r"|SG\.[\w-]{22}\."  # sendgrid
    r"|sq0csp-"  # square
    r"|[MNO][\w-]{23,25}\.[\w-]{6}\."  # discord
    r"|AccountKey="  # azure storage
    r"|\d{8,10}:[\w-]{35}"  # telegram
    r"|pypi-AgE"  # pypi
    r"|gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|GR1348941"  # gitlab (other token kinds)
    r"|AKC[a-zA-Z0-9]{10}|AP[\dA-F][a-zA-Z0-9]{8}"  # artifactory
)


@functools.lru_cache(maxsize=512)  # find_secrets asks twice per line (format and keyword plugins)
def _ds_hint(line: str) -> bool:
    """Could any chosen detect-secrets plugin match ``line``? (Never False when one would.)"""
    if _DS_HINT.search(line):
        return True
    return any(q in line for q in "\"'`") and _KEYWORD_HINT.search(line) is not None


_DS_REGEX_PLUGINS = (
    ("artifactory", "ArtifactoryDetector"),
    ("azure_storage_key", "AzureStorageKeyDetector"),
    ("basic_auth", "BasicAuthDetector"),
    ("cloudant", "CloudantDetector"),
    ("discord", "DiscordBotTokenDetector"),
    ("gitlab_token", "GitLabTokenDetector"),
    ("ibm_cloud_iam", "IbmCloudIamDetector"),
    ("ibm_cos_hmac", "IbmCosHmacDetector"),
    ("mailchimp", "MailchimpDetector"),
    ("pypi_token", "PypiTokenDetector"),
    ("sendgrid", "SendGridDetector"),
    ("softlayer", "SoftlayerDetector"),
    ("square_oauth", "SquareOAuthDetector"),
    ("telegram_token", "TelegramBotTokenDetector"),
    ("twilio", "TwilioKeyDetector"),
)
# Not used, on purpose: the entropy plugins (flag prose), IPPublicDetector (not a secret), and the
# plugins our own patterns replace with better boundaries and rule ids (AWS, GitHub, GitLab PAT,
# npm, OpenAI, Slack, Stripe, JWT, PrivateKey).

_ds_cache: list[tuple[str, re.Pattern[str], int | None]] | None = None


def _ds_patterns() -> list[tuple[str, re.Pattern[str], int | None]]:
    """(rule id, regex, value group) for the chosen plugins.

    Importing detect-secrets costs ~130 ms (its plugin base imports `requests`, for the network
    verification we never use), paid by a hook or a search whenever a line could match. The
    plugins' patterns are therefore kept in the data root (`cache/detect-secrets-patterns.json`),
    keyed by the installed plugin files' sizes and times: any upgrade rebuilds it from the
    library, and an unreadable cache means the library is imported as before."""
    global _ds_cache
    if _ds_cache is None:
        key, cache = _ds_cache_place()
        specs = _read_ds_cache(cache, key) if cache is not None else None
        if specs is None:
            specs = _ds_specs_from_library()
            if cache is not None:
                _write_ds_cache(cache, key, specs)
        _ds_cache = [(rule, re.compile(source, flags), group) for rule, source, flags, group in specs]
    return _ds_cache


def _bounded(source: str) -> str:
    """KeywordDetector's `(password|…)\\w*` rescans the rest of a long word from every keyword in
    it (quadratic: a line of 20k characters of `passwordpassword…` took ~3 s). A key name has no
    more than 64 word characters after its keyword, so the run is bounded there."""
    return source.replace(")\\w*", ")\\w{0,64}")


def _ds_specs_from_library() -> list[tuple[str, str, int, int | None]]:
    import importlib

    specs: list[tuple[str, str, int, int | None]] = []
    for module, cls_name in _DS_REGEX_PLUGINS:
        cls = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls_name)
        for regex in cls.denylist:
            specs.append((f"detect-secrets:{cls_name}", _bounded(regex.pattern), regex.flags, None))
    from detect_secrets.plugins import keyword

    # Only its quotes-required forms: the unquoted config forms are what our own assignment
    # rule does with more guards ("if password == confirm_password:" is code, not a secret).
    for regex, group in keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP.items():
        specs.append(("detect-secrets:KeywordDetector", _bounded(regex.pattern), regex.flags, group))
    return specs


def _ds_cache_place() -> tuple[str, str | None]:
    """(key of the installed plugins, cache file) or ("", None) when there is nowhere to keep it."""
    import importlib.util
    import os

    try:
        spec = importlib.util.find_spec("detect_secrets")
        if spec is None or not spec.origin:
            return "", None
        plugins = os.path.join(os.path.dirname(spec.origin), "plugins")
        names = [f"{m}.py" for m, _c in _DS_REGEX_PLUGINS] + ["keyword.py", "base.py"]
        parts = []
        for name in names:
            st = os.stat(os.path.join(plugins, name))
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        from git_memex.core.paths import data_root

        # "bounded": the patterns as `_bounded` rewrites them; a cache from before is rebuilt
        return plugins + "|bounded|" + ";".join(parts), str(data_root() / "cache" / "detect-secrets-patterns.json")
    except (OSError, ImportError, ValueError):
        return "", None


def _read_ds_cache(path: str, key: str) -> list[tuple[str, str, int, int | None]] | None:
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        if doc.get("key") != key:
            return None
        specs = [(str(r), str(p), int(f), None if g is None else int(g)) for r, p, f, g in doc["patterns"]]
        for _rule, source, flags, _group in specs:
            re.compile(source, flags)  # a pattern that no longer compiles means a bad cache
        return specs or None
    except (OSError, ValueError, TypeError, KeyError, re.error):
        return None


def _write_ds_cache(path: str, key: str, specs: list[tuple[str, str, int, int | None]]) -> None:
    import contextlib
    import json
    from pathlib import Path

    from git_memex.core.files import atomic_write_text
    from git_memex.errors import MemexError

    with contextlib.suppress(OSError, MemexError):  # a cache: an unusable data root means none
        atomic_write_text(Path(path), json.dumps({"key": key, "patterns": specs}, ensure_ascii=False))


_DS_GENERIC = ("KeywordDetector", "BasicAuthDetector")
_DS_TRIM = " \t\r\n=:\"'"


def _glued(body: str, outside: int, inside: int) -> bool:
    """True when the characters at ``outside`` and ``inside`` are both letters or both digits."""
    if not 0 <= outside < len(body) or not 0 <= inside < len(body):
        return False
    a, b = body[outside], body[inside]
    return (a.isalpha() and b.isalpha()) or (a.isdigit() and b.isdigit())


_KEYWORD_NAME = _lazy(r"[^\W\d][\w.-]*", re.UNICODE)


def _ds_candidates(
    text: str, generic: bool | None = None, use_hint: bool = True
) -> Iterator[tuple[str, int, int]]:
    """Findings of the chosen detect-secrets plugins, line by line (their regexes assume lines).

    ``generic`` selects the name-driven plugins (KeywordDetector, BasicAuthDetector: True) or the
    format-specific ones (False); None gives both. ``use_hint=False`` skips the cheap pre-filter;
    the tests use it to prove the filter loses nothing.
    """
    lines = text.splitlines(keepends=True)
    offset = 0
    for line in lines:
        base = offset
        offset += len(line)
        body = line.rstrip("\r\n")
        if use_hint and not _ds_hint(body):
            continue
        for rule, regex, group in _ds_patterns():
            if generic is not None and generic != rule.endswith(_DS_GENERIC):
                continue
            for m in regex.finditer(body):
                if group is not None:  # KeywordDetector: only with our name/value guards
                    word_start = m.start()
                    while word_start > 0 and (
                        body[word_start - 1].isalnum() or body[word_start - 1] == "_"
                    ):
                        word_start -= 1
                    if word_start > 0 and body[word_start - 1] == ":":
                        continue  # "AWS::MSK::BatchScramSecret": a type name, not a key name
                    start, end = m.span(group)
                    value = body[start:end]
                    head = body[m.start() : start] if m.start() < start else body[end : m.end()]
                    kind = next(
                        (k for n in _KEYWORD_NAME.findall(head) if (k := _name_kind(n))), None
                    )
                    if kind is None or not _plausible_value(value, kind):
                        continue
                elif regex.groups and not rule.endswith("GitLabTokenDetector"):
                    # (GitLab's groups only capture the prefix: detect-secrets reports "glpat".)
                    idx = next((i for i in range(1, regex.groups + 1) if m.group(i)), None)
                    if idx is None:
                        continue
                    start, end = m.span(idx)
                    value = body[start:end]
                    if rule.endswith("BasicAuthDetector"):
                        if not _plausible_value(value, "password"):
                            continue  # same placeholder rules as our url-credentials
                    elif _WORDY.fullmatch(value) and ("-" in value or "_" in value):
                        continue  # a kebab/snake slug after "key", not a credential
                else:
                    start, end = m.span()
                    raw = body[start:end]
                    if raw.startswith("AccountKey="):
                        start += len("AccountKey=")
                    lead = len(raw) - len(raw.lstrip(_DS_TRIM))
                    start = max(start, m.start() + lead)
                    end = m.start() + len(raw.rstrip(_DS_TRIM))
                    # Their patterns have no word boundaries: refuse hits inside longer tokens
                    # ("bot123456789:…" in a Telegram URL is fine: letter before digit).
                    if _glued(body, start - 1, start) or _glued(body, end, end - 1):
                        continue
                value = body[start:end]
                if value.isalpha() and value.isupper():
                    continue  # an acronym run such as "APACHEKAFKA", not a credential
                yield rule, base + start, base + end


# --------------------------------------------------------------------------- detection


def _finditer_names(regex: _Lazy, text: str) -> Iterator[re.Match[str]]:
    """Like ``finditer`` but resumes after the *name*, so "note: password = x" finds both."""
    pos = 0
    while (m := regex.search(text, pos)) is not None:
        yield m
        pos = max(m.end("name"), pos + 1)


def _assignment_candidates(text: str) -> Iterator[tuple[str, int, int]]:
    for regex in (_ASSIGN, _FLAG_ASSIGN, _XML_ASSIGN, _NAME_VALUE, _SET_TO, _KEY_VALUE_ATTR):
        for m in _finditer_names(regex, text):
            kind = _name_kind(m.group("name"))
            if kind is None and regex is _ASSIGN and m.group("sep") in ("=", ":=", "=>"):
                # "pass=…" is a password; "First pass: …" is English, hence "=" only.
                kind = "password" if m.group("name").lower() == "pass" else None
            if kind is None:
                continue
            key = "vq" if regex is not _XML_ASSIGN and m.group("vq") is not None else "vu"
            start, end = m.span(key)
            value = m.group(key)
            if regex is _FLAG_ASSIGN and not _strong(value):
                continue
            if key == "vu":
                if _CODE_AFTER.match(text, m.end(key)):
                    continue  # "token: Foo | None = None", "x = y(": an expression, not a literal
                trimmed = value.rstrip(".,;:)]}>")
                end -= len(value) - len(trimmed)
                value = trimmed
            if _plausible_value(value, kind, quoted=key == "vq"):
                yield "generic-secret-assignment", start, end
    for m in _IS_ASSIGN.finditer(text):
        key = "vq" if m.group("vq") is not None else "vu"
        value = m.group(key).rstrip(".,;:)]}>*_")  # also markdown emphasis: "**policy**"
        name = m.group("name").lower()
        kind = "password" if name.startswith(("p", "req", "mas")) else "secret"
        if kind == "secret" and not m.group("link").strip():
            continue  # "token X" with no verb is too loose ("--next-token X"); "password X" is not
        if _strong_prose(value) and _plausible_value(value, kind):
            yield "generic-secret-assignment", m.start(key), m.start(key) + len(value)
    for m in _CJK_ASSIGN.finditer(text):
        value = m.group("vu").rstrip(".,;:)]}>\"'")
        kind = "password" if m.group("name") in ("密码", "口令", "密碼") else "secret"
        if not m.group("sep").strip() and not _strong(value):
            continue  # "密码 bcrypt 加密": only a strong value may follow a bare space
        if _plausible_value(value, kind):
            yield "generic-secret-assignment", m.start("vu"), m.start("vu") + len(value)


def _pem_candidates(text: str) -> Iterator[tuple[str, int, int]]:
    pos = 0
    while (begin := _PEM_BEGIN.search(text, pos)) is not None:
        end = _PEM_END.search(text, begin.end())
        if end is None:  # truncated key: everything after the header may be key material
            yield "private-key-truncated", begin.start(), len(text)
            return
        yield "private-key-block", begin.start(), end.end()
        pos = end.end()


# Literals every match of a provider pattern contains (lower case: looked up in the lowered
# text, so case-insensitive patterns are covered too). A pattern whose literals are all absent
# cannot match, and is neither compiled nor run: most texts hold none of them, and the 45
# patterns cost ~0.1 ms per text and ~5 ms to compile. tests/test_redact.py checks each list
# against strings generated from its pattern and against the whole secrets corpus.
_PROVIDER_HINTS: dict[str, tuple[str, ...]] = {
    "aws-access-key-id": ("akia", "asia", "abia", "acca", "a3t"),
    "aws-secret-access-key": ("secret",),
    "github-fine-grained-pat": ("github_pat_",),
    "github-pat": ("ghp_",),
    "github-oauth-token": ("gho_",),
    "github-user-token": ("ghu_",),
    "github-app-token": ("ghs_",),
    "github-refresh-token": ("ghr_",),
    "anthropic-key": ("sk-ant-",),
    "openai-key": ("sk-",),
    "google-api-key": ("aiza",),
    "google-oauth-client-secret": ("gocspx-",),
    "slack-token": ("xox",),
    "slack-app-token": ("xapp-",),
    "slack-webhook": ("hooks.slack.com",),
    "stripe-secret-key": ("sk_live_", "sk_test_"),
    "stripe-restricted-key": ("rk_live_", "rk_test_"),
    "stripe-webhook-secret": ("whsec_",),
    "npm-token": ("npm_",),
    "gitlab-pat": ("glpat-",),
    "huggingface-token": ("hf_",),
    "jwt": ("eyj",),
    "digitalocean-token": ("_v1_",),
    "shopify-token": ("shpat_", "shpca_", "shppa_", "shpss_"),
    "hashicorp-vault-token": ("hvs.", "hvb.", "hvr."),
    "grafana-token": ("glsa_", "glc_"),
    "postman-api-key": ("pmak-",),
    "linear-api-key": ("lin_api_",),
    "notion-token": ("ntn_",),
    "doppler-token": ("dp.",),
    "sentry-token": ("sntry_", "sntrs_", "sntru_"),
    "databricks-token": ("dapi",),
    "age-secret-key": ("age-secret-key-1",),
    "google-oauth-token": ("ya29.",),
}


_HINT_RULES: dict[str, set[str]] = {}
for _rule, _hints in _PROVIDER_HINTS.items():
    for _hint in _hints:
        _HINT_RULES.setdefault(_hint, set()).add(_rule)


def _provider_candidates(text: str, use_hint: bool = True) -> Iterator[tuple[str, int, int]]:
    if use_hint:
        low = text.lower()
        hinted = {rule for hint, rules in _HINT_RULES.items() if hint in low for rule in rules}
        if not hinted:
            return
    for rule, regex, check in _PROVIDERS:
        if use_hint and rule not in hinted:
            continue
        for m in regex.finditer(text):
            group = "v" if "v" in regex.groupindex else 0
            value = m.group(group)
            if check is None or check(value):
                yield rule, m.start(group), m.end(group)


def _user_candidates(text: str, patterns: Sequence[str]) -> Iterator[tuple[str, int, int]]:
    for source in patterns:
        try:
            regex = re.compile(source)
        except (re.error, TypeError, ValueError):
            continue  # a bad user pattern must not break every write
        for m in regex.finditer(text):
            yield source, m.start(), m.end()


# Like _PROVIDER_HINTS: a literal every match contains (in the lowered text), so that a text
# without it skips the pattern. tests/test_redact.py holds each against generated matches.
_WEB_HINTS = {
    "azure": ("sig=",),
    "cookie": ("cookie:",),
    "netrc-password": ("machine",),
    "login-password": ("login",),
    "mysql-password": ("mysql",),
    "pgpass-password": (":",),
    "url-credentials": ("://",),
    "authorization-header": ("authorization",),
    "bearer": ("bearer",),
}


def _web_hinted(low: str, key: str, use_hint: bool) -> bool:
    return not use_hint or any(h in low for h in _WEB_HINTS[key])


def _web_candidates(text: str, use_hint: bool = True) -> Iterator[tuple[str, int, int]]:
    low = text.lower() if use_hint else ""
    if _web_hinted(low, "azure", use_hint):
        for m in _AZURE_SAS.finditer(text):
            yield "azure-sas-signature", m.start("v"), m.end("v")
    if _web_hinted(low, "cookie", use_hint):
        for m in _COOKIE.finditer(text):
            if not _is_masked(m.group("v")):
                yield "session-cookie", m.start("v"), m.end("v")
    for regex, rule, key in zip(
        _CLI_PASSWORD,
        ("netrc-password", "cli-password", "cli-password", "pgpass-password"),
        ("netrc-password", "login-password", "mysql-password", "pgpass-password"),
        strict=True,
    ):
        if not _web_hinted(low, key, use_hint):
            continue
        for m in regex.finditer(text):
            value = m.group("v")
            if _plausible_value(value, "password"):
                yield rule, m.start("v"), m.end("v")
    for m in (_URL_CREDS.finditer(text) if _web_hinted(low, "url-credentials", use_hint) else ()):
        value = m.group("v")
        if value.isdigit() and len(value) <= 5:
            continue  # host:port@…, not a password
        if _plausible_value(value, "password"):
            yield "url-credentials", m.start("v"), m.end("v")
    for regex, key in ((_AUTH_HEADER, "authorization-header"), (_BEARER, "bearer")):
        if not _web_hinted(low, key, use_hint):
            continue
        for m in regex.finditer(text):
            value = m.group("v")
            if regex is _BEARER and not (_has_digit(value) and any(c.isalpha() for c in value)):
                continue
            if not _is_masked(value):
                yield "authorization-header", m.start("v"), m.end("v")


def find_secrets(text: str, extra_patterns: Sequence[str] = ()) -> list[Finding]:
    """All secrets in ``text``: non-overlapping, sorted by position, already-masked ones skipped.

    Families are tried from the most specific to the most heuristic; a later family never claims
    a span that overlaps one already claimed, so ``api_key = "sk-…"`` reports ``openai-key``.
    ``extra_patterns`` are user regexes; their rule id is the regex source.
    """
    families: list[Iterator[tuple[str, int, int]]] = [
        _pem_candidates(text),
        _provider_candidates(text),
        _user_candidates(text, extra_patterns),
        _ds_candidates(text, generic=False),
        _web_candidates(text),
        _assignment_candidates(text),
        _ds_candidates(text, generic=True),
        _high_entropy_candidates(text),
    ]
    taken: list[tuple[int, int, str]] = []
    for family in families:
        for rule, start, end in family:
            if end - start < _MIN_SECRET_LEN or _is_masked(text[start:end]):
                continue
            if any(start < e and s < end for s, e, _ in taken):
                continue
            taken.append((start, end, rule))
    if not taken:
        return []
    taken.sort()
    return [Finding(rule, s, e, text.count("\n", 0, s) + 1) for s, e, rule in taken]


def _apply(text: str, findings: Sequence[Finding]) -> str:
    out: list[str] = []
    pos = 0
    for f in findings:
        out.append(text[pos : f.start])
        out.append(mask(text[f.start : f.end]))
        pos = f.end
    out.append(text[pos:])
    return "".join(out)


def redact(text: str, extra_patterns: Sequence[str] = ()) -> Redaction:
    """Strip ``<private>`` spans, then mask every secret in place (never refuse the write).

    Masking repeats until nothing is found, so the result is a fixpoint: redacting it again
    changes nothing and reports nothing. Each round masks at least one more character, so the
    loop ends.
    """
    stripped, spans = strip_private(text)
    found: list[Finding] = []
    current = stripped
    for _ in range(64):
        round_findings = find_secrets(current, extra_patterns)
        if not round_findings:
            break
        current = _apply(current, round_findings)
        found.extend(round_findings)
    found.sort(key=lambda f: (f.start, f.end))
    return Redaction(current, tuple(f.rule for f in found), spans)


def scan_text(text: str, extra_patterns: Sequence[str] = ()) -> list[Finding]:
    """Findings in text as stored (for ``scan`` and the pre-commit hook); no ``<private>`` pass.

    Values already masked by :func:`redact` are never reported, so stored memories scan clean.
    """
    return find_secrets(text, extra_patterns)
