"""`doctor`: every check that something is wrong, each with the command that fixes it."""

from __future__ import annotations

from typing import Any

from git_memex.paths import Context
from git_memex.record import field, record


@record
class Check:
    name: str
    level: str  # ok | warn | fail
    detail: str = ""


@record
class Report:
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, level: str, detail: str = "") -> None:
        self.checks.append(Check(name, level, detail))

    @property
    def ok(self) -> bool:
        return not any(c.level == "fail" for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [c.__dict__ for c in self.checks]}


def run(ctx: Context) -> Report:
    from git_memex.stores import Stores

    rep = Report()
    with Stores(ctx) as st:
        stats = st.refresh(trigger="doctor")
        if stats.touched:
            rep.add("index", "warn", f"index was behind the files by {stats.touched} change(s); refreshed")
        else:
            rep.add("index", "ok", "in step with the files")
        for index in [st.home] + ([st.repo] if st.repo else []):
            for path, why in index.quarantined():
                rep.add("unreadable file", "fail", f"{path}: {why}")
        _check_chains(st, rep)
        _check_duplicates(st, rep)
        _check_contradictions(ctx, st, rep)
    if ctx.repo is not None and ctx.memory_dir is not None:
        _check_repo(ctx, rep)
    return rep


def _rows(st: Any) -> list[Any]:
    rows = []
    for index, where, params in st.dbs():
        rows.extend(index.conn.execute(f"SELECT m.* FROM memories m WHERE {where}", params).fetchall())
    return rows


def _check_chains(st: Any, rep: Report) -> None:
    from git_memex.chains import disagreements

    found = disagreements({r["id"]: r for r in _rows(st)})
    for severity, message in found:
        rep.add("supersede chain", severity, message)
    if not any(sev == "fail" for sev, _ in found):
        rep.add("supersede chains", "ok")


def _check_duplicates(st: Any, rep: Report) -> None:
    seen: dict[str, list[str]] = {}
    for r in _rows(st):
        seen.setdefault(r["id"], []).append(r["path"])
    dups = {k: v for k, v in seen.items() if len(v) > 1}
    for mid, paths in dups.items():
        rep.add("duplicate id", "warn", f"{mid} exists in {len(paths)} places: {', '.join(paths)}")
    if not dups:
        rep.add("unique ids", "ok")


def _check_contradictions(ctx: Context, st: Any, rep: Report) -> None:
    try:
        from git_memex.review import contradictions
    except ImportError:
        return
    pairs = contradictions(ctx, stores=st)
    for p in pairs:
        rep.add("possible contradiction", "warn", f"{p['a']} and {p['b']} look like the same subject with different content; a human decides")


def _check_repo(ctx: Context, rep: Report) -> None:
    from git_memex import frontmatter
    from git_memex.hooks import hook_status
    from git_memex.install import attributes_configured, merge_driver_configured
    from git_memex.scan import check_text
    from git_memex.store import conflict_marker_line

    assert ctx.repo is not None and ctx.memory_dir is not None
    set_up = ctx.memory_dir.is_dir() or attributes_configured(ctx)
    if not set_up:
        rep.add("repository", "warn", "not set up for git-memex; run `git memex init`")
        return
    rep.add(".gitattributes", "ok" if attributes_configured(ctx) else "fail",
            "" if attributes_configured(ctx) else "missing the merge=memex line; run `git memex init`")  # fmt: skip
    rep.add("merge driver", "ok" if merge_driver_configured(ctx) else "fail",
            "" if merge_driver_configured(ctx) else "not registered in this clone's git config; run `git memex init`")  # fmt: skip
    missing = [name for name, ok in hook_status(ctx.repo.work_tree).items() if not ok]
    if missing:
        pre_commit_framework = (ctx.repo.work_tree / ".pre-commit-config.yaml").exists()
        level = "warn" if missing == ["pre-commit"] and pre_commit_framework else "fail"
        rep.add("git hooks", level, f"not installed: {', '.join(missing)}; run `git memex init`")
    else:
        rep.add("git hooks", "ok")
    problems = 0
    for path in sorted(ctx.memory_dir.glob("*.md")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        rel = str(path.relative_to(ctx.repo.work_tree))
        if conflict_marker_line(text) is not None:
            continue  # already reported as unreadable, with the line and `git memex resolve`
        try:
            frontmatter.parse(text)
        except frontmatter.FrontmatterError:
            continue  # already reported as unreadable
        for f in check_text(rel, text):
            problems += 1
            rep.add("memory file", "fail", str(f))
    if not problems:
        rep.add("memory files in the repository", "ok", "no secrets, no personal or private memories")
