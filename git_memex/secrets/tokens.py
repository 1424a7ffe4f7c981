"""Detector family 1: vendor token formats (AWS, GitHub, Slack, Stripe…) and private-key blocks.

Each pattern has literals every match contains (`_PROVIDER_HINTS`): a text holding none of a
pattern's literals never compiles nor runs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from git_memex.secrets.masking import _has_digit, _lazy, _mixed_case
from git_memex.secrets.rx import Rx

_TB = "[^A-Za-z0-9_-]"  # a token prefix must not sit inside a word ("task-", "risk-")
_NOT_ALNUM = "[^A-Za-z0-9]"
_NOT_WORD = "[^A-Za-z0-9_]"


def _openai_ok(v: str) -> bool:
    # "sk-learn-pipeline-for-ranking" is a name; real keys are random and contain digits.
    # "sk-ant-…" is Anthropic's (the rule before this one).
    return _has_digit(v[3:]) and not v.startswith("sk-ant-")


class Spec:
    """One vendor format: its rule id, pattern (syntax of `rx.to_re2`), optional check on the
    value (group "v" if the pattern has one, else the match), and the one-character classes
    the characters before and after a match must be in (`rx.Rx`'s ``before``/``after``)."""

    __slots__ = ("after", "before", "check", "pattern", "rule")

    def __init__(self, rule: str, pattern: str, check: Callable[[str], bool] | None = None, *,
                 before: str | None = None, after: str | None = None) -> None:
        self.rule, self.pattern, self.check, self.before, self.after = rule, pattern, check, before, after

    def rx(self) -> Rx:
        return Rx(self.pattern, before=self.before, after=self.after)


_PROVIDER_SPECS: tuple[Spec, ...] = (
    Spec("aws-access-key-id", r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}",
         before=_NOT_ALNUM, after=_NOT_ALNUM),
    Spec("aws-secret-access-key",
         r"(?i)(?:aws_?)?secret_?access_?key[\"']?[ \t]*(?:=|:|=>)[ \t]*[\"']?(?P<v>[A-Za-z0-9/+=]{40})",
         before=_NOT_ALNUM, after="[^A-Za-z0-9/+=]"),
    Spec("github-fine-grained-pat", r"github_pat_[A-Za-z0-9_]{40,}", before=_NOT_WORD),
    Spec("github-pat", r"ghp_[A-Za-z0-9]{30,}", before=_NOT_WORD),
    Spec("github-oauth-token", r"gho_[A-Za-z0-9]{30,}", before=_NOT_WORD),
    Spec("github-user-token", r"ghu_[A-Za-z0-9]{30,}", before=_NOT_WORD),
    Spec("github-app-token", r"ghs_[A-Za-z0-9]{30,}", before=_NOT_WORD),
    Spec("github-refresh-token", r"ghr_[A-Za-z0-9]{30,}", before=_NOT_WORD),
    Spec("anthropic-key", r"sk-ant-[A-Za-z0-9_-]{20,}", before=_TB),
    Spec("openai-key", r"sk-[A-Za-z0-9_-]{20,}", _openai_ok, before=_TB),
    Spec("google-api-key", r"AIza[0-9A-Za-z_-]{30,}", before=_TB),
    Spec("google-oauth-client-secret", r"GOCSPX-[A-Za-z0-9_-]{24,}", before=_TB),
    Spec("slack-token", r"xox[abeoprs]-[A-Za-z0-9-]{10,}", lambda v: _has_digit(v[5:]), before=_TB),
    Spec("slack-app-token", r"xapp-\d-[A-Za-z0-9-]{20,}", before=_TB),
    Spec("slack-webhook",
         r"(?i)https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/-]{20,})"),
    Spec("stripe-secret-key", r"sk_(?:live|test)_[A-Za-z0-9]{20,}", before=_NOT_WORD),
    Spec("stripe-restricted-key", r"rk_(?:live|test)_[A-Za-z0-9]{20,}", before=_NOT_WORD),
    Spec("stripe-webhook-secret", r"whsec_[A-Za-z0-9+/=]{20,}", before=_NOT_WORD),
    Spec("npm-token", r"npm_[A-Za-z0-9]{30,}", before=_NOT_WORD),
    Spec("gitlab-pat", r"glpat-[A-Za-z0-9_-]{20,}", before=_TB),
    Spec("huggingface-token", r"hf_[A-Za-z0-9]{30,}", _mixed_case, before=_NOT_WORD, after=_NOT_WORD),
    Spec("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}", before=_TB),
    # Further vendor prefixes: distinctive enough to need no name beside them.
    Spec("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}", before=_TB),
    Spec("shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", before=_TB),
    Spec("hashicorp-vault-token", r"hv[sbr]\.[A-Za-z0-9_-]{24,}", before=_TB),
    Spec("grafana-token", r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})", before=_TB),
    Spec("postman-api-key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", before=_TB),
    Spec("linear-api-key", r"lin_api_[A-Za-z0-9]{40}", before=_TB),
    Spec("notion-token", r"ntn_[A-Za-z0-9]{40,}", before=_TB),
    Spec("doppler-token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", before=_TB),
    Spec("sentry-token", r"sntr[ysu]_[A-Za-z0-9+/=_]{40,}", before=_TB),
    Spec("databricks-token", r"dapi[a-f0-9]{32}(?:-\d)?", before=_NOT_ALNUM, after=_NOT_ALNUM),
    Spec("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    Spec("google-oauth-token", r"ya29\.[A-Za-z0-9_-]{30,}", before=_TB),
)
_PROVIDERS = tuple((spec.rule, spec.rx(), spec.check) for spec in _PROVIDER_SPECS)

# Four or five dashes, any case (a hand-copied key loses a dash or gets lower-cased); the name
# between BEGIN and PRIVATE is bounded so that a run of "BEGIN BEGIN …" stays linear.
_PEM_BEGIN = _lazy(r"(?i)-{4,5}[ \t]*BEGIN[ A-Z0-9]{0,40}PRIVATE[ \t]+KEY(?:[ \t]+BLOCK)?[ \t]*-{4,5}")
_PEM_END = _lazy(r"(?i)-{4,5}[ \t]*END[ A-Z0-9]{0,40}PRIVATE[ \t]+KEY(?:[ \t]+BLOCK)?[ \t]*-{4,5}")
_PEM_STRICT = _lazy(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_MATERIAL = _lazy(r"[ \t]*\r?\n(?:[\w-]+:[^\n]*\n|[ \t]*\r?\n){0,4}[ \t]*[A-Za-z0-9+/=]{16}")
# PuTTY .ppk (versions 2 and 3): the key is the base64 lines after "Private-Lines: N".
_PUTTY_PRIVATE = _lazy(
    r"(?i)\bPrivate-Lines:[ \t]*\d{1,4}[ \t]*\r?\n(?P<v>[A-Za-z0-9+/=]{8,}(?:[ \t]*\r?\n[A-Za-z0-9+/=]{4,})*)"
)


def _pem_candidates(text: str) -> Iterator[tuple[str, int, int]]:
    low = text.lower()
    if "private-lines" in low:
        for m in _PUTTY_PRIVATE.finditer(text):
            yield "putty-private-key", m.start("v"), m.end("v")
    if "private" not in low or "----" not in text:
        return
    pos = 0
    end = None
    no_end = False  # no END line after some point means none after any later point: searched once
    while (begin := _PEM_BEGIN.search(text, pos)) is not None:
        if not no_end and (end is None or end.start() < begin.end()):
            end = _PEM_END.search(text, begin.end())
            no_end = end is None
        if end is None:  # truncated key: everything after the header may be key material
            if not _PEM_STRICT.fullmatch(begin.group()) and not _PEM_MATERIAL.match(text, begin.end()):
                pos = begin.end()
                continue  # "the -----begin private key----- marker" is prose; the exact header is not
            yield "private-key-truncated", begin.start(), len(text)
            return
        yield "private-key-block", begin.start(), end.end()
        pos = end.end()


# Literals every match of a provider pattern contains (lower case: looked up in the lowered
# text, so case-insensitive patterns are covered too). A pattern whose literals are all absent
# cannot match, and is neither compiled nor run: most texts hold none of them, and the 45
# patterns cost ~0.1 ms per text and ~5 ms to compile. tests/secrets/test_redact.py checks each list
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


# The documented, non-secret prefix of each format that a mask may leave visible (docs/security.md):
# the first of these a value starts with stays; every other character becomes "x". A rule not
# named here keeps nothing (a password, a generic value, a key block, a webhook's path).
_DOCUMENTED_PREFIXES: dict[str, tuple[str, ...]] = {
    "aws-access-key-id": ("AKIA", "ASIA", "ABIA", "ACCA"),
    "github-fine-grained-pat": ("github_pat_",),
    "github-pat": ("ghp_",),
    "github-oauth-token": ("gho_",),
    "github-user-token": ("ghu_",),
    "github-app-token": ("ghs_",),
    "github-refresh-token": ("ghr_",),
    "anthropic-key": ("sk-ant-",),
    "openai-key": ("sk-",),
    "google-api-key": ("AIza",),
    "google-oauth-client-secret": ("GOCSPX-",),
    "slack-token": ("xoxa-", "xoxb-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-"),
    "slack-app-token": ("xapp-",),
    "stripe-secret-key": ("sk_live_", "sk_test_"),
    "stripe-restricted-key": ("rk_live_", "rk_test_"),
    "stripe-webhook-secret": ("whsec_",),
    "npm-token": ("npm_",),
    "gitlab-pat": ("glpat-",),
    "huggingface-token": ("hf_",),
    "jwt": ("eyJ",),
    "digitalocean-token": ("dop_v1_", "doo_v1_", "dor_v1_"),
    "shopify-token": ("shpat_", "shpca_", "shppa_", "shpss_"),
    "hashicorp-vault-token": ("hvs.", "hvb.", "hvr."),
    "grafana-token": ("glsa_", "glc_"),
    "postman-api-key": ("PMAK-",),
    "linear-api-key": ("lin_api_",),
    "notion-token": ("ntn_",),
    "doppler-token": ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
    "sentry-token": ("sntrys_", "sntryu_", "sntrus_"),
    "databricks-token": ("dapi",),
    "age-secret-key": ("AGE-SECRET-KEY-1",),
    "google-oauth-token": ("ya29.",),
}


class Provider:
    """One rule of the provider family, built in (`_PROVIDER_SPECS`) or from `secrets.formats`:
    its pattern, the check on the value (for a format: on the value after its ``keep`` prefix),
    the literals every match holds (lower case; a text with none of them never compiles nor runs
    the pattern), an ``anchor`` pattern every match holds too (a format whose literals are common
    text), and the length of the documented prefix a mask may leave (``keep``; None: the built-in
    table `_DOCUMENTED_PREFIXES`)."""

    __slots__ = ("anchor", "check", "hints", "keep", "rule", "rx")

    def __init__(self, rule: str, rx: Rx, check: Callable[[str], bool] | None,
                 hints: tuple[str, ...], keep: int | None = None, anchor: Rx | None = None) -> None:
        self.rule, self.rx, self.check, self.hints, self.keep = rule, rx, check, hints, keep
        self.anchor = anchor

    def accepts(self, value: str) -> bool:
        if self.check is None:
            return True
        return self.check(value[self.keep :] if self.keep else value)


_BUILT_IN = tuple(Provider(rule, rx, check, _PROVIDER_HINTS[rule]) for rule, rx, check in _PROVIDERS)
_providers: tuple[Provider, ...] | None = None
_hint_index: dict[str, tuple[Provider, ...]] = {}


def providers() -> tuple[Provider, ...]:
    """The built-in rules, then those of `git_memex.secrets.formats` when that module is there
    (its ``FORMATS``: records with ``rule``, ``pattern`` in RE2 syntax, ``keep``, ``check`` (on
    the value after ``keep``), ``left``/``right``, the characters that may not touch a match on
    that side, ``hints`` and an optional ``anchor``). Read on first use: a process that never
    scans never imports the table."""
    global _providers
    if _providers is None:
        found = list(_BUILT_IN)
        try:
            from git_memex.secrets import formats  # type: ignore[attr-defined, unused-ignore]
        except ImportError:
            formats = None
        for f in getattr(formats, "FORMATS", ()):
            rx = Rx(f.pattern, raw=True, before=f"[^{f.left}]" if f.left else None,
                    after=f"[^{f.right}]" if f.right else None)
            anchor = getattr(f, "anchor", "")
            found.append(Provider(f.rule, rx, f.check, tuple(h.lower() for h in f.hints), f.keep,
                                  Rx(anchor, raw=True) if anchor else None))
        index: dict[str, list[Provider]] = {}
        for p in found:
            for hint in p.hints:
                index.setdefault(hint, []).append(p)
        _hint_index.update({hint: tuple(ps) for hint, ps in index.items()})
        _providers = tuple(found)
    return _providers


def keep_for(rule: str, value: str) -> int:
    """How many leading characters of ``value`` (found by ``rule``) are a documented, non-secret
    prefix a mask may leave visible; 0 for everything that is not a known format."""
    for prefix in _DOCUMENTED_PREFIXES.get(rule, ()):
        if value.startswith(prefix):
            return len(prefix)
    for p in providers()[len(_BUILT_IN):]:
        if p.rule == rule and p.keep:
            return min(p.keep, len(value) - 1)
    return 0


def _provider_candidates(text: str, use_hint: bool = True) -> Iterator[tuple[str, int, int]]:
    everyone = providers()
    if use_hint:
        low = text.lower()
        hinted = {id(p) for hint, ps in _hint_index.items() if hint in low for p in ps}
        if not hinted:
            return
    for p in everyone:
        if use_hint and (id(p) not in hinted or (p.anchor is not None and p.anchor.search(text) is None)):
            continue
        regex = p.rx
        group = "v" if "v" in regex.groupindex else 0
        for m in regex.finditer(text):
            value = m.group(group)
            if p.accepts(value):
                yield p.rule, m.start(group), m.end(group)
