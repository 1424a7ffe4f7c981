"""Detector family 2: credentials in web and command-line forms.

URL user:password, .netrc / .pgpass / `login -p` / `mysql -p` / `curl -u` / `sshpass -p` passwords, Azure SAS signatures,
Authorization and Bearer headers, session cookies.
"""

from __future__ import annotations

from collections.abc import Iterator

from git_memex.secrets.assignments import _plausible_value
from git_memex.secrets.masking import _has_digit, _is_masked, _lazy

# scheme://user:password@host — the password is the value; "localhost:8080@" style ports are not.
_URL_CREDS = _lazy(
    r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/?#@'\"<>]*:(?P<v>[^\s/?#@'\"<>]+)@[A-Za-z0-9\[]"
)
_CLI_PASSWORD = (
    # .netrc: "machine H login U password P"
    _lazy(r"\bmachine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+\"?(?P<v>[^\s\"]+)"),
    # docker/podman/helm … login -p P, and mysql/mysqldump -pP (glued, as mysql wants it, or
    # quoted: -p'P' inside an alias). The gap to the flag is the rest of the line (RE2: one pass).
    _lazy(r"\blogin\b[^\n]*?[ \t]-p[ \t]+(?P<v>[^\s\"']+)"),
    _lazy(r"\bmysql(?:dump|admin|sh)?\b[^\n]*?[ \t]-p[\"']?(?P<v>[^\s\"']+)"),
    # .pgpass: host:port:database:user:password
    _lazy(r"(?m)^[\w.*-]+:(?:\d{1,5}|\*):[\w*.-]+:[\w*.@-]+:(?P<v>\S+)$"),
    # curl -u user:password, curl --user[=]user:password (quoted or not)
    _lazy(r"\bcurl\b[^\n]*?[ \t](?:-u[ \t]*|--user(?:[ \t]+|=|(?:[\"'])))[\"']?[^\s:\"'$]{1,100}:"
          r"(?P<v>[^\s\"']+)"),
    # sshpass -p password (glued or not); -e and -f read it from elsewhere
    _lazy(r"\bsshpass\b[^\n]*?[ \t]-p[ \t]*[\"']?(?P<v>[^\s\"']+)"),
)
_AZURE_SAS = _lazy(r"[?&]sv=\d{4}-\d\d-\d\d&[^\s\"'<>]*?\bsig=(?P<v>[A-Za-z0-9%+/=]{20,})")
_AUTH_HEADER = _lazy(
    r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:bearer|basic|token|digest)[ \t]+"
    r"(?P<v>[A-Za-z0-9._~+/-]{8,}=*)"
)
_BEARER = _lazy(r"(?i)\bbearer[ \t]+(?P<v>[A-Za-z0-9._~+/-]{20,}=*)")
# Cookies carry sessions: "Cookie: session=…", "Set-Cookie: sid=…".
_COOKIE = _lazy(
    r"(?i)\b(?:set-)?cookie:[^\n]*?\b(?:session|sess|sid|sessionid|connect\.sid|auth|token|jwt|"
    r"remember_token|_session)[\w.-]*=(?P<v>[^;\s\"']{16,})"
)


# Like _PROVIDER_HINTS: a literal every match contains (in the lowered text), so that a text
# without it skips the pattern. tests/secrets/test_redact.py holds each against generated matches.
_WEB_HINTS = {
    "azure": ("sig=",),
    "cookie": ("cookie:",),
    "netrc-password": ("machine",),
    "login-password": ("login",),
    "mysql-password": ("mysql",),
    "pgpass-password": (":",),
    "curl-password": ("curl",),
    "sshpass-password": ("sshpass",),
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
        ("netrc-password", "cli-password", "cli-password", "pgpass-password", "cli-password", "cli-password"),
        ("netrc-password", "login-password", "mysql-password", "pgpass-password", "curl-password",
         "sshpass-password"),
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

