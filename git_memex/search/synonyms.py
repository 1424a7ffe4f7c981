"""Hand-written English/Chinese software-engineering synonym groups for query expansion.

Why: a memory written as "数据库备份在凌晨" is never found by "db backup", and "prod" shares no
token with "线上". A small, generic table closes the commonest gaps without a model. Each group
lists words an engineer uses interchangeably; a word may sit in several groups. Entries are
lower-case and either pure Latin (one to three words) or pure CJK (two characters or more,
except a few unambiguous single characters), never mixed.

Generic engineering vocabulary only: nothing here is tuned to an evaluation set.
Standard library only and cheap to import: the lookup tables are built on first use.
"""

from __future__ import annotations

GROUPS: tuple[tuple[str, ...], ...] = (
    # environments and deployment
    ("prod", "production", "生产", "线上"),
    ("staging", "preprod", "pre production", "预发布", "预发"),
    ("dev", "development", "开发环境"),
    ("env", "environment", "环境"),
    ("deploy", "deployment", "release", "ship", "rollout", "部署", "发布", "上线"),
    ("rollback", "revert", "roll back", "回滚", "回退"),
    ("k8s", "kubernetes"),
    ("container", "docker", "容器"),
    ("cluster", "集群"),
    ("server", "host", "machine", "服务器", "主机"),
    ("service", "microservice", "服务"),
    # source control and workflow
    ("repo", "repository", "仓库", "代码库"),
    ("branch", "分支"),
    ("merge", "合并"),
    ("commit", "提交"),
    ("pr", "pull request", "merge request", "mr", "合并请求"),
    ("review", "code review", "评审", "审查", "代码审查"),
    ("ci", "pipeline", "ci cd", "持续集成", "流水线"),
    ("build", "compile", "构建", "编译"),
    ("test", "spec", "testing", "测试"),
    ("unit test", "单元测试", "单测"),
    ("regression", "回归"),
    ("lint", "linter", "静态检查"),
    ("refactor", "refactoring", "重构"),
    ("version", "版本"),
    ("upgrade", "update", "bump", "升级", "更新"),
    ("install", "installation", "setup", "安装"),
    ("dependency", "dependencies", "deps", "依赖"),
    ("library", "lib", "package", "pkg", "软件包", "类库"),
    ("config", "configuration", "settings", "setting", "配置", "设置"),
    ("docs", "documentation", "doc", "文档"),
    ("requirement", "requirements", "需求"),
    ("architecture", "架构"),
    ("script", "脚本"),
    ("cli", "command line", "command", "命令行", "命令"),
    # failures and operations
    ("bug", "defect", "缺陷"),
    ("error", "exception", "failure", "报错", "错误", "异常", "失败"),
    ("crash", "panic", "segfault", "崩溃", "闪退"),
    ("outage", "incident", "downtime", "故障", "事故", "宕机"),
    ("slow", "latency", "performance", "perf", "慢", "性能", "延迟", "卡顿"),
    ("timeout", "timed out", "time out", "超时"),
    ("retry", "重试"),
    ("log", "logs", "logging", "日志"),
    ("monitor", "monitoring", "metrics", "observability", "监控", "指标"),
    ("alert", "alerting", "alarm", "告警", "报警"),
    ("debug", "debugging", "troubleshoot", "调试", "排查"),
    # data
    ("db", "database", "数据库"),
    ("index", "索引"),
    ("schema", "表结构"),
    ("migration", "migrate", "迁移"),
    ("backup", "备份"),
    ("restore", "recovery", "恢复"),
    ("cache", "caching", "缓存"),
    ("queue", "mq", "message queue", "队列", "消息队列"),
    ("disk", "storage", "磁盘", "存储", "硬盘"),
    ("ram", "内存"),
    ("oom", "out of memory", "内存溢出", "内存不足"),
    ("cpu", "processor", "处理器"),
    ("concurrency", "parallel", "并发", "并行"),
    ("cron", "scheduled job", "定时任务"),
    # interfaces and network
    ("api", "endpoint", "接口"),
    ("frontend", "front end", "ui", "前端"),
    ("backend", "back end", "后端"),
    ("network", "networking", "网络"),
    ("proxy", "代理"),
    ("dns", "域名解析"),
    ("load balancer", "lb", "负载均衡"),
    ("rate limit", "throttle", "throttling", "限流"),
    ("encoding", "charset", "编码"),
    ("feature flag", "feature toggle", "特性开关", "功能开关"),
    # security
    ("auth", "authentication", "login", "signin", "sign in", "登录", "认证"),
    ("authorization", "authz", "permission", "permissions", "acl", "权限", "授权"),
    ("secret", "credential", "credentials", "token", "api key", "密钥", "凭证", "令牌"),
    ("password", "passwd", "密码"),
    ("security", "安全"),
    ("vulnerability", "vuln", "cve", "漏洞"),
    ("encryption", "encrypt", "加密"),
    ("certificate", "cert", "证书"),
)

_LATIN_INDEX: dict[str, tuple[str, ...]] | None = None
_CJK_INDEX: dict[str, tuple[str, ...]] | None = None
_MAX_PHRASE_WORDS = 1


def _is_cjk_entry(word: str) -> bool:
    """True for entries written in CJK; every entry is purely one script (checked by tests)."""
    return word[:1] > "\u2e7f"


def _build() -> None:
    """Index every entry to the other members of all its groups, keeping table order."""
    global _LATIN_INDEX, _CJK_INDEX, _MAX_PHRASE_WORDS
    others: dict[str, dict[str, None]] = {}
    for group in GROUPS:
        for word in group:
            bucket = others.setdefault(word, {})
            for other in group:
                if other != word:
                    bucket[other] = None
    latin: dict[str, tuple[str, ...]] = {}
    cjk: dict[str, tuple[str, ...]] = {}
    for word, bucket in others.items():
        (cjk if _is_cjk_entry(word) else latin)[word] = tuple(bucket)
    _MAX_PHRASE_WORDS = max(len(w.split()) for w in latin)
    _LATIN_INDEX, _CJK_INDEX = latin, cjk


def _latin_candidates(term: str) -> list[str]:
    """The term, then crude de-inflections (plural, -ing, -ed) so "deployed" finds "deploy"."""
    cands = [term]
    if len(term) > 3:
        if term.endswith("ies"):
            cands.append(term[:-3] + "y")
        if term.endswith("es"):
            cands.append(term[:-2])
        if term.endswith("s"):
            cands.append(term[:-1])
        for suffix in ("ing", "ed"):
            if term.endswith(suffix):
                stem = term[: -len(suffix)]
                cands += [stem, stem + "e"]
                if len(stem) > 2 and stem[-1] == stem[-2]:
                    cands.append(stem[:-1])  # shipped -> ship, committed -> commit
    return cands


def expand(term: str) -> tuple[str, ...]:
    """The other members of every group holding `term` (case-insensitive); () if none.

    Latin terms also match after stripping a plural or -ing/-ed ending; CJK terms match
    exactly (use `cjk_entries_in` to find entries inside a longer run of characters).
    """
    if _LATIN_INDEX is None:
        _build()
    assert _LATIN_INDEX is not None and _CJK_INDEX is not None
    key = " ".join(term.lower().split())
    if not key:
        return ()
    if _is_cjk_entry(key):
        return _CJK_INDEX.get(key, ())
    for cand in _latin_candidates(key):
        hit = _LATIN_INDEX.get(cand)
        if hit is not None:
            # reached through an inflection ("cached"): the base form is a synonym too
            found = hit if cand == key else (cand, *hit)
            return tuple(w for w in found if w != key)
    return ()


def max_phrase_words() -> int:
    """Longest Latin entry in words, so callers know which n-grams of a query to look up."""
    if _LATIN_INDEX is None:
        _build()
    return _MAX_PHRASE_WORDS


def cjk_entries_in(run: str) -> list[str]:
    """CJK entries occurring inside `run`, longest match wins.

    An entry lying wholly inside a longer matched entry is skipped, so 预发布 (staging) does not
    also expand as 发布 (release). Order: by position in the run.
    """
    if _CJK_INDEX is None:
        _build()
    assert _CJK_INDEX is not None
    spans: list[tuple[int, int, str]] = []
    for word in _CJK_INDEX:
        start = run.find(word)
        while start != -1:
            spans.append((start, start + len(word), word))
            start = run.find(word, start + 1)
    # Sorted by start, longer first: a span lies inside a longer one exactly when some span
    # before it in this order ends at or after its end (one pass; a pairwise test was
    # quadratic, ~3 s on a run of 10k repeated entries).
    spans.sort(key=lambda sp: (sp[0], -sp[1]))
    out: dict[str, None] = {}
    reach = -1
    for _s, e, w in spans:
        if e > reach:
            out[w] = None
            reach = e
    return list(out)
