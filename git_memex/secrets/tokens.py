"""Detector family 1: vendor token formats (AWS, GitHub, Slack, Stripe…) and private-key blocks.

Each pattern has literals every match contains (`_PROVIDER_HINTS`): a text holding none of a
pattern's literals never compiles nor runs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from git_memex.secrets.masking import _has_digit, _lazy, _mixed_case

_TB = r"(?<![A-Za-z0-9_-])"  # a token prefix must not sit inside a word ("task-", "risk-")


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

