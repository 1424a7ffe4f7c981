"""Detector family 5: a hand-picked set of detect-secrets plugins, behind a cheap pre-filter."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from git_memex.secrets.assignments import _WORDY, _name_kind, _plausible_value
from git_memex.secrets.dscache import cache_place, read_cache, write_cache
from git_memex.secrets.masking import _lazy

# A cheap superset test for the plugins below: only lines that match it are handed to them, and
# detect-secrets is imported only once some line does (importing it costs ~100 ms).
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

    Importing detect-secrets costs ~100 ms (its keyword plugin: median of 5
    `python -X importtime` runs) (its plugin base imports `requests`, for the network
    verification we never use), paid by a hook or a search whenever a line could match. The
    plugins' patterns are therefore kept in the data root (`cache/detect-secrets-patterns.json`),
    keyed by the installed plugin files' sizes and times: any upgrade rebuilds it from the
    library, and an unreadable cache means the library is imported as before."""
    global _ds_cache
    if _ds_cache is None:
        key, cache = cache_place([m for m, _c in _DS_REGEX_PLUGINS])
        specs = read_cache(cache, key) if cache is not None else None
        if specs is None:
            specs = _ds_specs_from_library()
            if cache is not None:
                write_cache(cache, key, specs)
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

