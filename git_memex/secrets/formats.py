"""Vendor token formats: the table every vendor-token detector reads (issue 31, docs/security.md).

Each `Format` is a fact about one credential format: its prefix, alphabet and length, from the
vendor's documentation, gitleaks' MIT-licensed rule set (cmd/generate/config/rules/*.go), or
another scanner's published detector (trufflehog's pkg/detectors/<name>, detect-secrets'
plugins, secretlint's rules); each row names its source in `source`. The patterns are written
here, in RE2 syntax: no lookaround, no backreferences, so matching is linear in the text.

Contract of a row (`Format`):

- ``pattern``: RE2; the named group ``v`` is the part to mask if present, else the whole match.
- ``keep``: how many leading characters of that part are a documented, non-secret prefix that may
  stay visible (4 for ``ghp_``); 0 when nothing is a fixed prefix (a value found by its keyword).
- ``check``: an extra test on the part after its ``keep`` prefix, or None (a value must not read
  as a placeholder, must hold a digit…). A row of a format with a documented checksum passes
  when the checksum verifies, whatever this test says.
- ``left`` / ``right``: bodies of regex character classes: the character just before / after the
  whole match must not be one of them ("" = anything may touch it).
- ``hints``: lower-case literals; every match holds at least one (in any case).
- ``source``: where the format is documented.
- ``anchor``: an RE2 pattern (case-sensitive) that every match contains, for a row whose hints
  are common text (a JWT's ``ey``, a Discord bot token's first letter); "" = the hints decide.

`find` applies the table to a text: one pass of an RE2 set over every row's hints (or anchor)
says which rows can match at all, and only those rows run. Imports nothing heavy: `re2` is
loaded, and the set compiled, on the first text; a row's own pattern on the first text that
needs it.
"""

from __future__ import annotations

from git_memex.core.record import record
from git_memex.secrets.masking import stand_in_word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any


@record(frozen=True)
class Format:
    """One credential format (see the module docstring for each field's contract)."""

    rule: str
    pattern: str
    keep: int
    check: Callable[[str], bool] | None
    left: str
    right: str
    hints: tuple[str, ...]
    source: str
    anchor: str = ""


# ------------------------------------------------------------------------------ value checks

_PLACEHOLDER_WORDS = ("example", "sample", "your", "placeholder", "changeme", "dummy", "redacted", "xxxx",
                      "abcdef", "123456", "replace", "insert", "secret_here", "token_here", "key_here")


def _placeholder(low: str) -> bool:
    return any(w in low for w in _PLACEHOLDER_WORDS)


def _spread(v: str) -> bool:
    """Enough distinct characters, and no one character filling two fifths of the value."""
    low = v.lower()
    if len(set(low)) < min(8, max(3, len(v) // 3)):
        return False
    return max(low.count(c) for c in set(low)) * 5 <= len(v) * 2  # "0000…0TUVWXYZ"


def _random(v: str) -> bool:
    """A generated value: varied characters, a digit and a letter, no placeholder word."""
    if _placeholder(v.lower()) or not _spread(v):
        return False
    return any(c.isdigit() for c in v) and any(c.isalpha() for c in v)


def _keyed(v: str) -> bool:
    """A value written after a vendor's name: generated in the row's alphabet, which may draw all
    digits or all letters (a 32-character secret over ``[a-z0-9]`` sometimes does), but no
    placeholder word, no run of a few characters, and not words joined by ``_``/``-``/``.``
    (``TWITTER_API_KEY_FROM_ENV`` names a variable)."""
    if _placeholder(v.lower()) or not _spread(v):
        return False
    if not any(c.isdigit() for c in v):
        parts = v.replace("-", "_").replace(".", "_").split("_")
        if len(parts) > 1 and all(p.isalpha() for p in parts if p):
            return False
    return True


def _varied(v: str) -> bool:
    """Not a run of one or two characters nor a placeholder word (for one-kind alphabets)."""
    low = v.lower()
    return not _placeholder(low) and len(set(low)) >= min(6, max(3, len(v) // 4))


_STAND_IN_WORDS = ("your", "here", "replace", "insert", "placeholder", "changeme", "redacted", "dummy")


def _not_stand_in(v: str) -> bool:
    """Not written as a stand-in: the body is not ``x``/``X``/``*``/``#`` but for at most 3
    characters (separators aside; our mask, or a document's) and holds no word that asks for a
    real value (``YOUR_TOKEN_HERE``, ``replace-me``) as a word (`masking.stand_in_word`: a random
    body that spells "here" by chance is a token). A documentation example of the format
    (``…Example1234…``) is masked."""
    low = v.lower()
    body = low.translate(_SEPARATORS)
    if sum(c not in "x*#" for c in body) <= 3:
        return False  # "ghp_xxxx…", "A3-XXXXXX-…", "ops_eyJxxxx…" (a fixed head, then x)
    return not stand_in_word(v, _STAND_IN_WORDS)


_SEPARATORS = str.maketrans("", "", "-_.:/+=")


def _distinct(v: str) -> bool:
    """Not a run of one or two characters; a placeholder word may be part of it. For AWS keys:
    AWS's documented examples (``AKIAIOSFODNN7EXAMPLE``, ``wJalrXUtnFEMI/…EXAMPLEKEY``) have the
    exact shape of live ones, and a note that holds one is masked like any other
    (tests/data/secret_corpus.json says why)."""
    return len(set(v.lower())) >= min(6, max(3, len(v) // 4))


def _aws_secret(v: str) -> bool:
    """A secret access key as AWS generates it: upper- and lower-case letters and a digit (a
    random 40 of base64 lacks one with odds under 1 in 500), not a path (a few slashes at most).
    A key may start with "/" or "+" like any base64 character (1 in 32); one that starts with
    "/" is a key, not a path (``/Users/…``), when one of its pieces between slashes looks
    generated (10 characters or more with both cases and a digit) and no two of them are
    lower-case words of 3 letters or more (a path's directories). A 40-hex SHA-1 and a
    lower-case word run are left alone."""
    if not (
        any(c.isupper() for c in v) and any(c.islower() for c in v) and any(c.isdigit() for c in v)
        and v.count("/") <= 4 and _distinct(v)
    ):
        return False
    if v.startswith("/") and sum(len(p) >= 3 and p.isalpha() and p.islower() for p in v.split("/")) >= 2:
        return False  # "/etc/secrets/ProdDbBackup2024Key/current": a path of lower-case words
    return not v.startswith("/") or any(
        len(p) >= 10 and any(c.isupper() for c in p) and any(c.islower() for c in p) and any(c.isdigit() for c in p)
        for p in v.split("/")
    )


def _nuget_ok(v: str) -> bool:
    """Not a reference to an environment variable (``%NUGET_PASSWORD%``) nor a word like "Password1"."""
    return not (v.startswith("%") and v.endswith("%")) and "password" not in v.lower()


def _openai_like(v: str) -> bool:
    """The body of a loose ``sk-`` key (the reference tool's rule): not Anthropic's (its own row),
    a digit in it ("sk-learn-pipeline-for-ranking" is a name), and no stand-in."""
    return not v.startswith("ant-") and any(c.isdigit() for c in v) and _not_stand_in(v)


def _digit_and_varied(v: str) -> bool:
    """A loose row's body: a digit and more than three distinct characters
    ("000000000000-000000000000-" is a placeholder; "123456789012-abcdefghij", the reference
    tool's own vector, is not)."""
    return any(c.isdigit() for c in v) and len(set(v)) > 3


def _digit(v: str) -> bool:
    return any(c.isdigit() for c in v) and _varied(v)


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _crc32_base62(v: str) -> bool:
    """GitHub's and npm's checksum: the last 6 characters are the CRC32 of the 30 before them in
    base 62, zero-padded (github.blog 2021-04-05, "Behind GitHub's new authentication token
    formats"; npm tokens share the scheme). A value whose checksum verifies is a token, however
    it reads; one whose checksum does not may still be a hand-made or truncated one, so it only
    has to be no stand-in (`_not_stand_in`), as any value of a format with a documented prefix."""
    import zlib

    if len(v) == 36:
        n, digits = zlib.crc32(v[:30].encode()), []
        for _ in range(6):
            n, r = divmod(n, 62)
            digits.append(_BASE62[r])
        if "".join(reversed(digits)) == v[30:]:
            return True
    return _not_stand_in(v)


def _crc32_hex(v: str) -> bool:
    """Cloudflare's checksum: 40 characters then the CRC32 of them as 8 lower-case hex digits
    (developers.cloudflare.com/fundamentals/api/get-started/token-formats); else as `_crc32_base62`."""
    import zlib

    return (len(v) == 48 and f"{zlib.crc32(v[:40].encode()):08x}" == v[40:]) or _not_stand_in(v)


def _jose_header(v: str) -> bool:
    """A JWT's first segment is base64url of a JSON object naming its ``alg`` (RFC 7515 4.1.1):
    ``{…"alg"…}`` once decoded. A made-up ``eyJ…`` string or a truncated header is no token."""
    import binascii

    head = v.split(".", 1)[0].replace("-", "+").replace("_", "/")
    try:
        raw = binascii.a2b_base64(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    raw = raw.strip()
    return raw.startswith(b"{") and raw.endswith(b"}") and b'"alg"' in raw


# ------------------------------------------------------------------------------ row builders

_WORD = "A-Za-z0-9_"  # a token must not sit inside a longer word
_WORDD = r"A-Za-z0-9_\-"
_B64 = "A-Za-z0-9+/"
_UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"

# Between a vendor's keyword and the value: the rest of the name (``mailgun_api_key``), a type
# (Go's ``var oktaToken string = …``), a closing quote, an assignment operator of any common
# language (=, :, :=, ::=, :::=, ?=, =>, .=, ||, a comma as in ``setProperty("X", "…")``, ``>`` of
# an XML element), then opening quotes or a line break.
_GAP = (r"[\w.-]{0,30}(?:[ \t]{1,4}[\w.\[\]*]{1,20})?[ \t'\"`\]]{0,3}"
        r"(?:=>|:{1,3}=|\?=|\.=|\+=|\|\||[=:,>])[\s'\"`=(]{0,6}")


def _tok(rule: str, pattern: str, keep: int, hints: tuple[str, ...], source: str, *,
         check: Callable[[str], bool] | None = _varied, left: str = _WORD, right: str = _WORD,
         anchor: str = "") -> Format:
    """A self-identifying token. With a documented prefix of 3 characters or more (`keep`), a
    value of the format is masked whatever its body reads like (``sk_test_BBBB…``,
    ``glpat-abcdefghij0123456789``: in a memory a placeholder loses nothing by being masked, and a
    real token that happens to read like one must not leak), unless it is written as a stand-in
    (`_not_stand_in`: ``ghp_xxxx…``, ``…_PUT_YOUR_TOKEN_HERE…``); the row's `check`, when it is the
    default `_varied` or `_digit`, gives way to that. A shorter prefix keeps its `check`."""
    if keep >= 3 and check in (_varied, _digit):
        check = _not_stand_in
    return Format(rule, pattern, keep, check, left, right, hints, source, anchor)


def _kw(rule: str, keywords: str, value: str, hints: tuple[str, ...], source: str, *,
        check: Callable[[str], bool] | None = _keyed, right: str = _WORDD + "+/=", keep: int = 0,
        case: bool = False) -> Format:
    """A value recognised by the vendor's name written before it (``mailgun_key = …``); the name
    is matched in any case unless `case` (``[Oo]kta|OKTA``, so "rookTable" is no Okta key)."""
    name = f"(?:{keywords})" if case else f"(?i:{keywords})"
    return Format(rule, rf"{name}{_GAP}(?P<v>{value})", keep, check, "", right, hints, source)


_GL = "gitleaks "  # source prefix: the gitleaks rule id follows (cmd/generate/config/rules/*.go)
_TH = "trufflehog detector "  # source prefix: the detector's directory follows (pkg/detectors/<name>)
_REF = "the OpenMemex reference tool's secret rules (its test vectors: docs/security.md)"

FORMATS: tuple[Format, ...] = (
    # --- 1Password
    _tok("1password-secret-key", r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
         3, ("a3-",), _GL + "1password-secret-key; https://support.1password.com/secret-key-security/", check=_digit),
    _tok("1password-service-account-token", r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}", 4, ("ops_eyj",),
         _GL + "1password-service-account-token; https://developer.1password.com/docs/service-accounts/"),
    # --- Adafruit, Adobe, Age, Airtable, Algolia, Alibaba
    _kw("adafruit-api-key", "adafruit", r"[A-Za-z0-9_-]{32}", ("adafruit",), _GL + "adafruit-api-key"),
    _kw("adobe-client-id", "adobe", r"[a-fA-F0-9]{32}", ("adobe",), _GL + "adobe-client-id"),
    _tok("adobe-client-secret", r"p8e-[A-Za-z0-9]{32}", 4, ("p8e-",), _GL + "adobe-client-secret", check=_digit),
    _tok("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", 16, ("age-secret-key-1",),
         _GL + "age-secret-key; https://age-encryption.org/v1"),
    _kw("airtable-api-key", "airtable", r"[A-Za-z0-9]{17}", ("airtable",), _GL + "airtable-api-key"),
    _tok("airtable-personal-access-token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", 3, ("pat",),
         _GL + "airtable-personnal-access-token; https://airtable.com/developers/web/guides/personal-access-tokens",
         anchor=r"pat[A-Za-z0-9]{14}\.[a-f0-9]{8}"),
    _kw("algolia-api-key", "algolia", r"[A-Za-z0-9]{32}", ("algolia",), _GL + "algolia-api-key"),
    _tok("alibaba-access-key-id", r"LTAI[A-Za-z0-9]{20}", 4, ("ltai",), _GL + "alibaba-access-key-id", check=_digit),
    _kw("alibaba-secret-key", "alibaba", r"[A-Za-z0-9]{30}", ("alibaba",), _GL + "alibaba-secret-key"),
    # --- Anthropic, OpenAI, Perplexity, Groq, Cohere, LangSmith
    # API and admin keys: 93 characters then "AA" (gitleaks; trufflehog's anthropic detector agrees)
    _tok("anthropic-admin-api-key", r"sk-ant-admin01-[A-Za-z0-9_-]{93}AA", 15, ("sk-ant-admin01-",), _GL + "anthropic-admin-api-key"),
    _tok("anthropic-api-key", r"sk-ant-api03-[A-Za-z0-9_-]{93}AA", 13, ("sk-ant-api03-",),
         _GL + "anthropic-api-key; https://docs.anthropic.com/en/api/getting-started"),
    _tok("anthropic-session-token", r"sk-ant-(?:sid|oat|ort)\d\d-[A-Za-z0-9_-]{80,}", 13, ("sk-ant-",),
         "https://docs.anthropic.com/en/docs/claude-code/iam (OAuth and session tokens share the sk-ant- prefix)", check=_digit),
    # every OpenAI key holds "T3BlbkFJ" (base64 of "openai"), between two runs of 58 or 74 (20 in legacy keys)
    _tok("openai-project-key", r"sk-(?:proj|svcacct|admin|service)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})",
         3, ("t3blbkfj",), _GL + "openai-api-key; https://platform.openai.com/docs/api-reference/authentication", right=_WORDD),
    _tok("openai-api-key", r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", 3, ("t3blbkfj",), _GL + "openai-api-key"),
    _tok("perplexity-api-key", r"pplx-[A-Za-z0-9]{48}", 5, ("pplx-",), _GL + "perplexity-api-key", check=_digit),
    _tok("groq-api-key", r"gsk_[A-Za-z0-9]{52}", 4, ("gsk_",), "https://console.groq.com/docs/api-keys", check=_digit),
    _kw("cohere-api-token", r"cohere|co_api_key", r"[A-Za-z0-9]{40}", ("cohere", "co_api_key"), _GL + "cohere-api-token"),
    _tok("langsmith-api-key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", 8, ("lsv2_",),
         "https://docs.smith.langchain.com/administration/how_to_guides/organization_management/create_account_api_key"),
    _tok("xai-api-key", r"xai-[A-Za-z0-9]{80}", 4, ("xai-",), "https://docs.x.ai/docs/overview", check=_digit),
    _tok("replicate-api-token", r"r8_[A-Za-z0-9]{37}", 3, ("r8_",), "https://replicate.com/docs/topics/security/api-tokens", check=_digit),
    # --- Artifactory / JFrog
    _tok("artifactory-api-key", r"AKCp[A-Za-z0-9]{69}", 4, ("akcp",), _GL + "artifactory-api-key"),
    _tok("artifactory-reference-token", r"cmVmd[A-Za-z0-9]{59}", 5, ("cmvmd",), _GL + "artifactory-reference-token"),
    _kw("jfrog-api-key", r"jfrog|artifactory|bintray|xray", r"[A-Za-z0-9]{73}", ("jfrog", "artifactory", "bintray", "xray"), _GL + "jfrog-api-key"),
    _kw("jfrog-identity-token", r"jfrog|artifactory|bintray|xray", r"[A-Za-z0-9]{64}", ("jfrog", "artifactory", "bintray", "xray"), _GL + "jfrog-identity-token"),
    # --- Asana, Atlassian, Authress
    _kw("asana-client-id", "asana", r"[0-9]{16}", ("asana",), _GL + "asana-client-id", check=_varied),
    _kw("asana-client-secret", "asana", r"[A-Za-z0-9]{32}", ("asana",), _GL + "asana-client-secret"),
    _tok("asana-pat", r"[0-9]/[0-9]{16}:[a-f0-9]{32}", 0, ("/",), "https://developers.asana.com/docs/personal-access-token",
         check=_digit, left=_WORD + "/", right=_WORD, anchor=r"[0-9]/[0-9]{16}:"),
    _kw("atlassian-api-token", r"atlassian|confluence|jira", r"[A-Za-z0-9]{20}[a-fA-F0-9]{4}", ("atlassian", "confluence", "jira"), _GL + "atlassian-api-token"),
    _tok("atlassian-api-token-v2", r"ATATT3[A-Za-z0-9_=-]{150,}", 6, ("atatt3",),
         _GL + "atlassian-api-token; https://support.atlassian.com/atlassian-account/docs/manage-api-tokens-for-your-atlassian-account/"),
    _tok("atlassian-user-token", r"ATCTT3[A-Za-z0-9_=-]{150,}", 6, ("atctt3",), "https://developer.atlassian.com/cloud/confluence/basic-auth-for-rest-apis/"),
    _tok("authress-access-key", r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}",
         0, (".acc",), _GL + "authress-service-client-access-key", anchor=r"\.acc[_-]"),
    # --- AWS
    # gitleaks reads the 16 as base32 ([A-Z2-7]); trufflehog's access_keys detector takes [A-Z0-9]:
    # a hand-copied or made-up id with a 0 or 1 in it is masked all the same
    _tok("aws-access-key-id", r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}", 4, ("akia", "asia", "abia", "acca"),
         _GL + "aws-access-token; " + _TH + "aws/access_keys; https://docs.aws.amazon.com/IAM/latest/UserGuide/security-creds.html",
         check=_distinct, anchor=r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"),
    _tok("aws-access-key-id-legacy", r"A3T[A-Z0-9][A-Z2-7]{16}", 3, ("a3t",), _GL + "aws-access-token (A3T form)", check=_varied,
         anchor=r"A3T[A-Z0-9][A-Z2-7]{16}"),
    _tok("aws-bedrock-api-key", r"ABSK[A-Za-z0-9+/]{109,269}={0,2}", 4, ("absk",), _GL + "aws-amazon-bedrock-api-key-long-lived"),
    _tok("aws-bedrock-api-key-short", r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&?_.-]{10,}", 16,
         ("bedrock-api-key-",), _GL + "aws-amazon-bedrock-api-key-short-lived"),
    _kw("aws-secret-access-key", r"aws_?secret_?access_?key|aws_?secret|secret_?access_?key", r"[A-Za-z0-9/+]{40}", ("aws_secret", "awssecret", "secret_access", "secretaccess"),
        "https://docs.aws.amazon.com/IAM/latest/UserGuide/security-creds.html", right=_B64 + "=", check=_distinct),
    # the same 40-character secret in prose: within 80 characters after its key id or after an
    # "AWS secret" / "secret access key" label, whatever words sit between ("AWS key AKIA… with
    # secret key …", "the AWS secret key … was rotated"); it must read as generated (`_aws_secret`)
    _tok("aws-secret-access-key-prose", r"(?:(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}|(?i:aws[ \t_.-]{0,3}secret|secret[ \t_-]?access))"
         r"(?s:.){0,80}?[^A-Za-z0-9+/=](?P<v>[A-Za-z0-9/+]{40})", 0, ("akia", "asia", "abia", "acca", "secret"),
         "https://docs.aws.amazon.com/IAM/latest/UserGuide/security-creds.html (a secret access key: 40 base64 characters)",
         check=_aws_secret, left="", right=_B64 + "=",
         anchor=r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}|(?i:aws[ \t_.-]{0,3}secret|secret[ \t_-]?access)"),
    # --- Azure
    _tok("azure-ad-client-secret", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}", 0, ("q~",), _GL + "azure-ad-client-secret",
         left=_WORD + "~.-", right=_WORD + "~.-"),
    _tok("azure-storage-account-key", r"(?i:accountkey=)(?P<v>[A-Za-z0-9+/]{86}==)", 0, ("accountkey=",),
         "https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string", left="", right=_B64 + "="),
    _tok("azure-sas-signature", r"[?&]sig=(?P<v>[A-Za-z0-9%+/]{40,}(?:%3[Dd]|=){0,2})", 0, ("sig=",),
         "https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas", left="", right=_B64 + "%="),
    # --- Beamer, Bitbucket, Bittrex, Cisco Meraki, ClickHouse, Clojars, Cloudflare, Codecov
    _kw("beamer-api-token", "beamer", r"b_[A-Za-z0-9=_-]{44}", ("beamer",), _GL + "beamer-api-token"),
    _kw("bitbucket-client-id", "bitbucket", r"[A-Za-z0-9]{32}", ("bitbucket",), _GL + "bitbucket-client-id"),
    _kw("bitbucket-client-secret", "bitbucket", r"[A-Za-z0-9=_-]{64}", ("bitbucket",), _GL + "bitbucket-client-secret"),
    _tok("bitbucket-dc-token", r"BBDC-[A-Za-z0-9+/@_-]{40,}", 5, ("bbdc-",),
         "https://confluence.atlassian.com/bitbucketserver/http-access-tokens-939515499.html", check=_digit),
    _tok("bitbucket-app-password", r"ATBB[A-Za-z0-9_=.-]{28,}", 4, ("atbb",), "https://support.atlassian.com/bitbucket-cloud/docs/app-passwords/", check=_digit),
    _kw("bittrex-key", "bittrex", r"[A-Za-z0-9]{32}", ("bittrex",), _GL + "bittrex-access-key, bittrex-secret-key"),
    _kw("cisco-meraki-api-key", "MERAKI|[Mm]eraki", r"[0-9a-f]{40}", ("meraki",), _GL + "cisco-meraki-api-key", case=True),
    _tok("clickhouse-cloud-api-secret", r"4b1d[A-Za-z0-9]{38}", 4, ("4b1d",), _GL + "clickhouse-cloud-api-secret-key", check=_random),
    _tok("clojars-api-token", r"(?i:CLOJARS_)[A-Za-z0-9]{60}", 8, ("clojars_",), _GL + "clojars-api-token"),
    _kw("cloudflare-api-key", "cloudflare", r"[A-Za-z0-9_-]{40}", ("cloudflare",), _GL + "cloudflare-api-key"),
    _kw("cloudflare-global-api-key", "cloudflare", r"[a-fA-F0-9]{37}", ("cloudflare",), _GL + "cloudflare-global-api-key"),
    _tok("cloudflare-origin-ca-key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", 5, ("v1.0-",), _GL + "cloudflare-origin-ca-key"),
    _tok("cloudflare-api-token", r"cf[ua]t_[A-Za-z0-9]{40}[a-f0-9]{8}", 5, ("cfut_", "cfat_"),
         "https://developers.cloudflare.com/fundamentals/api/get-started/token-formats/", check=_crc32_hex),
    _tok("cloudflare-global-key", r"cfk_[A-Za-z0-9]{40}[a-f0-9]{8}", 4, ("cfk_",),
         "https://developers.cloudflare.com/fundamentals/api/get-started/token-formats/", check=_crc32_hex),
    _kw("codecov-access-token", "codecov", r"[A-Za-z0-9]{32}", ("codecov",), _GL + "codecov-access-token"),
    _kw("coinbase-access-token", "coinbase", r"[A-Za-z0-9_-]{64}", ("coinbase",), _GL + "coinbase-access-token"),
    _kw("confluent-access-token", "confluent", r"[A-Za-z0-9]{16}", ("confluent",), _GL + "confluent-access-token"),
    _kw("confluent-secret-key", "confluent", r"[A-Za-z0-9]{64}", ("confluent",), _GL + "confluent-secret-key"),
    _kw("contentful-delivery-api-token", "contentful", r"[A-Za-z0-9=_-]{43}", ("contentful",), _GL + "contentful-delivery-api-token"),
    _tok("contentful-pat", r"CFPAT-[A-Za-z0-9_-]{43}", 6, ("cfpat-",), "https://www.contentful.com/developers/docs/references/authentication/"),
    # --- Databricks, Datadog, Defined Networking, DigitalOcean, Discord, Doppler, Drone, Dropbox, Duffel, Dynatrace
    _tok("databricks-api-token", r"dapi[a-fA-F0-9]{32}(?:-\d)?", 4, ("dapi",), _GL + "databricks-api-token", check=_digit, left="A-Za-z0-9"),
    _kw("datadog-access-token", "datadog|dd_api_key|dd_app_key", r"[A-Za-z0-9]{40}|[a-f0-9]{32}", ("datadog", "dd_api_key", "dd_app_key"), _GL + "datadog-access-token"),
    _kw("defined-networking-api-token", "dnkey", r"dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}", ("dnkey",), _GL + "defined-networking-api-token", check=None),
    _tok("defined-networking-key", r"dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}", 6, ("dnkey-",), _GL + "defined-networking-api-token"),
    _tok("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}", 7, ("_v1_",), _GL + "digitalocean-access-token, digitalocean-pat, digitalocean-refresh-token"),
    _tok("docker-access-token", r"dckr_(?:pat_[A-Za-z0-9_-]{27}|oat_[A-Za-z0-9_-]{32})", 9, ("dckr_pat_", "dckr_oat_"),
         "https://docs.docker.com/security/for-developers/access-tokens/; " + _TH + "dockerhub/v2", right=_WORDD),
    _kw("discord-api-token", "discord", r"[a-fA-F0-9]{64}", ("discord",), _GL + "discord-api-token"),
    _kw("discord-client-id", "discord", r"[0-9]{18}", ("discord",), _GL + "discord-client-id", check=_varied),
    _kw("discord-client-secret", "discord", r"[A-Za-z0-9=_-]{32}", ("discord",), _GL + "discord-client-secret"),
    _tok("discord-bot-token", r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}", 0, ("m", "n", "o"),
         "https://discord.com/developers/docs/reference#authentication", check=_random, left=_WORDD + ".", right=_WORDD + ".",
         anchor=r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}"),
    _tok("discord-webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/(?P<v>[A-Za-z0-9_-]{60,72})", 0,
         ("discord",), "https://discord.com/developers/docs/resources/webhook", left="", right=_WORDD),
    _tok("doppler-token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", 6, ("dp.",), _GL + "doppler-api-token; https://docs.doppler.com/docs/token-formats"),
    _kw("droneci-access-token", "droneci|drone_token", r"[A-Za-z0-9]{32}", ("droneci", "drone_token"), _GL + "droneci-access-token"),
    _kw("dropbox-api-token", "dropbox", r"[A-Za-z0-9]{15}", ("dropbox",), _GL + "dropbox-api-token"),
    _kw("dropbox-long-lived-api-token", "dropbox", r"[A-Za-z0-9]{11}AAAAAAAAAA[A-Za-z0-9_=-]{43}", ("dropbox",), _GL + "dropbox-long-lived-api-token", check=None),
    _tok("dropbox-short-lived-api-token", r"sl\.[A-Za-z0-9_=-]{130,}", 3, ("sl.",), _GL + "dropbox-short-lived-api-token", check=_digit),
    _tok("duffel-api-token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", 12, ("duffel_",), _GL + "duffel-api-token; https://duffel.com/docs/api/overview/making-requests/authentication"),
    _tok("dynatrace-api-token", r"(?:dt0c01|dt0s01)\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", 7, ("dt0c01.", "dt0s01."), _GL + "dynatrace-api-token"),
    # --- EasyPost, Etsy, Facebook, Fastly, Figma, Finicity, Finnhub, Flickr, Flutterwave, Fly.io, Frame.io, Freemius, FreshBooks
    _tok("easypost-api-token", r"EZ[AT]K[A-Za-z0-9]{54}", 4, ("ezak", "eztk"), _GL + "easypost-api-token, easypost-test-api-token"),
    _kw("etsy-access-token", "ETSY|[Ee]tsy", r"[A-Za-z0-9]{24}", ("etsy",), _GL + "etsy-access-token", case=True),
    _tok("facebook-access-token", r"[0-9]{15,16}(?:\||%7[Cc])[0-9A-Za-z_-]{27,40}", 0, ("|", "%7c"), _GL + "facebook-access-token", check=_random,
         anchor=r"[0-9]{15}(?:\||%7[Cc])"),
    _tok("facebook-page-access-token", r"EAA[A-Za-z0-9]{90,}", 3, ("eaa",),
         _GL + "facebook-page-access-token; https://developers.facebook.com/docs/facebook-login/guides/access-tokens/", check=_random),
    _kw("facebook-secret", "facebook", r"[a-fA-F0-9]{32}", ("facebook",), _GL + "facebook-secret"),
    _kw("fastly-api-token", "fastly", r"[A-Za-z0-9=_-]{32}", ("fastly",), _GL + "fastly-api-token"),
    _tok("figma-pat", r"figd_[A-Za-z0-9_-]{40}", 5, ("figd_",), "https://www.figma.com/developers/api#access-tokens", check=_digit),
    _kw("finicity-api-token", "finicity", r"[a-fA-F0-9]{32}", ("finicity",), _GL + "finicity-api-token"),
    _kw("finicity-client-secret", "finicity", r"[A-Za-z0-9]{20}", ("finicity",), _GL + "finicity-client-secret"),
    _kw("finnhub-access-token", "finnhub", r"[A-Za-z0-9]{20}", ("finnhub",), _GL + "finnhub-access-token"),
    _kw("flickr-access-token", "flickr", r"[A-Za-z0-9]{32}", ("flickr",), _GL + "flickr-access-token"),
    _tok("flutterwave-key", r"FLW(?:SECK|PUBK)(?:_TEST)?-[a-hA-H0-9]{32}-X", 8, ("flwseck", "flwpubk"), _GL + "flutterwave-public-key, flutterwave-secret-key"),
    _tok("flutterwave-encryption-key", r"FLWSECK_TEST-?[a-hA-H0-9]{12}", 12, ("flwseck_test",), _GL + "flutterwave-encryption-key", check=_digit),
    _tok("flyio-access-token", r"(?:fo1_[A-Za-z0-9_-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})", 4,
         ("fo1_", "fm1a_", "fm1r_", "fm2_"), _GL + "flyio-access-token"),
    _tok("frameio-api-token", r"fio-u-[A-Za-z0-9_=-]{64}", 6, ("fio-u-",), _GL + "frameio-api-token"),
    _kw("freemius-secret-key", r"secret_key", r"sk_[^\s'\"]{29}", ("secret_key",), _GL + "freemius-secret-key", keep=3),
    _kw("freshbooks-access-token", "freshbooks", r"[A-Za-z0-9]{64}", ("freshbooks",), _GL + "freshbooks-access-token"),
    # --- Google
    _tok("gcp-api-key", r"AIza[A-Za-z0-9_-]{35}", 4, ("aiza",), _GL + "gcp-api-key; https://cloud.google.com/docs/authentication/api-keys", right=_WORDD),
    _tok("google-oauth-client-secret", r"GOCSPX-[A-Za-z0-9_-]{28}", 7, ("gocspx-",), "https://developers.google.com/identity/protocols/oauth2", right=_WORDD),
    _tok("google-oauth-access-token", r"ya29\.[A-Za-z0-9_-]{30,}", 5, ("ya29.",), "https://developers.google.com/identity/protocols/oauth2", right=_WORDD),
    _tok("google-oauth-refresh-token", r"1//0[A-Za-z0-9_-]{40,}", 4, ("1//0",), "https://developers.google.com/identity/protocols/oauth2",
         check=_random, left=_WORD + "/:", right=_WORDD),
    _tok("gcp-service-account-private-key-id", r"\"private_key_id\"[ \t]*:[ \t]*\"(?P<v>[a-f0-9]{40})\"", 0, ("private_key_id",),
         _GL + "gcp-service-account; https://cloud.google.com/iam/docs/keys-create-delete", left="", right=""),
    # --- GitHub, GitLab, Gitea, Gitter
    # 36 characters (gitleaks); trufflehog's github detector takes 36-255; 30-35 is a copy that lost
    # its end, most of a token all the same
    _tok("github-pat", r"ghp_[A-Za-z0-9]{30,255}", 4, ("ghp_",), _GL + "github-pat; " + _TH + "github; https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/",
         check=_crc32_base62),
    _tok("github-oauth-token", r"gho_[A-Za-z0-9]{30,255}", 4, ("gho_",), _GL + "github-oauth", check=_crc32_base62),
    _tok("github-app-token", r"gh[us]_[A-Za-z0-9]{30,255}", 4, ("ghu_", "ghs_"), _GL + "github-app-token", check=_crc32_base62),
    _tok("github-app-installation-token", r"ghs_[0-9]{1,12}_ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", 4, ("ghs_",),
         "secretlint-rule-github (installation tokens: ghs_, the app's id, a JWT)", right=_WORDD + "."),
    _tok("github-refresh-token", r"ghr_[A-Za-z0-9]{30,76}", 4, ("ghr_",), _GL + "github-refresh-token", check=_crc32_base62),
    # 82 characters after the prefix as issued; from 30, as the reference tool's rule reads it (its vectors)
    _tok("github-fine-grained-pat", r"github_pat_[A-Za-z0-9_]{30,255}", 11, ("github_pat_",), _GL + "github-fine-grained-pat; " + _REF),
    # GitLab: each prefix with its own length (gitleaks' rules and detect-secrets' GitLabTokenDetector
    # agree on these; a routable token adds "." + 2 + 7 characters)
    _tok("gitlab-pat", r"(?:glpat-|glrt-t\d_)[A-Za-z0-9_-]{27,300}\.[0-9a-z]{2}[0-9a-z]{7}|glpat-[A-Za-z0-9_-]{20,50}", 6, ("glpat-", "glrt-t"),
         _GL + "gitlab-pat, gitlab-pat-routable, gitlab-runner-authentication-token-routable; https://docs.gitlab.com/ee/security/tokens/",
         check=_digit, right=_WORDD + "."),
    _tok("gitlab-token", r"gl(?:dt|ft|soat|rt|ffct|wt)-[A-Za-z0-9_-]{20,50}|glcbt-(?:[0-9a-zA-Z]{1,5}_)?[A-Za-z0-9_-]{20,50}|glimt-[A-Za-z0-9_-]{25}"
         r"|glptt-[A-Za-z0-9_-]{40}|glagent-[A-Za-z0-9_-]{50,}|gloas-[A-Za-z0-9_-]{64}", 5,
         ("gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glffct-", "glimt-", "glagent-", "gloas-", "glptt-", "glwt-"),
         _GL + "gitlab-deploy-token, gitlab-feed-token, gitlab-scim-token, gitlab-runner-authentication-token, gitlab-cicd-job-token, "
         "gitlab-feature-flag-client-token, gitlab-incoming-mail-token, gitlab-kubernetes-agent-token, gitlab-oauth-app-secret, gitlab-ptt; "
         "detect-secrets GitLabTokenDetector; https://docs.gitlab.com/ee/security/tokens/", check=_digit, right=_WORDD + "."),
    _tok("gitlab-rrt", r"GR1348941[A-Za-z0-9_-]{20,50}", 9, ("gr1348941",), _GL + "gitlab-rrt; detect-secrets GitLabTokenDetector", right=_WORDD),
    _tok("gitlab-session-cookie", r"_gitlab_session=(?P<v>[0-9a-z]{32})", 0, ("_gitlab_session=",), _GL + "gitlab-session-cookie", left="", right=_WORD),
    _kw("gitter-access-token", "gitter", r"[A-Za-z0-9_-]{40}", ("gitter",), _GL + "gitter-access-token"),
    # --- GoCardless, Grafana, Harness, HashiCorp, Heroku, HubSpot, Hugging Face
    _tok("gocardless-api-token", r"live_[A-Za-z0-9_=-]{40}", 5, ("live_",), _GL + "gocardless-api-token", check=_random, right=_WORDD + "=",
         anchor=r"live_[A-Za-z0-9_=-]{40}"),
    _tok("grafana-api-key", r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}", 8, ("eyjrijoi",), _GL + "grafana-api-key"),
    _tok("grafana-cloud-api-token", r"glc_[A-Za-z0-9+/]{32,400}={0,3}", 4, ("glc_",), _GL + "grafana-cloud-api-token", right=_B64 + "="),
    _tok("grafana-service-account-token", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", 5, ("glsa_",), _GL + "grafana-service-account-token"),
    _tok("harness-api-key", r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", 4, ("pat.", "sat."), _GL + "harness-api-key"),
    _tok("hashicorp-tf-api-token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", 0, ("atlasv1",), _GL + "hashicorp-tf-api-token"),
    _tok("vault-service-token", r"hvs\.[A-Za-z0-9_-]{24,}", 4, ("hvs.",), _GL + "vault-service-token; https://developer.hashicorp.com/vault/docs/concepts/tokens", right=_WORDD),
    _tok("vault-batch-token", r"hvb\.[A-Za-z0-9_-]{24,}", 4, ("hvb.",), _GL + "vault-batch-token", right=_WORDD),
    _tok("vault-recovery-token", r"hvr\.[A-Za-z0-9_-]{24,}", 4, ("hvr.",), "https://developer.hashicorp.com/vault/docs/concepts/tokens", right=_WORDD),
    _kw("vault-legacy-token", r"vault|x-vault-token", r"s\.[A-Za-z0-9]{24}", ("vault",), _GL + "vault-service-token (s. legacy form)", check=None, keep=2),
    _kw("heroku-api-key", "heroku", _UUID, ("heroku",), _GL + "heroku-api-key", check=_varied),
    _tok("heroku-api-key-v2", r"HRKU-AA[A-Za-z0-9_-]{58}", 7, ("hrku-aa",), _GL + "heroku-api-key-v2"),
    _kw("hubspot-api-key", "hubspot", _UUID, ("hubspot",), _GL + "hubspot-api-key", check=_varied),
    _tok("hubspot-pat", r"pat-(?:na|eu)[0-9]-" + _UUID, 8, ("pat-na", "pat-eu"), "https://developers.hubspot.com/docs/api/private-apps"),
    _tok("huggingface-access-token", r"hf_[A-Za-z]{34}", 3, ("hf_",), _GL + "huggingface-access-token", check=_varied),
    _tok("huggingface-token", r"hf_[A-Za-z0-9]{34,40}", 3, ("hf_",), "https://huggingface.co/docs/hub/security-tokens", check=_digit),
    _tok("huggingface-organization-api-token", r"api_org_[A-Za-z]{34}", 8, ("api_org_",), _GL + "huggingface-organization-api-token", check=_varied),
    # --- Infracost, Intercom, 42, JWT, Kraken, KuCoin, LaunchDarkly, Linear, LinkedIn, Lob, Looker
    _tok("infracost-api-token", r"ico-[A-Za-z0-9]{32}", 4, ("ico-",), _GL + "infracost-api-token", check=_digit,
         left=_WORD + "."),  # not a file name's ".ico-<hash>.png"
    _kw("intercom-api-key", "intercom", r"[A-Za-z0-9=_-]{60}", ("intercom",), _GL + "intercom-api-key"),
    _tok("intra42-client-secret", r"s-s4t2(?:ud|af)-[a-fA-F0-9]{64}", 9, ("s-s4t2ud-", "s-s4t2af-"), _GL + "intra42-client-secret"),
    _tok("jwt", r"ey[A-Za-z0-9_-]{17,}\.ey[A-Za-z0-9_/\\-]{17,}(?:\.[A-Za-z0-9_/\\-]{10,}={0,2}|\.)?", 0, ("ey",),
         _GL + "jwt; https://www.rfc-editor.org/rfc/rfc7519", check=_jose_header, right=_WORDD + ".",
         anchor=r"\.ey[A-Za-z0-9_/\\-]{17}"),
    _kw("kraken-access-token", "kraken", r"[A-Za-z0-9/=_+-]{80,90}", ("kraken",), _GL + "kraken-access-token"),
    _kw("kucoin-access-token", "kucoin", r"[a-fA-F0-9]{24}", ("kucoin",), _GL + "kucoin-access-token"),
    _kw("kucoin-secret-key", "kucoin", _UUID, ("kucoin",), _GL + "kucoin-secret-key", check=_varied),
    _kw("launchdarkly-access-token", "launchdarkly", r"[A-Za-z0-9=_-]{40}", ("launchdarkly",), _GL + "launchdarkly-access-token"),
    _tok("launchdarkly-key", r"(?:api|sdk|mob)-" + _UUID, 4, ("api-", "sdk-", "mob-"), "https://docs.launchdarkly.com/home/account/api",
         anchor=r"(?:api|sdk|mob)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-"),
    _tok("linear-api-key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}", 8, ("lin_api_", "lin_oauth_"), _GL + "linear-api-key"),
    _kw("linear-client-secret", "linear", r"[a-fA-F0-9]{32}", ("linear",), _GL + "linear-client-secret"),
    _kw("linkedin-client-id", r"linked[_-]?in", r"[A-Za-z0-9]{14}", ("linkedin", "linked_in", "linked-in"), _GL + "linkedin-client-id"),
    _kw("linkedin-client-secret", r"linked[_-]?in", r"[A-Za-z0-9]{16}", ("linkedin", "linked_in", "linked-in"), _GL + "linkedin-client-secret"),
    _tok("lob-api-key", r"(?:live|test)_[a-f0-9]{35}", 5, ("live_", "test_"), _GL + "lob-api-key; https://docs.lob.com/#tag/Authentication", check=_digit,
         anchor=r"(?:live|test)_[a-f0-9]{35}"),
    _tok("lob-pub-api-key", r"(?:live|test)_pub_[a-f0-9]{31}", 9, ("_pub_",), _GL + "lob-pub-api-key", check=_digit),
    _kw("looker-client-id", "looker", r"[A-Za-z0-9]{20}", ("looker",), _GL + "looker-client-id"),
    _kw("looker-client-secret", "looker", r"[A-Za-z0-9]{24}", ("looker",), _GL + "looker-client-secret"),
    # --- Mailchimp, Mailgun, Mapbox, Mattermost, MaxMind, MessageBird, Microsoft Teams
    _tok("mailchimp-api-key", r"[a-f0-9]{32}-us[0-9]{1,2}", 0, ("-us",), _GL + "mailchimp-api-key; https://mailchimp.com/developer/marketing/guides/quick-start/",
         check=_digit, right=_WORD, anchor=r"[a-f0-9]-us[0-9]"),
    _tok("mailgun-private-api-token", r"key-[a-f0-9]{32}", 4, ("key-",), _GL + "mailgun-private-api-token", check=_digit, anchor=r"key-[a-f0-9]{32}"),
    _tok("mailgun-pub-key", r"pubkey-[a-f0-9]{32}", 7, ("pubkey-",), _GL + "mailgun-pub-key", check=_digit),
    _kw("mailgun-signing-key", "mailgun", r"[a-hA-H0-9]{32}-[a-hA-H0-9]{8}-[a-hA-H0-9]{8}", ("mailgun",), _GL + "mailgun-signing-key", check=_varied),
    _tok("mapbox-token", r"[ps]k\.eyJ1[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}", 3, ("pk.eyj1", "sk.eyj1"),
         "https://docs.mapbox.com/help/getting-started/access-tokens/", right=_WORDD),
    _kw("mapbox-api-token", "mapbox", r"[ps]k\.[A-Za-z0-9]{60}\.[A-Za-z0-9]{22}", ("mapbox",), _GL + "mapbox-api-token", check=None, keep=3),
    _kw("mattermost-access-token", "mattermost", r"[A-Za-z0-9]{26}", ("mattermost",), _GL + "mattermost-access-token"),
    _tok("maxmind-license-key", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk", 0, ("_mmk",), _GL + "maxmind-license-key"),
    _kw("messagebird-api-token", r"message[_-]?bird", r"[A-Za-z0-9]{25}", ("messagebird", "message-bird", "message_bird"), _GL + "messagebird-api-token"),
    _kw("messagebird-client-id", r"message[_-]?bird", _UUID, ("messagebird", "message-bird", "message_bird"), _GL + "messagebird-client-id", check=_varied),
    _tok("microsoft-teams-webhook", r"https://[a-z0-9-]+\.webhook\.office\.com/webhookb2/(?P<v>[a-z0-9-]{36}@[a-z0-9-]{36}/IncomingWebhook/[a-z0-9]{32}/[a-z0-9-]{36}(?:/[A-Za-z0-9_-]{20,})?)",
         0, ("webhook.office.com",), _GL + "microsoft-teams-webhook", left="", right=_WORDD),
    _tok("microsoft-teams-workflow-webhook", r"https://[a-z0-9.-]+\.logic\.azure\.com(?::443)?/workflows/[a-f0-9]{32}/triggers/[^\s\"'?]*\?[^\s\"']*sig=(?P<v>[A-Za-z0-9_%-]{40,})",
         0, ("logic.azure.com",), "https://learn.microsoft.com/en-us/power-automate/teams/overview", left="", right=_WORDD + "%"),
    # --- Netlify, New Relic, Notion, npm, NuGet, NYTimes, Octopus, Okta, OpenShift
    _kw("netlify-access-token", "netlify", r"[A-Za-z0-9=_-]{40,46}", ("netlify",), _GL + "netlify-access-token"),
    _tok("netlify-pat", r"nfp_[A-Za-z0-9]{36}", 4, ("nfp_",), "https://docs.netlify.com/api/get-started/", check=_digit),
    _tok("new-relic-key", r"NR(?:AK|JS|II|AA)-[A-Za-z0-9]{19,32}", 5, ("nrak-", "nrjs-", "nrii-", "nraa-"),
         _GL + "new-relic-user-api-key, new-relic-browser-api-token, new-relic-insert-key; https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/",
         check=_digit, right=_WORDD),
    _kw("new-relic-user-api-id", r"new[_-]?relic", r"[A-Za-z0-9]{64}", ("newrelic", "new-relic", "new_relic"), _GL + "new-relic-user-api-id"),
    _tok("new-relic-license-key", r"[a-f0-9]{36}NRAL", 0, ("nral",), "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/#license-key", check=_digit),
    _tok("notion-api-token", r"(?:ntn|secret)_[A-Za-z0-9]{43,}", 4, ("ntn_", "secret_"), _GL + "notion-api-token; https://developers.notion.com/docs/authorization",
         check=_random, anchor=r"(?:ntn|secret)_[A-Za-z0-9]{43}"),
    _tok("npm-access-token", r"npm_[A-Za-z0-9]{36}", 4, ("npm_",), _GL + "npm-access-token; https://docs.npmjs.com/about-access-tokens", check=_crc32_base62),
    _tok("nuget-config-password", r"(?i:<add key=\"(?:ClearText)?Password\"\s{0,20}value=\")(?P<v>[^\"]{8,})\"", 0, ("<add key=",),
         _GL + "nuget-config-password", check=_nuget_ok, left="", right=""),
    _kw("nytimes-access-token", r"nytimes|new-york-times|newyorktimes", r"[A-Za-z0-9=_-]{32}", ("nytimes", "new-york-times", "newyorktimes"), _GL + "nytimes-access-token"),
    _tok("octopus-deploy-api-key", r"API-[A-Z0-9]{26}", 4, ("api-",), _GL + "octopus-deploy-api-key", check=_digit, anchor=r"API-[A-Z0-9]{26}"),
    _kw("okta-access-token", r"[Oo]kta|OKTA", r"00[A-Za-z0-9=_-]{40}", ("okta",), _GL + "okta-access-token", case=True),
    _tok("openshift-user-token", r"sha256~[A-Za-z0-9_-]{43}", 7, ("sha256~",), _GL + "openshift-user-token", right=_WORDD),
    # --- Plaid, PlanetScale, Postman, Prefect, Private AI, Pulumi, PyPI
    _kw("plaid-api-token", "plaid", r"access-(?:sandbox|development|production)-" + _UUID, ("plaid",), _GL + "plaid-api-token", check=None),
    _tok("plaid-access-token", r"access-(?:sandbox|development|production)-" + _UUID, 0, ("access-sandbox-", "access-development-", "access-production-"),
         "https://plaid.com/docs/api/tokens/", check=_varied),
    _kw("plaid-client-id", "plaid", r"[A-Za-z0-9]{24}", ("plaid",), _GL + "plaid-client-id"),
    _kw("plaid-secret-key", "plaid", r"[A-Za-z0-9]{30}", ("plaid",), _GL + "plaid-secret-key"),
    _tok("planetscale-token", r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}", 10, ("pscale_",),
         _GL + "planetscale-api-token, planetscale-oauth-token, planetscale-password", right=_WORDD + "=."),
    _tok("postman-api-token", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", 5, ("pmak-",), _GL + "postman-api-token"),
    _tok("prefect-api-token", r"pnu_[A-Za-z0-9]{36}", 4, ("pnu_",), _GL + "prefect-api-token", check=_digit),
    _kw("privateai-api-token", r"private[_-]?ai", r"[A-Za-z0-9]{32}", ("privateai", "private_ai", "private-ai"), _GL + "privateai-api-token"),
    _tok("pulumi-api-token", r"pul-[a-f0-9]{40}", 4, ("pul-",), _GL + "pulumi-api-token", check=_digit),
    # PyPI's own scanning contract: the macaroon's fixed head, then at least 70 characters
    _tok("pypi-upload-token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{70,}", 5, ("pypi-ageichlwas5vcmc",),
         _GL + "pypi-upload-token; https://warehouse.pypa.io/development/token-scanning.html", right=_WORDD),
    _tok("pypi-test-upload-token", r"pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9_-]{70,}", 5, ("pypi-agendgvzdc5wexbplm9yzw",),
         "https://warehouse.pypa.io/development/token-scanning.html", right=_WORDD),
    # --- RapidAPI, ReadMe, RubyGems, Scalingo, SendBird, SendGrid, Sendinblue, Sentry, SettleMint, Shippo, Shopify
    _kw("rapidapi-access-token", "rapidapi", r"[A-Za-z0-9_-]{50}", ("rapidapi",), _GL + "rapidapi-access-token"),
    _tok("readme-api-token", r"rdme_[a-z0-9]{70}", 5, ("rdme_",), _GL + "readme-api-token"),
    _tok("rubygems-api-token", r"rubygems_[a-f0-9]{48}", 9, ("rubygems_",), _GL + "rubygems-api-token; https://guides.rubygems.org/api-key-scopes/", check=_digit),
    _tok("scalingo-api-token", r"tk-us-[A-Za-z0-9_-]{48}", 6, ("tk-us-",), _GL + "scalingo-api-token", right=_WORDD),
    _kw("sendbird-access-id", "sendbird", _UUID, ("sendbird",), _GL + "sendbird-access-id", check=_varied),
    _kw("sendbird-access-token", "sendbird", r"[a-fA-F0-9]{40}", ("sendbird",), _GL + "sendbird-access-token"),
    _tok("sendgrid-api-token", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", 3, ("sg.",), _GL + "sendgrid-api-token; https://docs.sendgrid.com/ui/account-and-settings/api-keys",
         right=_WORDD + "."),
    _tok("sendgrid-api-token-generic", r"SG\.[A-Za-z0-9_=.-]{66}", 3, ("sg.",), _GL + "sendgrid-api-token", check=_random, right=_WORDD + "=."),
    _tok("sendinblue-api-token", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", 8, ("xkeysib-",), _GL + "sendinblue-api-token"),
    _tok("brevo-smtp-key", r"xsmtpsib-[a-f0-9]{64}-[A-Za-z0-9]{16}", 9, ("xsmtpsib-",), "https://developers.brevo.com/docs/getting-started"),
    _kw("sentry-access-token", "sentry", r"[a-fA-F0-9]{64}", ("sentry",), _GL + "sentry-access-token"),
    # sntrys_ + base64 of {"iat":…,"region_url":…} + "_" + 43 characters (getsentry/rfcs 0091)
    _tok("sentry-org-token", r"sntrys_eyJpYXQiO[A-Za-z0-9+/]{10,200}(?:LCJyZWdpb25fdXJs|InJlZ2lvbl91cmwi|cmVnaW9uX3VybCI6)[A-Za-z0-9+/]{10,200}={0,2}_[A-Za-z0-9+/]{43}",
         7, ("sntrys_",), _GL + "sentry-org-token; https://github.com/getsentry/rfcs/blob/main/text/0091-ci-upload-tokens.md", right=_B64 + "=_"),
    _tok("sentry-user-token", r"sntryu_[a-f0-9]{64}", 7, ("sntryu_",), _GL + "sentry-user-token; https://docs.sentry.io/account/auth-tokens/"),
    _tok("sentry-dsn", r"https?://(?P<v>[a-f0-9]{32})(?::[a-f0-9]{32})?@[A-Za-z0-9.-]*(?:sentry|ingest)[A-Za-z0-9.-]*/[0-9]+", 0, ("sentry", "ingest"),
         "https://docs.sentry.io/concepts/key-terms/dsn-explainer/", left="", right=""),
    _tok("settlemint-token", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}", 7, ("sm_aat_", "sm_pat_", "sm_sat_"),
         _GL + "settlemint-application-access-token, settlemint-personal-access-token, settlemint-service-access-token", check=_digit),
    _tok("shippo-api-token", r"shippo_(?:live|test)_[a-f0-9]{40}", 12, ("shippo_",), _GL + "shippo-api-token; https://docs.goshippo.com/docs/guides_general/authentication/"),
    _tok("shopify-token", r"(?:shpat|shpca|shppa|shpss)_[A-Za-z0-9]{32,64}", 6, ("shpat_", "shpca_", "shppa_", "shpss_"),
         _GL + "shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token, shopify-shared-secret; "
         "https://shopify.dev/changelog/app-secret-key-length-has-increased", check=_digit),
    _kw("sidekiq-secret", r"BUNDLE_ENTERPRISE__CONTRIBSYS__COM|BUNDLE_GEMS__CONTRIBSYS__COM", r"[a-fA-F0-9]{8}:[a-fA-F0-9]{8}",
        ("bundle_enterprise__contribsys__com", "bundle_gems__contribsys__com"), _GL + "sidekiq-secret", check=_varied),
    _tok("sidekiq-sensitive-url", r"(?i:https?://)(?P<v>[a-f0-9]{8}:[a-f0-9]{8})@(?:gems|enterprise)\.contribsys\.com", 0, ("contribsys.com",),
         _GL + "sidekiq-sensitive-url", left="", right=""),
    # --- Slack
    _tok("slack-bot-token", r"xoxb-[0-9]{8,14}-(?:[0-9]{10,13}-)?[A-Za-z0-9-]{18,}", 5, ("xoxb-",), _GL + "slack-bot-token, slack-legacy-bot-token; https://api.slack.com/authentication/token-types",
         right=_WORDD),
    _tok("slack-user-token", r"xox[pe](?:-[0-9]{10,13}){3}-[A-Za-z0-9-]{28,34}", 5, ("xoxp-", "xoxe-"), _GL + "slack-user-token", right=_WORDD),
    _tok("slack-config-access-token", r"xoxe\.xox[bp]-[0-9]-[A-Za-z0-9]{163,166}", 10, ("xoxe.xox",), _GL + "slack-config-access-token"),
    _tok("slack-config-refresh-token", r"xoxe-[0-9]-[A-Za-z0-9]{146}", 5, ("xoxe-",), _GL + "slack-config-refresh-token"),
    _tok("slack-legacy-token", r"xox[os]-[0-9]+-[0-9]+-[0-9]+-[a-fA-F0-9]+", 5, ("xoxo-", "xoxs-"), _GL + "slack-legacy-token", right=_WORDD),
    _tok("slack-legacy-workspace-token", r"xox[ar]-(?:[0-9]-)?[0-9a-zA-Z]{8,48}", 5, ("xoxa-", "xoxr-"), _GL + "slack-legacy-workspace-token", check=_digit, right=_WORDD),
    _tok("slack-app-token", r"xapp-[0-9]-[A-Za-z0-9]+-[0-9]+-[a-fA-F0-9]+", 5, ("xapp-",), _GL + "slack-app-token", right=_WORDD),
    _tok("slack-webhook-url", r"(?i:(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/)(?P<v>[A-Za-z0-9+/_-]{20,})", 0, ("hooks.slack.com",),
         _GL + "slack-webhook-url; https://api.slack.com/messaging/webhooks", left="", right=_WORDD + "+/"),
    # --- Snyk, SonarQube, Sourcegraph, Square, Squarespace, Stripe, Sumo Logic
    _kw("snyk-api-token", r"snyk[_.-]?(?:(?:api|oauth)[_.-]?)?(?:key|token)", _UUID, ("snyk",), _GL + "snyk-api-token", check=_varied),
    _kw("sonar-api-token", r"sonar[_.-]?(?:login|token)", r"(?:squ_|sqp_|sqa_)?[A-Za-z0-9=_-]{40}", ("sonar",), _GL + "sonar-api-token"),
    _tok("sonar-token", r"sq[upa]_[a-f0-9]{40}", 4, ("squ_", "sqp_", "sqa_"), "https://docs.sonarsource.com/sonarqube/latest/user-guide/user-account/generating-and-using-tokens/", check=_digit),
    _tok("sourcegraph-access-token", r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}", 4, ("sgp_",),
         _GL + "sourcegraph-access-token; https://sourcegraph.com/docs/cli/how-tos/creating_an_access_token", check=_digit),
    _kw("sourcegraph-legacy-token", "sourcegraph", r"[a-fA-F0-9]{40}", ("sourcegraph",), _GL + "sourcegraph-access-token (40 hex under its name)",
        check=_digit),
    _tok("square-access-token", r"(?:EAAA|sq0atp-)[A-Za-z0-9_-]{22,60}", 4, ("eaaa", "sq0atp-"), _GL + "square-access-token; https://developer.squareup.com/docs/build-basics/access-tokens",
         check=_digit, right=_WORDD + "+="),
    _tok("square-secret", r"sq0csp-[A-Za-z0-9_-]{43}", 7, ("sq0csp-",), _GL + "square-secret", right=_WORDD),
    _tok("square-app-secret", r"(?:sandbox-)?sq0c[a-z]{2}-[0-9A-Za-z_-]{40,50}", 4, ("sq0c",), "trufflehog detector squareapp", right=_WORDD),
    _kw("squarespace-access-token", "squarespace", _UUID, ("squarespace",), _GL + "squarespace-access-token", check=_varied),
    _tok("stripe-access-token", r"(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,99}", 8, ("sk_test", "sk_live", "sk_prod", "rk_test", "rk_live", "rk_prod"),
         _GL + "stripe-access-token; https://docs.stripe.com/keys", check=_digit, right=_WORDD),
    # from 20 characters, as the reference tool's rule reads it (its vectors)
    _tok("stripe-webhook-secret", r"whsec_[A-Za-z0-9+/=]{20,}", 6, ("whsec_",), "https://docs.stripe.com/webhooks; " + _REF, check=_digit,
         right=_B64 + "="),
    _kw("sumologic-access-id", "SUMO|[Ss]umo", r"su[A-Za-z0-9]{12}", ("sumo",), _GL + "sumologic-access-id", case=True),
    _kw("sumologic-access-token", "SUMO|[Ss]umo", r"[A-Za-z0-9]{64}", ("sumo",), _GL + "sumologic-access-token", case=True),
    # --- Tailscale, Telegram, Travis CI, Trello, Twilio, Twitch, Twitter, Typeform, Vercel, Yandex, Zendesk
    _tok("tailscale-key", r"tskey-(?:auth|api|client|scim|webhook|[a-z]{3,10})-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}", 6, ("tskey-",),
         "https://tailscale.com/kb/1277/key-prefixes", right=_WORDD),
    _kw("telegram-bot-api-token", "telegr", r"[0-9]{5,16}:A[A-Za-z0-9_-]{34}", ("telegr",), _GL + "telegram-bot-api-token", check=None),
    # the bot's id, ":" and 35 characters (trufflehog's telegrambottoken; issued ones start "AA"),
    # alone or in the API's URL (api.telegram.org/bot<token>/getMe)
    _tok("telegram-bot-token", r"(?:bot)?(?P<v>[0-9]{8,10}:[A-Za-z0-9_-]{35})", 0, (":",), "https://core.telegram.org/bots/api#authorizing-your-bot; "
         + _TH + "telegrambottoken", check=_random, left=_WORD + ":", right=_WORDD, anchor=r"[0-9]{8}:[A-Za-z0-9_-]{35}"),
    _kw("travisci-access-token", "travis", r"[A-Za-z0-9]{22}", ("travis",), _GL + "travisci-access-token"),
    _kw("trello-access-token", "trello", r"[A-Za-z0-9-]{32}", ("trello",), _GL + "trello-access-token"),
    _tok("trello-token", r"ATTA[a-fA-F0-9]{60,70}", 4, ("atta",), "https://developer.atlassian.com/cloud/trello/guides/rest-api/authorization/", check=_digit,
         anchor=r"ATTA[a-fA-F0-9]{60}"),
    _tok("twilio-api-key", r"SK[0-9a-fA-F]{32}", 2, ("sk",), _GL + "twilio-api-key", check=_random, anchor=r"SK[0-9a-fA-F]{32}"),
    _tok("twilio-account-sid", r"AC[0-9a-f]{32}", 2, ("ac",), "https://www.twilio.com/docs/iam/api/account", check=_random, anchor=r"AC[0-9a-f]{32}"),
    _kw("twilio-auth-token", r"twilio[\w.-]{0,20}(?:auth|token|secret)", r"[a-f0-9]{32}", ("twilio",), "https://www.twilio.com/docs/iam/api/authtoken"),
    _kw("twitch-api-token", "twitch", r"[A-Za-z0-9]{30}", ("twitch",), _GL + "twitch-api-token"),
    _kw("twitter-access-secret", "twitter", r"[A-Za-z0-9]{45}", ("twitter",), _GL + "twitter-access-secret"),
    _kw("twitter-access-token", "twitter", r"[0-9]{15,25}-[A-Za-z0-9]{20,40}", ("twitter",), _GL + "twitter-access-token"),
    _kw("twitter-api-key", "twitter", r"[A-Za-z0-9]{25}", ("twitter",), _GL + "twitter-api-key"),
    _kw("twitter-api-secret", "twitter", r"[A-Za-z0-9]{50}", ("twitter",), _GL + "twitter-api-secret"),
    _tok("twitter-bearer-token", r"A{22}[A-Za-z0-9%]{80,100}", 0, ("aaaaaaaaaaaaaaaaaaaaaa",), _GL + "twitter-bearer-token", check=_random),
    _kw("typeform-api-token", "typeform|tfp_", r"tfp_[A-Za-z0-9_.=-]{59}", ("typeform", "tfp_"), _GL + "typeform-api-token", check=None, keep=4),
    _tok("typeform-token", r"tfp_[A-Za-z0-9_.=-]{40,}", 4, ("tfp_",), "https://www.typeform.com/developers/get-started/personal-access-token/", check=_digit, right=_WORDD + "=."),
    _tok("vercel-token", r"vc[pkiar]_[A-Za-z0-9]{40,}", 4, ("vcp_", "vck_", "vci_", "vca_", "vcr_"), "https://vercel.com/docs/rest-api#creating-an-access-token", check=_digit),
    _kw("yandex-access-token", "yandex", r"t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2}", ("yandex",), _GL + "yandex-access-token", check=None),
    _tok("yandex-api-key", r"AQVN[A-Za-z0-9_-]{35,38}", 4, ("aqvn",), _GL + "yandex-api-key", check=_digit, right=_WORDD),
    _kw("yandex-aws-access-token", "yandex", r"YC[A-Za-z0-9_-]{38}", ("yandex",), _GL + "yandex-aws-access-token", check=None, keep=2),
    _kw("zendesk-secret-key", "zendesk", r"[A-Za-z0-9]{40}", ("zendesk",), _GL + "zendesk-secret-key"),
    # --- Keyword-anchored stragglers and more vendor-prefixed formats
    _tok("dnsimple-token", r"dnsimple_[ua]_[A-Za-z0-9]{32}", 11, ("dnsimple_",), "https://developer.dnsimple.com/v2/#authentication"),
    _tok("buildkite-token", r"bkua_[a-f0-9]{40}", 5, ("bkua_",), "https://buildkite.com/docs/apis/managing-api-tokens", check=_digit),
    _tok("circleci-token", r"CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}", 7, ("ccipat_",), "https://circleci.com/docs/managing-api-tokens/"),
    _tok("render-api-key", r"rnd_[A-Za-z0-9]{32}", 4, ("rnd_",), "https://render.com/docs/api#1-create-an-api-key", check=_digit),
    _tok("supabase-token", r"sbp_[a-f0-9]{40}", 4, ("sbp_",), "https://supabase.com/docs/reference/api/introduction", check=_digit),
    _tok("supabase-secret-key", r"sb_secret_[A-Za-z0-9_-]{30,}", 10, ("sb_secret_",), "https://supabase.com/docs/guides/api/api-keys", check=_digit),
    _tok("posthog-personal-api-key", r"phx_[A-Za-z0-9]{43}", 4, ("phx_",), "https://posthog.com/docs/api#personal-api-keys", check=_digit),
    _tok("mongodb-atlas-key", r"mdb_sa_sk_[A-Za-z0-9]{40}", 10, ("mdb_sa_sk_",), "https://www.mongodb.com/docs/atlas/api/service-accounts-overview/"),
    _tok("fastly-api-token-v2", r"fastly_[A-Za-z0-9_-]{32}", 7, ("fastly_",), "https://docs.fastly.com/en/guides/using-api-tokens", check=_digit),
    _tok("deno-deploy-token", r"dd[pw]_[A-Za-z0-9]{36}", 4, ("ddp_", "ddw_"), "https://docs.deno.com/deploy/manual/api/", check=_digit),
    # --- more prefixed formats, each as trufflehog's detector of that name reads it (pkg/detectors/<name>)
    _tok("adafruit-io-key", r"aio_[A-Za-z0-9]{28}", 4, ("aio_",), _TH + "adafruitio; https://io.adafruit.com/api/docs/#authentication", check=_digit),
    _tok("apify-api-token", r"apify_api_[A-Za-z0-9-]{36}", 10, ("apify_api_",), _TH + "apify; https://docs.apify.com/platform/integrations/api"),
    _tok("rootly-api-key", r"rootly_[a-f0-9]{64}", 7, ("rootly_",), _TH + "rootly"),
    _tok("ramp-client-secret", r"ramp_sec_[A-Za-z0-9]{48}", 9, ("ramp_sec_",), _TH + "ramp"),
    _tok("spectralops-token", r"spu-[a-z0-9]{32}", 4, ("spu-",), _TH + "spectralops", check=_digit),
    _tok("tickettailor-api-key", r"sk_[0-9]{4}_[0-9]{6}_[a-f0-9]{32}", 3, ("sk_",), _TH + "tickettailor",
         anchor=r"sk_[0-9]{4}_[0-9]{6}_"),
    _tok("photoroom-api-key", r"sk_pr_[A-Za-z0-9]{1,64}_[a-fA-F0-9]{40}", 6, ("sk_pr_",), _TH + "photoroom"),
    _tok("besttime-private-key", r"pri_[a-f0-9]{32}", 4, ("pri_",), _TH + "besttime", check=_digit, anchor=r"pri_[a-f0-9]{32}"),
    _tok("salesblink-api-key", r"key-[A-Za-z0-9]{64}", 4, ("key-",), _TH + "salesblink", check=_random, anchor=r"key-[A-Za-z0-9]{64}"),
    _kw("mailsac-api-key", "mailsac", r"k_[0-9A-Za-z]{36,}", ("mailsac",), _TH + "mailsac"),
    _tok("trufflehog-enterprise-key", r"thog-(?:key-[0-9a-f]{16}|secret-[0-9a-f]{32})", 5, ("thog-key-", "thog-secret-"), _TH + "trufflehogenterprise",
         check=_digit),
    _tok("recharge-api-key", r"sk(?:_test)?_(?:1|2|3|5|10)x[123]_[0-9a-fA-F]{64}", 3, ("x1_", "x2_", "x3_"), _TH + "rechargepayments",
         anchor=r"sk(?:_test)?_(?:1|2|3|5|10)x[123]_"),
    _tok("nvidia-api-key", r"nvapi-[A-Za-z0-9_-]{64}", 6, ("nvapi-",), _TH + "nvapi; https://docs.api.nvidia.com/nim/docs/api-quickstart", check=_digit,
         right=_WORDD),
    _tok("openrouter-api-key", r"sk-or-v1-[0-9a-f]{64}", 9, ("sk-or-v1-",), _TH + "openrouter; https://openrouter.ai/docs/api-reference/authentication"),
    _tok("pinecone-api-key", r"pcsk_[A-Za-z0-9]{5,6}_[A-Za-z0-9]{63}", 5, ("pcsk_",), _TH + "pinecone; https://docs.pinecone.io/guides/projects/manage-api-keys"),
    _tok("langfuse-secret-key", r"sk-lf-" + _UUID, 6, ("sk-lf-",), _TH + "langfuse; https://langfuse.com/faq/all/where-are-langfuse-api-keys"),
    # an ngrok authtoken has no prefix of its own: found after "ngrok"/"authtoken" on its line
    _tok("ngrok-token", r"(?i:ngrok|authtoken)[^\n]{0,40}?(?P<v>[0-9][A-Za-z0-9]{26}_[A-Za-z0-9]{21})", 0, ("ngrok", "authtoken"),
         "https://ngrok.com/docs/agent/#authtokens", check=_random, left=""),
    # --- The OpenMemex reference tool's rules, with its rule ids and looser lengths (its test
    # vectors hold shortened tokens such as "npm_" + 32 digits). Last, so that a row above that
    # knows the vendor's exact format claims a real token first; these catch what a note or the
    # reference tool's files hold that the exact rows do not, masked whole but the prefix.
    _tok("anthropic-key", r"sk-ant-[A-Za-z0-9_-]{20,255}", 7, ("sk-ant-",), _REF, right=_WORDD),
    _tok("openai-key", r"sk-[A-Za-z0-9_-]{20,255}", 3, ("sk-",), _REF, check=_openai_like, right=_WORDD),
    _tok("google-api-key", r"AIza[0-9A-Za-z_-]{30,255}", 4, ("aiza",), _REF, right=_WORDD),
    _tok("slack-token", r"xox[abeoprs]-[A-Za-z0-9-]{10,255}", 5, ("xoxa-", "xoxb-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-"),
         _REF, check=_digit_and_varied, right=_WORDD),
    _tok("npm-token", r"npm_[A-Za-z0-9]{30,255}", 4, ("npm_",), _REF),
)


# ------------------------------------------------------------------------------ matching

_screen: Any = None  # re2.Set over every row's hints or anchor, and an empty sentinel
_owners: list[tuple[int, ...]] = []  # set entry -> the rows it selects
_compiled: dict[int, Any] = {}
_sides: dict[str, frozenset[int]] = {}


def _prefilter() -> Any:
    """One RE2 set: each row's hints (as case-insensitive literals) or its anchor, and last an
    empty pattern that every text matches. RE2's set search reports no match at all when its DFA
    runs out of memory; the sentinel tells that apart from "no row can match" (see `_rows`)."""
    global _screen, _owners
    if _screen is None:
        import re2

        entries: dict[str, list[int]] = {}
        for i, f in enumerate(FORMATS):
            for key in [f.anchor] if f.anchor else [f"(?i:{re2.escape(h)})" for h in f.hints]:
                entries.setdefault(key, []).append(i)
        options = re2.Options()
        options.never_capture = True
        screen = re2.Set.SearchSet(options)
        owners: list[tuple[int, ...]] = []
        for key, rows in entries.items():
            screen.Add(key)
            owners.append(tuple(rows))
        screen.Add("")
        owners.append(())
        screen.Compile()
        _screen, _owners = screen, owners
    return _screen


def _rows(data: bytes) -> list[int]:
    """The rows that can match `data`, in table order: one linear pass of the set."""
    hit = _prefilter().Match(data)
    if hit is None:  # not even the sentinel: the set's DFA gave up, so every row runs
        return list(range(len(FORMATS)))
    return sorted({i for k in hit for i in _owners[k]})


def _side(body: str) -> frozenset[int]:
    """The bytes of a boundary class (ASCII only: a byte of a multi-byte character is never in it)."""
    got = _sides.get(body)
    if got is None:
        import re2

        rx = re2.compile(f"[{body}]")
        got = _sides[body] = frozenset(b for b in range(128) if rx.fullmatch(chr(b)))
    return got


def _regex(i: int) -> Any:
    rx = _compiled.get(i)
    if rx is None:
        import re2

        rx = _compiled[i] = re2.compile(FORMATS[i].pattern)
    return rx


def _already_masked(value: str, keep: int) -> bool:
    """Masked by us already, or a documentation placeholder: nothing but x/X (or *) after the prefix."""
    tail = value[keep:]
    return bool(tail) and all(c in "xX*\r\n" for c in tail)


def find(text: str) -> Iterator[tuple[str, int, int, int]]:
    """(rule, start, end, keep) of every match of every format in `text`, in table order.

    `start`/`end` delimit the part to mask (group ``v`` or the whole match); matches whose
    neighbours touch a `left`/`right` class, whose value fails `check`, or whose value is already
    masked (only ``x`` after the prefix) are skipped. Spans of different rules may overlap: the
    caller keeps the first claimant of a span (and masks a found value's other places in the
    text: `redact._echoes`). Linear in ``len(text)`` per row: one pass of the prefilter set,
    then one RE2 pass per row it selects. Any str is accepted (a lone surrogate too).
    """
    data = text.encode("utf-8", "surrogatepass")
    found: list[tuple[str, int, int, int]] = []
    n = len(data)
    for i in _rows(data):
        f = FORMATS[i]
        rx = _regex(i)
        g = rx.groupindex.get("v", 0)
        left = _side(f.left) if f.left else None
        right = _side(f.right) if f.right else None
        for m in rx.finditer(data):
            ms, me = m.span()
            if left is not None and ms > 0 and data[ms - 1] in left:
                continue
            if right is not None and me < n and data[me] in right:
                continue
            s, e = m.span(g)
            value = data[s:e].decode("utf-8", "surrogatepass")
            if _already_masked(value, f.keep) or (f.check is not None and not f.check(value[f.keep:])):
                continue
            found.append((f.rule, s, e, min(f.keep, len(value))))
    if found and n != len(text):  # byte offsets to str offsets, in one pass over the text
        offsets = sorted({o for _r, s, e, _k in found for o in (s, e)})
        chars, pos, at = {}, 0, 0
        for o in offsets:
            at += len(data[pos:o].decode("utf-8", "surrogatepass"))
            chars[o], pos = at, o
        found = [(r, chars[s], chars[e], k) for r, s, e, k in found]
    yield from found
