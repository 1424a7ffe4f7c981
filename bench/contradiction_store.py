"""What the store's contradiction finder costs on a store written to keep it busy (docs/search.md,
"What it costs").

    python -m bench.contradiction_store [--n 450] [--seed 1] [--rounds 3] [--audit]

Generates N memories from the finder's own words: numbers with units, negations, choices
(tabs/spaces, npm/pnpm, enable/disable, always/never), owners, versions, ports, times, in English
and Chinese, a few dozen subjects each written many times with another value, so that most
memories have the full MAX_CANDIDATES close ones and most pairs reach the alignment, `loose` and
`slots`. Prints the CPU time (`time.process_time`) of `review.contradictions.find` over them (the
best of --rounds) and the pairs it found; with --audit, also writes them as committed memory files
in a fresh repository and prints the CPU time of one `git memex audit --json` process (its own and
its children's).

`rows(n, seed)` is what tests use (tests/review/test_finder_cache.py).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_EN = (
    "The public API rate limit is {n} requests per minute{q}.",
    "Each API key is throttled at {n} requests per minute{q}.",
    "The search service timeout is {n} seconds{q}.",
    "Search requests time out after {n} ms{q}.",
    "We {neg}deploy on {day}{q}.",
    "Deployments {neg}happen on {day} after the standup.",
    "Use {indent} for indentation in {lang} files.",
    "Indent {lang} code with {indent}, {always} in new files.",
    "Install packages with {pm}, not {pm2}.",
    "The frontend uses {pm} as its package manager.",
    "Merge pull requests with a {merge} commit{q}.",
    "Feature flags are {switch}d by default{q}.",
    "The billing service is owned by {owner}.",
    "{owner} owns the billing service and its on-call.",
    "The service listens on port {port}{q}.",
    "Node {ver} is the supported runtime{q}.",
    "The nightly backup runs at {clock}{q}.",
    "Retry failed webhooks {n} times before giving up.",
    "Sessions expire after {n} minutes of inactivity{q}.",
    "We {always} squash commits before merging to main.",
)
_ZH = (
    "接口限流是每分钟 {n} 次{zq}。",
    "搜索服务的超时时间是 {n} 秒{zq}。",
    "我们{zneg}在{zday}发布{zq}。",
    "代码缩进使用{zindent}。",
    "功能开关默认{zswitch}{zq}。",
    "支付服务的负责人是{zowner}。",
    "重试 {n} 次后放弃{zq}。",
    "数据库备份在凌晨 {h} 点执行。",
    "会话在 {n} 分钟后过期{zq}。",
    "部署{zneg}需要审批{zq}。",
)
_Q = ("", "", "", " in production", " for free accounts", " in development", " for paid accounts")
_ZQ = ("", "", "", "（生产环境）", "（开发环境）", "（免费用户）")
_DAYS = ("Tuesdays", "Fridays", "Mondays", "weekends")
_ZDAYS = ("周二", "周五", "周一", "周末")
_OWNERS = ("Alice", "Bob", "the Platform team", "SRE", "@lena", "the Payments team")
_ZOWNERS = ("王磊", "刘洋", "支付组", "基础架构组")


def _fill(rnd: random.Random, template: str) -> str:
    return template.format(
        n=rnd.choice((3, 5, 10, 30, 60, 100, 500, 1000)), q=rnd.choice(_Q), neg=rnd.choice(("", "never ", "don't ")),
        day=rnd.choice(_DAYS), indent=rnd.choice(("tabs", "spaces")), lang=rnd.choice(("Python", "Go", "TypeScript")),
        always=rnd.choice(("always", "never")), pm=rnd.choice(("npm", "pnpm", "yarn")),
        pm2=rnd.choice(("npm", "pnpm", "yarn")), merge=rnd.choice(("squash", "merge", "rebase")),
        switch=rnd.choice(("enable", "disable")), owner=rnd.choice(_OWNERS), port=rnd.choice((8080, 9090, 3000, 8443)),
        ver=rnd.choice(("18", "20", "22", "20.11.0")), clock=rnd.choice(("02:00", "04:30", "6am", "11pm")),
        zq=rnd.choice(_ZQ), zneg=rnd.choice(("", "不", "从不")), zday=rnd.choice(_ZDAYS),
        zindent=rnd.choice(("制表符", "空格", "四个空格")), zswitch=rnd.choice(("启用", "禁用", "关闭", "打开")),
        zowner=rnd.choice(_ZOWNERS), h=rnd.choice((1, 2, 3, 4)))


def texts(n: int, seed: int = 1) -> list[str]:
    """N memory texts (English about two thirds, Chinese a third), many on one subject."""
    rnd = random.Random(seed)
    out: list[str] = []
    for i in range(n):
        template = rnd.choice(_ZH) if i % 3 == 2 else rnd.choice(_EN)
        out.append(_fill(rnd, template))
    return out


def rows(n: int, seed: int = 1) -> list[dict[str, Any]]:
    """The texts as the finder's rows: active project memories of one tier and review state."""
    return [{"id": f"m{i:05d}", "body": t, "location": "project", "type": "fact", "source": "manual",
             "review_state": "published", "supersedes": None, "superseded_by": None}
            for i, t in enumerate(texts(n, seed))]


def _audit_cpu(bodies: list[str]) -> float:
    from git_memex.core import frontmatter, model

    with tempfile.TemporaryDirectory(prefix="memex-contra-store-") as d:
        tmp = Path(d)
        env = {**os.environ, "GIT_MEMEX_HOME": str(tmp / "data"), "HOME": str(tmp), "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_CONFIG_GLOBAL": str(tmp / "gitconfig")}
        (tmp / "gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
        work = tmp / "w"
        folder = work / ".ai" / "open-memex"
        folder.mkdir(parents=True)
        for body in bodies:
            m = model.create(body, scope="project", review_state="published")
            (folder / f"{m.id}.md").write_text(frontmatter.serialize(m.fm, m.body), "utf-8")
        for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "store"]):
            subprocess.run(["git", *cmd], cwd=work, check=True, capture_output=True, env=env)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-m", "git_memex", "audit", "--json"], cwd=work, env=env,
                       capture_output=True, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=450)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--audit", action="store_true", help="also time one `git memex audit --json` process")
    args = ap.parse_args(argv)
    from git_memex.review.contradictions import find

    got = rows(args.n, args.seed)
    best = float("inf")
    found = 0
    for _ in range(args.rounds):
        t = time.process_time()
        found = len(find(got))
        best = min(best, time.process_time() - t)
    print(f"find over {args.n} memories (seed {args.seed}): {best:.3f} s CPU (best of {args.rounds}), {found} pairs")
    if args.audit:
        print(f"git memex audit --json: {_audit_cpu([r['body'] for r in got]):.3f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
