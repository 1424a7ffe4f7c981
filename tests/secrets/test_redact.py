"""Tests for redaction: the open-memex peer vectors, a labelled corpus, and properties.

Everything runs against the real detect-secrets plugins; nothing is mocked.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memex.secrets.dsplugins import _ds_candidates
from git_memex.secrets.redact import (
    Finding,
    Redaction,
    find_high_entropy_secret,
    find_secrets,
    mask,
    redact,
    scan_text,
    strip_private,
)

from conftest import vectors

CORPUS = json.loads((Path(__file__).resolve().parents[1] / "data" / "secret_corpus.json").read_text("utf-8"))
POSITIVES = CORPUS["positives"]
NEGATIVES = CORPUS["negatives"]
HELD_OUT = CORPUS["held_out"]  # written before tuning on its families; never tuned on


def _case_id(case: dict) -> str:
    return repr(case["input"])[:60]


# ------------------------------------------------ protocol vectors (ours, then the reference tool's)


@pytest.mark.parametrize("case", vectors("redaction", "secrets", ids=_case_id))
def test_protocol_secret_is_masked_in_place(case: dict) -> None:
    result = redact(case["input"], case.get("user_patterns") or ())
    out = result.text
    assert case["must_not_contain"] not in out
    # only a documented prefix of the format stays (our vectors name it; the reference tool's
    # name its first 4 characters, which a mask now keeps only when they are that prefix)
    secret = case["must_not_contain"]
    at = case["input"].find(secret)
    if at >= 0:
        keep = max((f.keep for f in find_secrets(case["input"]) if f.start == at), default=0)
        assert out[at : at + len(secret)] == mask(secret, keep)
    if case.get("source") == "own":
        assert case["masked_prefix"] + "x" in out
    assert len(out) == len(case["input"])  # masked in place, never refused or shortened
    spans = [case["input"][f.start : f.end] for f in find_secrets(case["input"], case.get("user_patterns") or ())]
    for needle in case.get("must_contain", []):
        if len(needle) >= 4 and any(needle == (t[:4] + "x" * (len(t) - 4))[: len(needle)] for t in spans):
            # the reference tool keeps a secret's first 4 characters; ours keeps only a documented
            # prefix (issue 31, docs/security.md): the masked span is checked above
            continue
        assert needle in out
    for needle in case.get("must_not_contain_also", []):
        assert needle not in out
    if "startswith" in case:
        assert out.startswith(case["startswith"])
    if "findHighEntropySecret" in case.get("asserts", ()):
        # The peer asserts this rule on its entropy heuristic alone; redact() only on content.
        assert find_high_entropy_secret(case["input"]) == case["rule"]
        assert result.masked
    else:
        assert case["rule"] in result.masked


@pytest.mark.parametrize("case", vectors("redaction", "benign", ids=_case_id))
def test_protocol_benign_is_untouched(case: dict) -> None:
    if case["check"] == "redact":
        result = redact(case["input"])
        assert result.text == case["input"]
        assert result.masked == ()
        assert find_secrets(case["input"]) == []
    else:
        assert case["check"] == "findHighEntropySecret"
        assert find_high_entropy_secret(case["input"]) is None


@pytest.mark.parametrize("case", vectors("redaction", "private", ids=_case_id))
def test_protocol_private_spans(case: dict) -> None:
    if case["fn"] == "stripPrivate":
        assert strip_private(case["input"])[0] == case["expect"]
    else:
        result = redact(case["input"])
        assert result.text == case["expect"]
        assert bool(result.masked) is case["had_secret"]
        assert result.private_spans == 1
        if "must_not_contain" in case:
            assert case["must_not_contain"] not in result.text


# --------------------------------------------------------------------------- API details


def test_mask_keeps_no_part_of_a_secret_but_a_documented_prefix() -> None:
    """Issue 31: the first 4 characters used to stay ("huntxxxxxxxxxx"): a third of a short
    password. Now every character goes, but a documented, non-secret prefix of a known format."""
    assert mask("hunter2hunter2") == "xxxxxxxxxxxxxx"
    assert mask("abcd") == "xxxx"
    assert mask("") == ""
    assert mask("-----BEGIN X-----\nAAAA\n-----END") == "xxxxxxxxxxxxxxxxx\nxxxx\nxxxxxxxx"
    for text, value, shown in (("GH_TOKEN=ghp_" + "R8cAZ3kQw9LmN2pX7vB5tY1uJ4hG6fD0sE3a", "ghp_R8cAZ3kQw9LmN2pX7vB5tY1uJ4hG6fD0sE3a", "ghp_"),
                               ("key AKIAQWERTYUIOPASDFGH here", "AKIAQWERTYUIOPASDFGH", "AKIA"),
                               ("stripe sk_" + "live_4eC39HqLyjWDarjtT1zdp7dc", "sk_" + "live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_"),
                               ("bot xoxb-99887766554-Zq8wVt4sRp0oK7m2Lx9n", "xoxb-99887766554-Zq8wVt4sRp0oK7m2Lx9n", "xoxb-"),
                               ("password: hunter2-Xq9!zz", "hunter2-Xq9!zz", ""),
                               ("postgres://app:S3cr3tPassw0rd@db:5432/x", "S3cr3tPassw0rd", ""),
                               ("api_key = ghp_notreallyatoken12345", "ghp_notreallyatoken12345", "")):
        at = text.index(value)
        assert [(f.start, f.end, f.keep) for f in find_secrets(text)] == [(at, at + len(value), len(shown))], text
        assert redact(text).text == text[:at] + shown + "x" * (len(value) - len(shown)) + text[at + len(value):]


def test_strip_private_forms() -> None:
    assert strip_private("a <PRIVATE>x</Private> b") == ("a [REDACTED] b", 1)
    assert strip_private("<private>1</private> and <private>2</private>") == (
        "[REDACTED] and [REDACTED]",
        2,
    )
    # Nested: the inner closing tag must not leak the rest of the outer span.
    assert strip_private("a <private>x <private>y</private> z</private> b") == ("a [REDACTED] b", 1)
    assert strip_private("stray </private> stays") == ("stray </private> stays", 0)
    assert strip_private('<private reason="pii">x</private>') == ("[REDACTED]", 1)
    assert strip_private("a <private-key> tag is not ours") == (
        "a <private-key> tag is not ours",
        0,
    )
    assert strip_private("no tags") == ("no tags", 0)


def test_redaction_result_shape() -> None:
    text = "db password: Pr0d-S3cret!\nand <private>notes</private>\nkey ghp_R8cAZ3kQw9LmN2pX7vB5tY1uJ4hG6fD0sE3a"
    result = redact(text)
    assert isinstance(result, Redaction)
    assert result.private_spans == 1
    assert result.masked == ("generic-secret-assignment", "github-pat")
    assert result.text == "db password: xxxxxxxxxxxx\nand [REDACTED]\nkey ghp_" + "x" * 36


def test_findings_are_sorted_non_overlapping_with_lines() -> None:
    text = 'intro\nAPI_KEY="ghp_R8cAZ3kQw9LmN2pX7vB5tY1uJ4hG6fD0sE3a"\n\npassword: Tr0ub4dor&3\n'
    findings = find_secrets(text)
    assert [f.rule for f in findings] == ["github-pat", "generic-secret-assignment"]
    assert [f.line for f in findings] == [2, 4]
    assert all(isinstance(f, Finding) for f in findings)
    assert text[findings[0].start : findings[0].end] == "ghp_R8cAZ3kQw9LmN2pX7vB5tY1uJ4hG6fD0sE3a"
    assert text[findings[1].start : findings[1].end] == "Tr0ub4dor&3"
    assert all(a.end <= b.start for a, b in zip(findings, findings[1:], strict=False))


def test_name_is_kept_value_is_masked() -> None:
    out = redact('export AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"').text
    assert out == 'export AWS_SECRET_ACCESS_KEY="' + "x" * 40 + '"'


def test_pem_block_keeps_line_structure() -> None:
    text = "a\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\n-----END EC PRIVATE KEY-----\nb"
    result = redact(text)
    assert result.masked == ("private-key-block",)
    assert result.text.count("\n") == text.count("\n")
    assert result.text.startswith("a\nxxxxxxxx") and result.text.endswith("\nb")


def test_user_patterns_bad_regex_is_ignored() -> None:
    result = redact("foo CUSTOM123 bar", ["(", "CUSTOM\\d+", "x*"])
    assert result.text == "foo xxxxxxxxx bar"
    assert result.masked == ("CUSTOM\\d+",)


def test_scan_text_does_not_strip_private_and_skips_masked() -> None:
    stored = "token is ghp_" + "x" * 36 + "\npassword: huntxxxxxxx"
    assert scan_text(stored) == []
    raw = "<private>ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" + "</private>"
    assert [f.rule for f in scan_text(raw)] == ["github-pat"]


def test_rule_ids_are_stable_vocabulary() -> None:
    """Rule ids are part of the scan output and of ``masked``: only known shapes appear."""
    known = re.compile(r"[a-z0-9-]+|high-entropy-secret:[\w.-]+|detect-secrets:[A-Za-z]+Detector")
    for p in POSITIVES:
        for f in find_secrets(p["text"]):
            assert known.fullmatch(f.rule), f.rule


def test_placeholder_and_masked_tokens_are_not_reported() -> None:
    for text in (
        "AKIAXXXXXXXXXXXXXXXX",
        "ghp_" + "X" * 36,
        "password: ********",
        "sk-1" + "x" * 30,
    ):
        assert find_secrets(text) == [], text


# --------------------------------------------------------------------------- labelled corpus


def test_corpus_shape() -> None:
    assert len(POSITIVES) >= 110
    assert len(NEGATIVES) >= 110
    families = {p["family"].split(":")[0] for p in POSITIVES}
    for family in (
        "aws-access-key-id",
        "aws-secret-access-key",
        "github-pat",
        "github-fine-grained-pat",
        "openai-key",
        "anthropic-key",
        "google-api-key",
        "slack-token",
        "slack-webhook",
        "stripe-secret-key",
        "stripe-webhook-secret",
        "npm-token",
        "gitlab-pat",
        "jwt",
        "private-key-block",
        "private-key-truncated",
        "generic-secret-assignment",
        "url-credentials",
        "high-entropy-secret",
        "detect-secrets",
    ):
        assert family in families, family
    for p in POSITIVES:
        assert p["secret"] in p["text"] and len(p["secret"]) > 4


def _recall_precision(
    positives: list[dict] = POSITIVES, negatives: list[dict] = NEGATIVES
) -> tuple[float, float, list[str], list[str]]:
    caught, real, total = 0, 0, 0
    misses: list[str] = []
    false_hits: list[str] = []
    for p in positives:
        text, secret = p["text"], p["secret"]
        start = text.index(secret)
        end = start + len(secret)
        out = redact(text).text
        findings = find_secrets(text)
        # only a documented prefix of the format found right there may stay visible
        keep = max((f.keep for f in findings if f.start == start), default=0)
        if secret not in out and out[start:end] == mask(secret, keep):
            caught += 1
        else:
            misses.append(text)
        # a finding is real when it overlaps any place of the secret (a repeated value is masked
        # at each of its places)
        places = [(m.start(), m.end()) for m in re.finditer(re.escape(secret), text)]
        for f in findings:
            total += 1
            if any(f.start < e and s < f.end for s, e in places):
                real += 1
            else:
                false_hits.append(f"{f.rule}: {text!r}")
    for n in negatives:
        for f in find_secrets(n["text"]):
            total += 1
            false_hits.append(f"{f.rule}: {n['text']!r}")
    return caught / len(positives), (real / total if total else 1.0), misses, false_hits


def test_corpus_recall_and_precision() -> None:
    recall, precision, misses, false_hits = _recall_precision()
    print(
        f"\nredaction corpus: {len(POSITIVES)} positives, {len(NEGATIVES)} negatives: "
        f"recall {recall:.3f}, precision {precision:.3f}"
    )
    for miss in misses:
        print("  missed:", miss[:100])
    for hit in false_hits:
        print("  false positive:", hit[:100])
    assert recall >= 0.98
    assert precision >= 0.95


def test_held_out_recall_and_precision() -> None:
    """The issue-20 forms (curl -u, sshpass, labels in other languages, NBSP, next-line values,
    PuTTY, PEM variants, zero-width and full-width obfuscation) and the attack-2 families
    (`test_attack2_families_recall_and_precision`) on entries nobody tuned on."""
    recall, precision, misses, false_hits = _recall_precision(HELD_OUT["positives"], HELD_OUT["negatives"])
    tuned = _recall_precision(
        [p for p in POSITIVES if p in _ISSUE20_TUNING], [n for n in NEGATIVES if n in _ISSUE20_TUNING_NEG]
    )
    print(
        f"\nissue-20 families, tuning half: recall {tuned[0]:.3f}, precision {tuned[1]:.3f}; "
        f"held-out half ({len(HELD_OUT['positives'])} positives, {len(HELD_OUT['negatives'])} negatives): "
        f"recall {recall:.3f}, precision {precision:.3f}"
    )
    for miss in misses:
        print("  missed:", repr(miss[:100]))
    for hit in false_hits:
        print("  false positive:", hit[:100])
    assert recall >= 0.98
    assert precision >= 0.95


# The families the attack on the merged main found (passwords with spaces, values ending in a
# secret word, ten more languages, prose, aliases, homoglyphs, tokens as keys): a tuning half in
# positives/negatives and a held-out half in held_out, told apart by the family's suffix.
ATTACK2_FAMILIES = {"spaced", "secret-word", "i18n-2", "prose-2", "alias", "homoglyph", "key-name"}
ATTACK2_NOTE = "look-alike of attack-2 forms"


def _families(families: set[str], note: str, positives: list[dict],
              negatives: list[dict]) -> tuple[list[dict], list[dict]]:
    return ([p for p in positives if p["family"].partition(":")[2] in families],
            [n for n in negatives if n["note"] == note])


def _family_figures(name: str, families: set[str], note: str, *, min_pos: int, min_neg: int,
                    held_recall: float, held_note: str | None = None) -> None:
    """Both halves of one attack's families, printed, with the goals asserted (`held_note`: how
    the held-out look-alikes are noted, when not as the tuning ones)."""
    tuned = _recall_precision(*_families(families, note, POSITIVES, NEGATIVES))
    held_pos, held_neg = _families(families, held_note or note, HELD_OUT["positives"], HELD_OUT["negatives"])
    held = _recall_precision(held_pos, held_neg)
    assert len(held_pos) >= min_pos and len(held_neg) >= min_neg
    assert {p["family"].partition(":")[2] for p in held_pos} == families
    print(
        f"\n{name} families, tuning half: recall {tuned[0]:.3f}, precision {tuned[1]:.3f}; "
        f"held-out half ({len(held_pos)} positives, {len(held_neg)} negatives): "
        f"recall {held[0]:.3f}, precision {held[1]:.3f}"
    )
    for miss in tuned[2] + held[2]:
        print("  missed:", repr(miss[:100]))
    for hit in tuned[3] + held[3]:
        print("  false positive:", hit[:100])
    assert tuned[0] >= 0.98 and tuned[1] >= 0.95
    assert held[0] >= held_recall and held[1] >= 0.95


def test_attack2_families_recall_and_precision() -> None:
    """Both halves of the attack-2 families; the held-out half was written with the tuning half,
    before any tuning, and entries the detector was later tuned on were moved to tuning."""
    _family_figures("attack-2", ATTACK2_FAMILIES, ATTACK2_NOTE, min_pos=40, min_neg=20, held_recall=0.98)


# The families the third attack found: spaced passwords under every label of the label table,
# `pass` / `passphrase` labels, "X is VALUE" prose in the table's languages, and tags after
# normalisation (`pass:-s3cr3tv@lue9`). Same layout as the attack-2 families.
ATTACK3_FAMILIES = {"spaced-i18n", "pass-label", "prose-i18n", "tag"}
ATTACK3_NOTE = "look-alike of attack-3 forms"


def test_attack3_families_recall_and_precision() -> None:
    """Both halves of the attack-3 families; the held-out half (other values and phrasings) was
    written with the tuning half, before the detector was changed."""
    _family_figures("attack-3", ATTACK3_FAMILIES, ATTACK3_NOTE, min_pos=25, min_neg=12, held_recall=0.9)


# The families of issue 31 the vendor-format table does not answer: places (Slack and Teams
# webhooks, .npmrc, log lines, setProperty, Go `var x T =`, PHP `.=`, Makefile `::=`/`?=`),
# command lines (ldapsearch -w, redis-cli -a, htpasswd -b, curl -u in its spellings, keytool),
# passwords with spaces or {}[]()$, lower-case word-prefixed values under a secret-named key.
# Both halves were written before the detector was changed for them.
ISSUE31_FAMILIES = {"place", "cli", "spaced31", "word-prefixed"}


def test_issue31_families_recall_and_precision() -> None:
    """Both halves of the issue-31 families (tuning: positives/negatives, held-out: held_out)."""
    tuned_pos, tuned_neg = _families(ISSUE31_FAMILIES, "look-alike of issue-31 forms", POSITIVES, NEGATIVES)
    tuned = _recall_precision(tuned_pos, tuned_neg)
    held_pos, held_neg = _families(ISSUE31_FAMILIES, "held-out look-alike of issue-31 forms (written before tuning)",
                                   HELD_OUT["positives"], HELD_OUT["negatives"])
    held = _recall_precision(held_pos, held_neg)
    assert len(held_pos) >= 20 and len(held_neg) >= 10
    assert {p["family"].partition(":")[2] for p in held_pos} == ISSUE31_FAMILIES
    print(
        f"\nissue-31 families, tuning half ({len(tuned_pos)} positives, {len(tuned_neg)} negatives): recall {tuned[0]:.3f}, precision {tuned[1]:.3f}; "
        f"held-out half ({len(held_pos)} positives, {len(held_neg)} negatives): "
        f"recall {held[0]:.3f}, precision {held[1]:.3f}"
    )
    for miss in tuned[2] + held[2]:
        print("  missed:", repr(miss[:120]))
    for hit in tuned[3] + held[3]:
        print("  false positive:", hit[:120])
    assert tuned[0] >= 0.98 and tuned[1] >= 0.95
    assert held[0] >= 0.9 and held[1] >= 0.95


def test_detection_reads_folded_text_and_masks_the_original_span() -> None:
    """A Cyrillic "а" and a zero-width space in the label, a bidi override before the value and a
    zero-width space inside it: found on the folded copy, masked on the text as written."""
    text = "p\u0430ss\u200bword: \u202eYt6!\u200bpw2Rn and more"
    out = redact(text)
    assert out.masked == ("generic-secret-assignment",)
    assert out.text == "p\u0430ss\u200bword: \u202exxxxxxxxxx and more"
    assert redact("пароль: Ew6*rT0yUi4s").text == "пароль: " + "x" * 12  # Russian is not folded
    full = "\uff30\uff21\uff33\uff33\uff37\uff2f\uff32\uff24\uff1a Ua9$mq4Tx"
    assert redact(full).text == full[:-9] + "x" * 9


def test_a_spaced_password_is_masked_whole() -> None:
    assert redact('DB_PASSWORD="p@ss w0rd!"').text == 'DB_PASSWORD="xxxxxxxxxx"'
    assert redact("password: p@ss w0rd! # prod\n").text == "password: xxxxxxxxxx # prod\n"
    assert redact("export PGPASSWORD='a b c'").text == "export PGPASSWORD='xxxxx'"
    # in a shell a space ends the value: the next word is the command, not the password
    assert redact("PGPASSWORD=Hz7qLm2p psql -h db").text == "PGPASSWORD=xxxxxxxx psql -h db"


def test_every_label_of_the_table_takes_a_spaced_value() -> None:
    """The spaced-value rule is the label table's, not English's: the same value is masked whole
    after labels in six languages and after `passphrase`, quoted or to the end of its line."""
    for label in ("password", "senha", "mot de passe", "пароль", "Passwort", "contraseña", "hasło",
                  "passphrase", "パスワード"):
        for text in (f'{label}: "Tanne Berg 88"', f"{label}: Tanne Berg 88\n"):
            assert redact(text).text == text.replace("Tanne Berg 88", "x" * 13), text
    # a label the English word "pass" is: only a quoted spaced value, a lone value with a digit
    assert redact('pass: "Tanne Berg 88"').text == 'pass: "' + "x" * 13 + '"'
    for prose in ("mountain pass: 2,000 m", "boarding pass: gate B12", "senha: veja o cofre",
                  "Passwort: siehe Tresor", "the pass is closed in winter"):
        assert redact(prose).text == prose, prose


_ISSUE20_TUNING = [p for p in POSITIVES if ":" in p["family"] and p["family"].split(":")[1] in {
    "curl", "sshpass", "i18n", "unicode-space", "pass", "next-line", "variant"}
    or p["family"] in ("putty-private-key", "zero-width-token", "fullwidth-token")]
_ISSUE20_TUNING_NEG = [n for n in NEGATIVES if n["note"] == "look-alike of issue 20 hole 5 forms"]


@pytest.mark.parametrize("entry", HELD_OUT["negatives"], ids=lambda e: repr(e["text"])[:50])
def test_held_out_negative_comes_back_unchanged(entry: dict) -> None:
    result = redact(entry["text"])
    assert result.text == entry["text"]
    assert result.masked == ()


@pytest.mark.parametrize("entry", NEGATIVES, ids=lambda e: repr(e["text"])[:50])
def test_negative_comes_back_unchanged(entry: dict) -> None:
    result = redact(entry["text"])
    assert result.text == entry["text"], entry["note"]
    assert result.masked == ()


def test_corpus_output_is_a_fixpoint() -> None:
    for p in POSITIVES:
        once = redact(p["text"])
        assert scan_text(once.text) == []
        assert redact(once.text) == Redaction(once.text, (), 0)


# --------------------------------------------------------------------------- detect-secrets use


def test_ds_hint_loses_nothing() -> None:
    """The cheap pre-filter in front of detect-secrets must be a superset of its plugins."""
    texts = [p["text"] for p in POSITIVES] + [n["text"] for n in NEGATIVES]
    for text in texts:
        assert list(_ds_candidates(text)) == list(_ds_candidates(text, use_hint=False)), text


def test_ds_hint_skips_ordinary_prose() -> None:
    from git_memex.secrets.dsplugins import _ds_hint

    for text in (
        "",
        "use pnpm, not npm",
        "staging password: Tr0ub4dor&3",
        "我们用 pnpm 而不是 npm",
    ):
        assert not _ds_hint(text), text


def test_ds_plugins_are_used() -> None:
    # the family itself: a vendor format (secrets/formats.py) now claims these spans first
    from git_memex.secrets.dsplugins import _ds_candidates

    rules = {rule for p in POSITIVES for rule, _s, _e in _ds_candidates(p["text"], generic=False)}
    for plugin in ("IbmCloudIamDetector", "IbmCosHmacDetector", "SoftlayerDetector", "CloudantDetector"):
        assert f"detect-secrets:{plugin}" in rules


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def test_import_is_lazy() -> None:
    probe = (
        "import sys, git_memex.secrets.redact as r\n"
        "print(sorted(m for m in ('detect_secrets', 'yaml', 'requests') if m in sys.modules))\n"
        "r.redact('use pnpm, not npm; staging password: Tr0ub4dor&3')\n"
        "print('detect_secrets' in sys.modules)\n"
        "r.redact('softlayer_api_key: p9xf76938scyfdp91s3k5fbwka3d39ou5ispjr7bfn83urirf5p8yfc7x623ven3')\n"
        "print('detect_secrets' in sys.modules)\n"
    )
    assert _run(probe).splitlines() == ["[]", "False", "True"]


# Long runs for the attack-2 detectors, at the largest body a write accepts (64 KiB): the unquoted
# value that runs to the end of its line, the prose with a target, the labels in more languages,
# the folding of look-alike letters, the glued -p'…' of mysql, and a text full of findings (the
# overlap check and the line count were quadratic in the number of findings).
_LONG_UNITS = ["password: a ", "password: p@ss ", 'password="a b', "pw: a ", "password for ",
               "the password for prod is ", "كلمة المرور ", "รหัสผ่าน", "mật khẩu ", "Parola pentru ",
               "p\u0430ss", "\u0430a", "a1Secret", "mysql -p'", "DB_PASSWORD=a ", "secret=",
               "Passwort ", "senha: a ", 'senha: "a b', "la password è ", "db pass ", "pass:-",
               "pass:-a1\n", "passwort:-a-b-1\n", "passphrase is a1 "]
_LONG_FORMS = [('DB_PASSWORD="p@ss w0rd!"', "p@ss w0rd!"), ("password: Rain Drop#9", "Rain Drop#9"),
               ("كلمة المرور: Qw7!mZ92a", "Qw7!mZ92a"), ("p\u0430ssword: Yt6!pw2Rn", "Yt6!pw2Rn"),
               ("the password for prod is hunter2-Xyz", "hunter2-Xyz"),
               ("alias dbp=\"mysql -uadmin -p'Jx7#mw2Lt' prod\"", "Jx7#mw2Lt"),
               ('senha: "verde mar 77"', "verde mar 77"), ("Passwort: Sommer Wind 2024", "Sommer Wind 2024"),
               ("la password è Hunter2xyzQ", "Hunter2xyzQ"), ("db pass Kx81Mq22pz", "Kx81Mq22pz"),
               ("passphrase is horse battery staple 9", "horse battery staple 9"),
               ("pass:-s3cr3tv@lue9", "s3cr3tv@lue9")]


def test_long_runs_of_the_attack2_forms_finish_and_are_masked() -> None:
    """Every unit and form repeated to 64 KiB, redacted in a child process. No clock is read: the
    child's timeout only guards against a hang (the linear cost is well under a second a case),
    and every copy of each form must come out masked."""
    probe = (
        "import json, sys\n"
        "from git_memex.secrets.redact import redact\n"
        "units, forms = json.loads(sys.argv[1])\n"
        "for u in units:\n"
        "    redact((u * 65536)[:65536])\n"
        "for text, secret in forms:\n"
        "    line = text + '\\n'\n"
        "    out = redact(line * (65536 // len(line)))\n"
        "    assert secret not in out.text, text\n"
        "    assert len(out.masked) == 65536 // len(line), (text, len(out.masked))\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, json.dumps([_LONG_UNITS, _LONG_FORMS])],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


# --------------------------------------------------------------------------- properties

_PROSE = [
    "remember that the meeting is at 3pm",
    "我们用 pnpm 而不是 npm",
    "password: ",
    "api_key = ",
    "token=",
    '"',
    "'",
    " ",
    "\n",
    ": ",
    "https://user:",
    "@host/db",
    "<private>",
    "</private>",
    "-----BEGIN RSA PRIVATE KEY-----\n",
    "-----END RSA PRIVATE KEY-----",
    "x",
    "xxxx",
]
_FRAGMENTS = st.sampled_from(
    _PROSE
    + [p["secret"] for p in POSITIVES]
    + [p["text"] for p in POSITIVES[::3]]
    + [n["text"] for n in NEGATIVES[::3]]
)
_TEXTS = st.lists(st.one_of(_FRAGMENTS, st.text(max_size=12)), max_size=8).map("".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXTS)
def test_redact_is_idempotent_and_length_preserving(text: str) -> None:
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.masked == ()
    assert scan_text(once.text) == []
    stripped, spans = strip_private(text)
    assert spans == once.private_spans
    assert len(once.text) == len(stripped)
    assert once.text.count("\n") == stripped.count("\n")


@settings(max_examples=100, deadline=None)
@given(_TEXTS)
def test_ds_hint_is_a_superset(text: str) -> None:
    assert list(_ds_candidates(text)) == list(_ds_candidates(text, use_hint=False))


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200), st.lists(st.text(max_size=6), max_size=2))
def test_redact_never_raises(text: str, patterns: list[str]) -> None:
    result = redact(text, patterns)
    assert isinstance(result.text, str)


# ------------------------------------------------------------------ web pre-filter
def test_web_hints_lose_nothing_on_the_corpus() -> None:
    from git_memex.secrets.web import _web_candidates

    for text in [p["text"] for p in POSITIVES] + [n["text"] for n in NEGATIVES]:
        assert list(_web_candidates(text)) == list(_web_candidates(text, use_hint=False)), text


@pytest.mark.parametrize("key", ["azure", "cookie", "netrc-password", "login-password", "mysql-password",
                                 "pgpass-password", "url-credentials", "authorization-header", "bearer",
                                 "query-key", "docker-auth"])
def test_web_hints_are_in_every_match(key: str) -> None:
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    from git_memex.secrets import web as r

    rx = {"azure": r._AZURE_SAS, "cookie": r._COOKIE, "netrc-password": r._CLI_PASSWORD[0],
             "login-password": r._CLI_PASSWORD[1], "mysql-password": r._CLI_PASSWORD[2],
             "pgpass-password": r._CLI_PASSWORD[3], "url-credentials": r._URL_CREDS,
             "authorization-header": r._AUTH_HEADER, "bearer": r._BEARER, "query-key": r._QUERY_KEY,
             "docker-auth": r._DOCKER_AUTH}[key]
    regex = re.compile(rx.python)  # as Python's re reads it, for hypothesis to draw from
    hints = r._WEB_HINTS[key]

    def misses_hint(s: str) -> bool:
        m = regex.search(s)
        return m is not None and not any(h in m.group(0).lower() for h in hints)

    with pytest.raises(NoSuchExample):
        find(st.from_regex(regex), misses_hint, settings=settings(max_examples=120, database=None))


# ------------------------------------------------------------------ detect-secrets pattern cache
_DS_PROBE = (
    "import json, sys; from git_memex.secrets import dsplugins, redact; "
    "found = [f.rule for f in redact.find_secrets('api_key = \"abcdef0123456789abcdef0123\"')]; "
    "print(json.dumps({'imported': 'detect_secrets' in sys.modules or 'requests' in sys.modules, "
    "'specs': [[r, p.pattern, p.flags, g] for r, p, g in dsplugins._ds_patterns()], 'found': found}))"
)


def _probe(home: Path) -> dict:
    env = {**os.environ, "GIT_MEMEX_HOME": str(home)}
    out = subprocess.run([sys.executable, "-c", _DS_PROBE], capture_output=True, text=True, env=env, check=True,
                         timeout=60).stdout
    return json.loads(out)


def test_detect_secrets_patterns_come_from_the_cache_after_the_first_run(tmp_path: Path) -> None:
    from git_memex.secrets.dsplugins import _ds_specs_from_library

    first = _probe(tmp_path)
    assert first["imported"] is True  # nothing cached yet: the library is imported
    cache = tmp_path / "cache" / "detect-secrets-patterns.json"
    assert cache.exists()
    second = _probe(tmp_path)
    assert second["imported"] is False  # neither detect_secrets nor requests (~130 ms)
    library = [list(s) for s in _ds_specs_from_library()]
    assert second["specs"] == first["specs"] == library
    assert second["found"] == first["found"]


@pytest.mark.parametrize("damage", ["key", "garbage", "bad-regex"])
def test_a_stale_or_broken_cache_falls_back_to_the_library(tmp_path: Path, damage: str) -> None:
    _probe(tmp_path)
    cache = tmp_path / "cache" / "detect-secrets-patterns.json"
    doc = json.loads(cache.read_text())
    if damage == "key":
        doc["key"] += "-older-version"
        cache.write_text(json.dumps(doc))
    elif damage == "garbage":
        cache.write_text("{not json")
    else:
        doc["patterns"][0][1] = "(unclosed"
        cache.write_text(json.dumps(doc))
    again = _probe(tmp_path)
    assert again["imported"] is True and again["found"]
    assert json.loads(cache.read_text())["patterns"] == again["specs"]  # rewritten from the library


def _assignment_gates() -> list[tuple[str, object, tuple[str, ...]]]:
    from git_memex.secrets import assignments as a

    out: list[tuple[str, object, tuple[str, ...]]] = [
        (name, rx, a._HINTS[rx]) for name, rx in vars(a).items() if isinstance(rx, type(a._ASSIGN)) and rx in a._HINTS]
    out += [(n, getattr(a, n), a._LABEL_HINTS) for n in ("_IS_ASSIGN", "_FOR_ASSIGN", "_LOG_ASSIGN",
                                                          "_QUALIFIED_PASS", "_NEXT_LINE")]
    return out


@pytest.mark.parametrize("name,rx,hints", _assignment_gates(), ids=lambda v: v if isinstance(v, str) else "")
def test_assignment_hints_are_in_every_match(name: str, rx, hints: tuple[str, ...]) -> None:
    """Strings generated from each gated assignment pattern: whatever matches holds one of the
    literals that let the pattern run (`assignments._HINTS`, `_LABEL_HINTS`)."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    regex = re.compile(rx.python)

    def misses_hint(s: str) -> bool:
        m = regex.search(s)
        return m is not None and not any(h in s.lower() for h in hints)

    with pytest.raises(NoSuchExample):
        find(st.from_regex(regex), misses_hint, settings=settings(max_examples=120, database=None))


# The families the outside suites' tuning halves showed missing or wrongly masked (docs/security.md,
# "issue 31, second pass"): a found value repeated elsewhere in the text, secret-named XML
# elements (Jenkins credentials, a value on its own line), "<what> token - 'value'", passwords
# holding {}[]()$ that form no template, a literal compared with a secret-named variable, a
# spaced quoted value under a password key in code, Kubernetes Secret data, curl credentials on a
# continuation line or as a bare Authorization value, and a vendor's prefix and exact shape
# whatever its body reads like; the look-alikes are templates, placeholders, anti-forgery and
# public tokens. Written by us, both halves before the detector was changed for them.
ISSUE31_PASS2_FAMILIES = {"repeat", "xml-secret", "dash-label", "brackets", "compare", "spaced-code", "k8s-secret",
                          "curl-2", "vendor-placeholder"}


def test_issue31_pass2_families_recall_and_precision() -> None:
    """Both halves of the second pass's families (tuning: positives/negatives, held-out: held_out)."""
    _family_figures("issue-31 pass-2", ISSUE31_PASS2_FAMILIES, "look-alike of issue-31 pass-2 forms",
                    min_pos=25, min_neg=20, held_recall=0.9,
                    held_note="held-out look-alike of issue-31 pass-2 forms (written before tuning)")


def test_a_repeated_value_is_masked_only_where_it_stands_alone() -> None:
    """A found value is masked at its other places (`redact._echoes`), but a value that could be
    a word (letters only, lower case or short) is not hunted elsewhere: the password of
    ``postgres://postgres:postgres@`` is masked, the scheme and the user of that name stay."""
    out = redact("DB_URL=postgres://app:S3cr3t-Pw9@db/app\nthen psql with S3cr3t-Pw9 again\n").text
    assert "S3cr3t" not in out and "with " + "x" * 10 + " again" in out
    url = 'DSN = "postgres://postgres:postgres@localhost:5432/app"'
    assert redact(url).text == 'DSN = "postgres://postgres:xxxxxxxx@localhost:5432/app"'
    letters = "crawler token = 'wqXKCFzOWEPRqhTmmbWtVQ' | 'wqXKCFzOWEPRqhTmmbWtVQ'"  # generated letters: copied
    assert "wqXK" not in redact(letters).text


VENDOR_KEYS = [  # a vendor's name before "key", a generated value (written by us)
    'clarifai_key: "Wq7FcxUCsl2P3vCJuFgDuLeUXdyTo9Zl"',
    'braintreeKey := "e7a3cb81a7fd0915a71ce17ab8a903cf"',
    "MAPBOX_SERVICE_KEY=Hq2mLx9Rv4Tn1Kp8Ws6Yb3Nc",
    "<stripeKey>rk2Lm9Qx7Vb4Nc8Tz1Wy6Hd3</stripeKey>",
]
PLAIN_KEYS = [  # keys that hold no credential, or values nobody generated
    'cache_key = "5d41402abc4b2a76b9719d911017c592"',
    'sortKey: "created_at_2024_01_01"',
    'translationKey = "homepage.welcome.message1"',
    'mapbox_key = "v2-user-profile-12345"',
    'deploy_key: "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123"',
    'idempotencyKey = "a81bc81b-dead-4e5d-abff-90865d1e13b1"',
    "primary_key: user_id_2024_v2",
]


@pytest.mark.parametrize("text", VENDOR_KEYS)
def test_a_generated_value_under_any_key_name_is_masked(text: str) -> None:
    """``<vendor>_key`` / ``<vendor>Key``: a name our tables do not know, ending in "key", with
    a value a key generator wrote (a run of 16+ varied letters and digits) is a credential."""
    assert redact(text).masked == ("generic-secret-assignment",)


@pytest.mark.parametrize("text", PLAIN_KEYS)
def test_a_plain_key_or_a_written_value_is_left_alone(text: str) -> None:
    assert redact(text).text == text


def test_a_long_token_under_a_secret_name_is_masked_whole() -> None:
    """A JWT or an OAuth refresh token runs past 256 characters: the quoted value is masked whole."""
    body = "Tq3vX8kR2mLp9ZwY5bN1cH7dJ4sG6aQ0eUoV2rK8xMs" * 30  # 1,290 characters
    text = f'"refresh_token": "1.{body}",'
    out = redact(text).text
    assert body[:40] not in out and out == '"refresh_token": "' + "x" * (len(body) + 2) + '",'


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("jdbc:sqlserver://db:1433;user=app;password=Xk9-vLp2qR;encrypt=false</jdbc-url>", ";encrypt=false</jdbc-url>"),
        ("jdbc:postgresql://db:5432/app?sslmode=disable&password=Xk9vLp2qR7&user=app&", "&user=app&"),
        ("<pw>password=Xk9vLp2qR7</pw>", "</pw>"),
    ],
)
def test_an_unquoted_value_ends_at_the_next_pair_or_its_closing_tag(text: str, kept: str) -> None:
    """A password in a connection string or a query is masked, not the pairs and tags after it."""
    out = redact(text).text
    assert "Xk9" not in out and out.endswith(kept)


@pytest.mark.parametrize(
    "text",
    [
        'req.Header.Set("X-Acme-ApiKey", "Hq2mLx9Rv4Tn1Kp8Ws6Yb3Nc7Vd")',
        'xhr.setRequestHeader("X-Auth-Token", "rk2Lm9Qx7Vb4Nc8Tz1Wy6Hd3")',
        "https://maps.example.com/api/js?key=Hq2mLx9Rv4Tn1Kp8Ws6Yb3Nc&callback=init",
        'curl "https://api.example.com/v1/items?access_token=rk2Lm9Qx7Vb4Nc8Tz1Wy6Hd3"',
    ],
)
def test_a_key_in_a_header_call_or_a_url_query_is_masked(text: str) -> None:
    """An HTTP header set by a call, and a key in a URL's query, with a generated value."""
    out = redact(text).text
    assert "Hq2mLx9R" not in out and "rk2Lm9Qx" not in out


@pytest.mark.parametrize(
    "text",
    [
        'xhr.setRequestHeader("Content-Type", "application/json")',
        "https://example.com/search?key=value_of_the_query_string&page=2",
        "https://example.com/docs?token=how-to-rotate-keys",
    ],
)
def test_a_plain_header_or_query_is_left_alone(text: str) -> None:
    assert redact(text).text == text


_DOCKER_B64 = "ZGVwbG95LWJvdDpWcTctTG0ycFh6OVJ0"  # base64 of "deploy-bot:Vq7-Lm2pXz9Rt" (written by us)


@pytest.mark.parametrize(
    "text",
    [
        '{"auths": {"registry.example.com": {"auth": "' + _DOCKER_B64 + '"}}}',
        'config.json: "{\\n\\t\\"auths\\": {\\"ghcr.io\\": {\\"auth\\":\\"' + _DOCKER_B64 + '\\"}}}"',
    ],
)
def test_a_docker_registry_auth_is_masked(text: str) -> None:
    """Docker's config.json `auths` entry (also as escaped JSON in a string): base64 of user:password."""
    assert _DOCKER_B64 not in redact(text).text


@pytest.mark.parametrize("pair", [b"not-a-pair", b"user:pass", b"my_username:my_password"])
def test_a_docker_auth_that_is_no_user_password_pair_is_left_alone(pair: bytes) -> None:
    """Not base64 of ``user:password``, or a placeholder pair (its password fails the guard of any password)."""
    text = '{"auths": {"ghcr.io": {"auth": "' + base64.b64encode(pair).decode() + '"}}}'
    assert redact(text).text == text
