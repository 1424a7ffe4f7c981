"""`git memex audit`: what needs tending (read-only; docs/curating.md)."""

from __future__ import annotations

import argparse

from git_memex.commands._common import add_json, context, emit_json


def _days(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of days") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1 day")
    return n


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("audit", help="list what needs tending: contradictions, near-duplicates, stale memories, broken chains",
                       description="Read-only report for a curator: near-duplicate pairs, active memories not "
                       "updated in --days days (90), supersede chains that are broken or point at a memory that is "
                       "not there, personal or private files in the repository, unreadable files, rules whose file says "
                       "approved without an approval record for that content, index drift, and active memories that disagree "
                       "(contradictions: both ids, the differing values, the one precedence prefers and why). "
                       "Changes nothing (not even the index); exit 0 whatever it finds.")
    p.add_argument("--days", type=_days, default=90, metavar="N", help="a memory is stale after N days untouched (90)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from git_memex.upkeep.audit import audit

    rep = audit(context(), days=args.days)
    if args.json:
        emit_json(rep.to_json())
        return 0
    print(f"audited {rep.scanned} memor{'y' if rep.scanned == 1 else 'ies'}")
    if rep.clean:
        print("nothing to tend")
        return 0
    lines: list[str] = []
    lines += [f"{c.level:4}  chain: {c.detail}" for c in rep.chains]
    lines += [f"fail  {p['kind']} memory in the repository: {p['path']} (never commit it; move it out)"
              for p in rep.personal_in_repo]
    lines += [f"fail  unreadable: {u['path']}: {u['reason']}" for u in rep.unreadable]
    shown: set[str] = set()
    for x in rep.secrets:  # the fix once per file
        lines.append(f"fail  secret in the repository: {x['path']}:{x['line']}: {x['rule']}"
                     + ("" if x["path"] in shown else f" ({x['fix']})"))
        shown.add(x["path"])
    lines += [f"warn  self-approved: {a['id']} was proposed and approved by {a['by']} (team mode wants a second person)"
              for a in rep.self_approved]
    lines += [f"fail  claims approval but is not served: {a['id']} ({a['location']}): {a['why']}"
              for a in rep.unbacked_approvals]
    lines += [f"fail  approver mismatch: {a['id']} says approved_by {a['approved_by'] or '(nobody)'} but its approval "
              f"record names {a['approver']} (git's identity at approval; `git memex instruction approve "
              f"{a['id']}` writes the file again)" for a in rep.approver_mismatch]
    lines += [f"warn  claims {c['claims']} but stands {c['standing']}: {c['id']} ({c['location']}): {c['why']}"
              for c in rep.unreviewed_claims]
    for line in lines:
        print(line)
    if rep.contradictions:
        from git_memex.review.contradictions import sentence

        _capped([f"warn  contradiction: {sentence(c)}" for c in rep.contradictions], "contradictions")
    if rep.contradictions_left_out:
        print(f"      … and {rep.contradictions_left_out} more pairs of memories that disagree, not listed "
              f"(at most {len(rep.contradictions)} are; supersede or mark some, then run audit again)")
    if rep.contradictions_silenced:
        n = len(rep.contradictions_silenced)
        print(f"info  {n} pair{'s' if n > 1 else ''} of memories that disagree, marked not contradictory "
              "(`git memex compatible`):")
        _capped([f"      {s['a']} {s['b']}: "
                 + (f"by {s['by']}" if s.get("by") else "not committed yet, so nobody git knows"
                    if s.get("where") == "repository" else "by nobody known")
                 + (f" (the record says {s['says']})" if s.get("says") and s.get("says") != s.get("by") else "")
                 for s in rep.contradictions_silenced if "where" in s], "silenced pairs")
    if rep.contradictions_unchecked:
        from git_memex.review.contradictions import unchecked_sentence

        print(f"warn  contradictions: {unchecked_sentence(rep.contradictions_unchecked)}")
    _capped([f"warn  near-duplicates ({d.similarity:.2f}): {d.a} {d.b} (supersede or forget one)"
             for d in rep.near_duplicates], "near-duplicate pairs")
    _capped([f"info  stale ({'no date' if s.days < 0 else f'{s.days} days'}): {s.id} {s.location}/{s.type} "
             f"(still true? if not, `git memex status {s.id} deprecated`)" for s in rep.stale], "stale memories")
    _capped([f"warn  index: {x['path']} {x['problem']} (`git memex reindex` fixes it)" for x in rep.index_drift],
            "index drift lines")
    return 0


SHOWN = 20
"""Lines of one kind printed before the rest is counted (`--json` lists every one)."""


def _capped(lines: list[str], what: str) -> None:
    for line in lines[:SHOWN]:
        print(line)
    if len(lines) > SHOWN:
        print(f"      … and {len(lines) - SHOWN} more {what} (--json lists them all)")
