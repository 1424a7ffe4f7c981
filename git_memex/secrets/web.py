"""Detector family 2: credentials in web, command-line and manifest forms.

URL user:password, .netrc / .pgpass / `login -p` / `mysql -p` / `curl -u` / `sshpass -p` passwords, Azure SAS signatures,
Authorization and Bearer headers, session cookies.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from git_memex.secrets.assignments import _generated_key, _plausible_value, _strong
from git_memex.secrets.masking import _has_digit, _is_masked, _lazy

# scheme://user:password@host — the password is the value; "localhost:8080@" style ports are not.
# People paste passwords with "#", "?", "/" and "@" unencoded ("postgresql://u:Vq7#kLm@db/app",
# "redis://:p@ss/w0rd@host"), so the password runs to the last "@" followed by a host before the
# URL ends (RE2's greedy run, then `_url_candidates` in Python): a user part comes first, and it
# holds none of ":/?#@", so a URL without "user:" ("https://example.com/page#section",
# "https://mastodon.social/@alice") has no password at all. A user part holds no "[" either: an
# IPv6 host ("http://[::1]:4873/@types/node") is no "user:". An empty password
# ("https://user:@host/@bob") is none: the value never starts with "@".
_URL_CREDS = _lazy(
    r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/?#@\[\]'\"<>]*:(?P<v>[^\s@'\"<>][^\s'\"<>]*)@[A-Za-z0-9\[]"
)
# Inside a run the loose form rejected (a port and a path, a URL in a URL's query), the strict
# form finds a password free of those characters: each character is read by one loose match and
# at most one strict pass, so the whole stays linear.
_URL_CREDS_STRICT = _lazy(
    r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/?#@\[\]'\"<>]*:(?P<v>[^\s/?#@'\"<>]+)@[A-Za-z0-9\[]"
)
_PORT_PATH = _lazy(r"[0-9]{1,5}(?:[/?#]|\Z)")
_CLI_PASSWORD = (
    # .netrc: "machine H login U password P"
    _lazy(r"\bmachine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+\"?(?P<v>[^\s\"]+)"),
    # docker/podman/helm … login -p P, and mysql/mysqldump -pP (glued, as mysql wants it, or
    # quoted: -p'P' inside an alias). The gap to the flag is the rest of the line (RE2: one pass).
    _lazy(r"\blogin\b[^\n]*?[ \t]-p[ \t]+(?P<v>[^\s\"']+)"),
    _lazy(r"\bmysql(?:dump|admin|sh)?\b[^\n]*?[ \t]-p[\"']?(?P<v>[^\s\"']+)"),
    # .pgpass: host:port:database:user:password
    _lazy(r"(?m)^[\w.*-]+:(?:\d{1,5}|\*):[\w*.-]+:[\w*.@-]+:(?P<v>\S+)$"),
    # curl -u user:password in its spellings: -uUSER:PW, -su 'u:p' (flags before it), --user=,
    # --user "u:p", --user u:'p'; -U and --proxy-user for the proxy's; on a line continued with "\"
    _lazy(r"\bcurl\b(?:[^\n]|\\\r?\n)*?[ \t](?:-[A-Za-z]*[uU][ \t]*|--(?:proxy-)?user(?:[ \t]+|=|(?:[\"'])))[\"']?"
          r"[^\s:\"'$]{1,100}:[\"']?(?P<v>[^\s\"']+)"),
    # sshpass -p password (glued or not); -e and -f read it from elsewhere
    _lazy(r"\bsshpass\b[^\n]*?[ \t]-p[ \t]*[\"']?(?P<v>[^\s\"']+)"),
    # ldapsearch/ldapwhoami/… -w password (glued or not; -W prompts, -y reads a file)
    _lazy(r"\bldap(?:search|modify|add|delete|whoami|passwd|compare|exop|modrdn|url)\b[^\n]*?[ \t]-w[ \t]*"
          r"[\"']?(?P<v>[^\s\"']+)"),
    # redis-cli -a password, --pass password
    _lazy(r"\bredis-cli\b[^\n]*?[ \t](?:-a|--pass)[ \t]+[\"']?(?P<v>[^\s\"']+)"),
    # keytool/jarsigner -storepass P, -keypass P (and their src/dest forms); openssl -passin pass:P
    _lazy(r"(?:^|[ \t])-(?:src|dest)?(?:store|key)pass[ \t]+[\"']?(?P<v>[^\s\"']+)"),
    _lazy(r"(?:^|[ \t])-pass(?:in|out)?[ \t]+[\"']?pass:(?P<v>[^\s\"']+)"),
)
# htpasswd -b FILE USER PW, -nb USER PW (flags glued in any order): the password is the third
# (with -n: the second) word after the flags; read in Python from the rest of the line.
_HTPASSWD = _lazy(r"\bhtpasswd\b(?P<rest>[^\n]*)")
# Microsoft Teams incoming webhooks: the path after webhookb2/ is the credential (Microsoft's
# documented shape: GROUP-GUID@TENANT-GUID/IncomingWebhook/32 hex/CONNECTOR-GUID, then maybe more).
_GUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_TEAMS_WEBHOOK = _lazy(
    r"(?i)https://[A-Za-z0-9.-]+\.webhook\.office\.com/webhookb2/"
    rf"(?P<v>{_GUID}@{_GUID}/IncomingWebhook/[0-9a-f]{{32}}/{_GUID}(?:/[A-Za-z0-9_-]+)?)"
)
# .npmrc: //registry/:_authToken=…, _auth=… (base64 user:password), _password=… (base64)
_NPMRC = _lazy(r"//[^\s/:]+(?:/[^\s:]*)?/?:_(?:authToken|auth|password)[ \t]*=[ \t]*[\"']?(?P<v>[^\s\"']+)")
# A key in a URL's query: "?key=…", "&api_key=…", "?access_token=…" (Google Maps, most REST APIs
# that take the key in the URL). The value must read as generated (`_query_key`).
_QUERY_KEY = _lazy(
    r"[?&](?P<name>(?i:key|api[_-]?key|apikey|access[_-]?key|access[_-]?token|auth[_-]?token|token|"
    r"client[_-]?secret|secret|private[_-]?key|app[_-]?key))=(?P<v>[A-Za-z0-9._~%+/-]{16,256})(?:[&#\s\"'<>)\]]|\Z)"
)
# Docker's config.json (`~/.docker/config.json`, `DOCKER_AUTH_CONFIG`, a `.dockerconfigjson`):
# "auths": {"<registry>": {"auth": "<base64 of user:password>"}}, also as escaped JSON inside a
# string (`\"auth\":\"…\"`). Only a value that decodes to `user:password` is taken, so any
# JSON "auth" of that kind counts (npm's and others' are the same scheme).
_DOCKER_AUTH = _lazy(r"\\?\"auth\\?\"[ \t]*:[ \t]*\\?\"(?P<v>[A-Za-z0-9+/]{8,1000}={0,2})\\?\"")
_AZURE_SAS = _lazy(r"[?&]sv=\d{4}-\d\d-\d\d&[^\s\"'<>]*?\bsig=(?P<v>[A-Za-z0-9%+/=]{20,})")
# With its scheme, or without one (`Authorization: <api key>`: some APIs take the bare key); a
# bare value must look generated (`_web_candidates`).
_AUTH_HEADER = _lazy(
    r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?P<scheme>bearer|basic|token|digest)[ \t]+)?"
    r"(?P<v>[A-Za-z0-9._~+/-]{8,}=*)"
)
_BEARER = _lazy(r"(?i)\bbearer[ \t]+(?P<v>[A-Za-z0-9._~+/-]{20,}=*)")
# Cookies carry sessions: "Cookie: session=…", "Set-Cookie: sid=…".
_COOKIE = _lazy(
    r"(?i)\b(?:set-)?cookie:[^\n]*?\b(?:session|sess|sid|sessionid|connect\.sid|auth|token|jwt|"
    r"remember_token|_session)[\w.-]*=(?P<v>[^;\s\"']{16,})"
)


# Kubernetes Secret manifests: every value under `data:` / `stringData:` is secret data (base64
# under `data:`), whatever its key is called. The document must say `kind: Secret`.
_K8S_KIND = _lazy(r"(?im)^[ \t]*kind:[ \t]*[\"']?secret[\"']?[ \t]*\r?$")
_K8S_DATA = _lazy(r"(?m)^(?P<indent>[ \t]*)(?P<block>data|stringData):[ \t]*\r?\n")
_K8S_DOC = _lazy(r"(?m)^---[ \t]*\r?$")
_K8S_ENTRY = _lazy(r"(?P<indent>[ \t]+)[\"']?(?P<key>[\w.-]{1,253})[\"']?:[ \t]*(?P<v>[^\n]*)")


def _k8s_candidates(text: str) -> Iterator[tuple[str, int, int]]:
    """The values of a Secret's `data:`/`stringData:` block (one line each, or each line of a
    `>`/`|` block scalar; comment lines skipped), in every YAML document of `text` that says
    `kind: Secret`, but a certificate's (`tls.crt`, `ca.crt`); a value shorter than 12 characters
    under `data:` (base64 of fewer than 8 bytes: "YmFyCg==") or 8 under `stringData:` is left
    alone. One pass over the block's lines; a document's kind is read once."""
    bounds = [0, *(m.start() for m in _K8S_DOC.finditer(text)), len(text)]
    secret_doc: dict[int, bool] = {}
    for m in _K8S_DATA.finditer(text):
        doc = bisect.bisect_right(bounds, m.start()) - 1
        if doc not in secret_doc:
            secret_doc[doc] = _K8S_KIND.search(text[bounds[doc] : bounds[doc + 1]]) is not None
        if not secret_doc[doc]:
            continue
        depth = len(m.group("indent").expandtabs(4))
        shortest = 12 if m.group("block") == "data" else 8  # base64 of 8 bytes; a raw value of 8
        inner = None  # the indentation of the block's entries, once read
        pos = m.end()
        while pos < len(text):
            line_end = text.find("\n", pos)
            line_end = len(text) if line_end < 0 else line_end
            line = text[pos:line_end]
            if line.lstrip(" \t").startswith("#") or not line.strip():
                pos = line_end + 1
                continue
            entry = _K8S_ENTRY.match(line)
            if entry is None or len(entry.group("indent").expandtabs(4)) <= depth:
                break
            inner = len(entry.group("indent").expandtabs(4))
            public = entry.group("key").endswith(".crt")  # a certificate (tls.crt, ca.crt) is public
            vs = pos + entry.start("v")
            value = entry.group("v").rstrip(" \t\r")
            if value[:1] in (">", "|"):  # a block scalar: each more indented line after it
                cur = line_end + 1
                while cur < len(text):
                    nxt = text.find("\n", cur)
                    nxt = len(text) if nxt < 0 else nxt
                    part = text[cur:nxt].rstrip(" \t\r")
                    body = part.lstrip(" \t")
                    if not body or len(part[: len(part) - len(body)].expandtabs(4)) <= inner:
                        break
                    if len(body) >= shortest and not public:
                        yield "kubernetes-secret-data", cur + len(part) - len(body), cur + len(part)
                    line_end, cur = nxt, nxt + 1
            else:
                if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2:
                    vs, value = vs + 1, value[1:-1]
                if len(value) >= shortest and not public and not value.startswith(("${", "{{", "#")):
                    yield "kubernetes-secret-data", vs, vs + len(value)
            pos = line_end + 1


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
    "ldap-password": ("ldap",),
    "redis-password": ("redis-cli",),
    "keytool-password": ("pass ",  "pass\t"),
    "openssl-password": ("pass:",),
    "htpasswd": ("htpasswd",),
    "teams-webhook": ("webhook.office.com",),
    "npmrc": (":_auth", ":_password"),
    "query-key": ("key=", "token=", "secret="),
    "docker-auth": ('auth"', 'auth\\"'),
    "url-credentials": ("://",),
    "authorization-header": ("authorization",),
    "bearer": ("bearer",),
}


# Flags whose value must look like a password (letters and a digit or a symbol): prose names them.
_FLAG_WORDS = frozenset({"ldap-password", "redis-password", "keytool-password", "openssl-password"})


def _user_password_b64(value: str) -> bool:
    """Base64 of ``user:password`` (printable, a colon after a non-empty user) whose password
    passes the guard of any password (`_plausible_value`: not ``pass``, ``my_password``)."""
    import base64
    import binascii

    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, colon, password = raw.partition(":")
    return bool(colon and user and raw.isprintable()) and _plausible_value(password, "password")


def _web_hinted(low: str, key: str, use_hint: bool) -> bool:
    return not use_hint or any(h in low for h in _WEB_HINTS[key])


def _htpasswd_password(rest: str) -> tuple[int, int, str] | None:
    """(start, end, value) in `rest` (what follows "htpasswd" on its line) of the password given
    with -b: after the flags, FILE USER PASSWORD, or USER PASSWORD with -n; None without -b."""
    words: list[tuple[int, int]] = []
    pos = 0
    while pos < len(rest):
        while pos < len(rest) and rest[pos] in " \t":
            pos += 1
        start = pos
        while pos < len(rest) and rest[pos] not in " \t":
            pos += 1
        if pos > start:
            words.append((start, pos))
    flags = ""
    positional: list[tuple[int, int]] = []
    for s, e in words:
        word = rest[s:e]
        if not positional and word.startswith("-") and word[1:].isalpha():
            flags += word[1:]
        elif not positional and word.isdigit() and flags.endswith(("C", "r")):
            continue  # -C cost, -r rounds
        else:
            positional.append((s, e))
    if "b" not in flags:
        return None
    at = 1 if "n" in flags else 2
    if len(positional) <= at:
        return None
    s, e = positional[at]
    if rest[s] in "\"'" and e - s >= 2 and rest[e - 1] == rest[s]:
        s, e = s + 1, e - 1
    return s, e, rest[s:e]


def _url_candidates(text: str) -> Iterator[tuple[str, int, int]]:
    """URL passwords (`_URL_CREDS`): to the last "@" before a host; a port and a path
    ("host:3000/@alice") or a URL inside the run ("a://u:p@h,b://v:q@k") is no password, and the
    match is read again by the strict form (`_URL_CREDS_STRICT`), whose password stops at the
    first "/", "?", "#" or "@"."""
    for m in _URL_CREDS.finditer(text):
        value = m.group("v")
        if (value.isdigit() and len(value) <= 5) or _PORT_PATH.match(value) or "://" in value:
            at = m.start()
            for inner in _URL_CREDS_STRICT.finditer(text[at : m.end()]):
                v = inner.group("v")
                if not (v.isdigit() and len(v) <= 5) and _plausible_value(v, "password"):
                    yield "url-credentials", at + inner.start("v"), at + inner.end("v")
            continue
        if _plausible_value(value, "password") or (
            any(c in value for c in "/?#@") and _plausible_value(_url_pieces(value), "password")
        ):
            yield "url-credentials", m.start("v"), m.end("v")


def _url_pieces(value: str) -> str:
    """A URL password that holds "/", "?", "#" or "@" as the password guard reads it: those
    characters made "!", so a leading "/" or "#" is not taken for a path or a comment."""
    return value.translate(_URL_SPECIALS)


_URL_SPECIALS = str.maketrans("/?#@", "!!!!")


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
        ("netrc-password", "cli-password", "cli-password", "pgpass-password", "cli-password", "cli-password",
         "cli-password", "cli-password", "cli-password", "cli-password"),
        ("netrc-password", "login-password", "mysql-password", "pgpass-password", "curl-password",
         "sshpass-password", "ldap-password", "redis-password", "keytool-password", "openssl-password"),
        strict=True,
    ):
        if not _web_hinted(low, key, use_hint):
            continue
        for m in regex.finditer(text):
            value = m.group("v")
            if key in _FLAG_WORDS and not _strong(value):
                continue  # "redis-cli -a prints a warning": a word after the flag, not a password
            if _plausible_value(value, "password"):
                yield rule, m.start("v"), m.end("v")
    if not use_hint or ("secret" in low and "data:" in low and "kind" in low):
        yield from _k8s_candidates(text)
    if _web_hinted(low, "htpasswd", use_hint):
        for m in _HTPASSWD.finditer(text):
            found = _htpasswd_password(m.group("rest"))
            if found is not None and _strong(found[2]) and _plausible_value(found[2], "password"):
                yield "cli-password", m.start("rest") + found[0], m.start("rest") + found[1]
    if _web_hinted(low, "teams-webhook", use_hint):
        for m in _TEAMS_WEBHOOK.finditer(text):
            yield "teams-webhook", m.start("v"), m.end("v")
    if _web_hinted(low, "npmrc", use_hint):
        for m in _NPMRC.finditer(text):
            value = m.group("v")
            if len(value) >= 8 and not _is_masked(value) and "${" not in value and "{{" not in value:
                yield "npmrc-auth-token", m.start("v"), m.end("v")
    for m in (_DOCKER_AUTH.finditer(text) if _web_hinted(low, "docker-auth", use_hint) else ()):
        if _user_password_b64(m.group("v")):
            yield "docker-registry-auth", m.start("v"), m.end("v")
    for m in (_QUERY_KEY.finditer(text) if _web_hinted(low, "query-key", use_hint) else ()):
        if _generated_key(m.group("v")) and not _is_masked(m.group("v")):
            yield "url-query-key", m.start("v"), m.end("v")
    if _web_hinted(low, "url-credentials", use_hint):
        yield from _url_candidates(text)
    for regex, key in ((_AUTH_HEADER, "authorization-header"), (_BEARER, "bearer")):
        if not _web_hinted(low, key, use_hint):
            continue
        for m in regex.finditer(text):
            value = m.group("v")
            if (regex is _BEARER or m.group("scheme") is None) and not (_has_digit(value) and any(c.isalpha() for c in value)):
                continue
            if regex is _AUTH_HEADER and m.group("scheme") is None and (
                len(value) < 16 or value.lower() in ("bearer", "basic", "token", "digest")
            ):
                continue  # "Authorization: required", a scheme with nothing after it
            if not _is_masked(value):
                yield "authorization-header", m.start("v"), m.end("v")

