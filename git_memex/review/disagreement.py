"""Whether two texts disagree about one subject: the pure comparison behind the contradiction
finder (`review.contradictions`), with its word lists.

Each text becomes a sequence of tokens (`tokens`: Latin words lowercased with a light plural
stem; numbers, times and versions; CJK text segmented by the word lists below, else character by
character); filler words are left out. The two sequences are aligned (`difflib`), and each
stretch where they differ is one of:

* a **value**: numbers on both sides that differ (100 vs 500 requests, 30 vs 60 秒, Node 18 vs 20,
  02:00 vs 04:30, port 8080 vs 9090); equal quantities in other units are not (30 s vs 30000 ms);
* a **negation**: one side says not/never/不/没有/… where the other does not;
* an **alternative**: two members of one known set of choices (enable/disable, allow/forbid,
  always/never, tabs/spaces, npm/pnpm/yarn, squash/merge/rebase, true/false, weekdays,
  启用/禁用, 允许/禁止, 总是/从不, …);
* an **owner**: different names, in a text that has an owner word (owned by, on-call, 负责人, 维护…);
* a **qualifier**: a scope word that differs (free/paid accounts, development/production,
  unit/integration tests, iOS/Android, 开发环境/生产环境…): the two are about different cases,
  so the pair is compatible, whatever else differs;
* other words replaced on both sides: another subject, compatible;
* words on one side only: a detail, allowed up to `MAX_EXTRA`.

Two texts disagree (`compare`) when at least one value, negation, alternative or owner differs,
nothing vetoes it, and the words both say make up most of each (`MIN_SHARED`, `MIN_SHARE`). A
weekday or public/private that differs alongside something else scopes it instead ("9:30 on
Mondays" vs "16:00 on Fridays"). The word lists and thresholds were chosen on the tuning half
of a labelled set (tests/data/contradictions/); both halves' figures are in docs/search.md.

When the alignment finds nothing, two more ways compare texts written in other words: `loose`
(the subjects as sets of content words, at most a couple apart) and then `slots`, which sets each
text's asides aside ("see config/limits.yaml", "(ask @lena)", "ping them for changes", "详见…",
"有问题找…") and compares slots: quantities by dimension (durations to seconds, sizes to bytes,
rates per second: "200 req/min", "每秒 50 次", "QPS 200"; counts, percentages; Chinese numerals:
一小时, 半小时), a unit named by a config variable (`SEARCH_TIMEOUT_MS=12000`) or glued to a size
(`client_max_body_size 50m`), times of day (9:30, 3pm, 1 点, a cron line's `0 6 * * *`), versions
(a version is the same as its release: 20 vs 20.11.0), ports (port 8080, localhost:3000, :3000),
choices, whether it negates (a "…, not X" contrast is no negation), and owners (names after
owned by / run by / belongs to, before owns, @handles, 归…负责, 由…维护). Two texts disagree
there when their anchors (subject words, synonyms and a few English/Chinese pairs folded, Chinese
by its characters; qualifiers) cover `SLOT_SHARE` of the shorter text's, one side alone holds
other words (more on one side is a detail or an aside; on both, another subject), the clause of a
differing value holds at most `SLOT_NEAR_EXTRA` words the other lacks, and the same vetoes hold
(qualifiers, ordinals, a floor vs a ceiling, several supported; and a range holding the other's
value, "1 to 32" vs "defaults to 8", for every way).

Whichever way found a difference, four rules make two texts compatible (`compare_tokens`): one
speaks of the past and the other of now (`past`: "used to", "until last spring", "before 2024",
以前, 曾经, 去年); a word replaced on both sides beside a word both hold names another thing of one
kind (`replaced`: the build cache vs the artifact cache, 读超时 vs 连接超时); one names a narrower
case, a phrase between the subject and its verb or a Chinese modifier before the subject
(`narrower`: "Pull requests to the infra repo need…", 核心模块…); or they are two steps (先 vs …后)
or a negation about another day. A number of more than MAX_DIGITS digits is no value (compared
as a word), so no conversion overflows.

Cost: every regular expression here is one character class with a quantifier (no nesting, no
backtracking: linear in the text; tests/review/test_contradictions.py runs 64 KiB bodies). The
slot scans (asides, clauses, rates) are plain loops over the text or bounded windows of it, each
walked once (tests/review/test_slots.py); `past` is a few substring scans and bounded windows, and
`replaced`/`narrower` align at most MAX_TOKENS words, as the alignment does
(tests/review/test_contradiction_attacks.py). A text
of more than `MAX_TOKENS` tokens is not compared (a memory is one statement; the alignment is
quadratic in tokens, so it is bounded). Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any, TypeVar

from git_memex.core.record import record

MAX_TOKENS = 160
"""Texts with more tokens than this are not compared: not one statement, and the alignment is
quadratic in tokens (160² steps at most)."""
MAX_EXTRA = 2
"""Words one side has and the other does not, beyond which two texts are not one subject."""
OWNER_WINDOW = 6
"""Names that differ are an owner's only with an owner word at most this many words before them
(or right after: "Alice owns…"): "The on-call owner for the auth service is Maria"."""
MIN_SHARED = 1
MIN_SHARE = 0.6
"""The words both texts hold (in order, values set aside): at least MIN_SHARED, and at least
MIN_SHARE of each text's words."""

# ------------------------------------------------------------------ word lists
_FILL_EN_TEXT = """a an the is are was were be been being am by to of in on at for with from into onto and or but
it its it's this that these those there here we our us you your they their them i my me he she his her
has have had do does did will would shall should must can could may might need needs please also just
only all any every each per than then so as which who whom what very really most least about up via
let lets like such some other both either same own too instead"""
_FILL_EN = _FILL_EN_TEXT.split()
_NEG_EN_TEXT = """not never no don't doesn't dont doesnt isn't aren't wasn't weren't won't can't cannot couldn't
shouldn't mustn't didn't haven't hasn't hadn't wouldn't neither nor without frozen"""
_NEG_EN = _NEG_EN_TEXT.split()
_NO_QUANTITY = frozenset(("more", "fewer", "less", "later", "earlier", "sooner"))
"""`no` before these is a bound ("no more than 4"), not a negation."""
_ALT_EN: dict[str, tuple[tuple[str, ...], ...]] = {
    "switch": (("enable", "enabled", "enables", "enabling", "activated"),
               ("disable", "disabled", "disables", "disabling", "deactivated")),
    "permit": (("allow", "allowed", "allows", "permit", "permitted", "permits", "accepted"),
               ("forbid", "forbidden", "forbids", "prohibit", "prohibited", "prohibits", "disallow", "disallowed",
                "deny", "denied", "denies", "ban", "banned")),
    "frequency": (("always",), ("never",)),
    "bool": (("true",), ("false",)),
    "indent": (("tab", "tabs"), ("space", "spaces")),
    "package-manager": (("npm",), ("pnpm",), ("yarn",), ("bun",)),
    "merge-style": (("squash", "squashed", "squashing"), ("rebase", "rebased", "rebasing"), ("merge", "merged", "merging")),
    "day": (("monday",), ("tuesday",), ("wednesday",), ("thursday",), ("friday",), ("saturday",), ("sunday",)),
    "requirement": (("required", "mandatory"), ("optional",)),
    "order": (("before", "until"), ("after", "since")),
    "sync": (("sync", "synchronous", "synchronously"), ("async", "asynchronous", "asynchronously")),
    "case": (("camelcase",), ("snake_case", "snakecase"), ("kebab-case", "kebabcase"), ("pascalcase",)),
    "letter-case": (("lowercase",), ("uppercase",)),
    "protocol": (("http",), ("https",)),
    "database": (("mysql",), ("postgres", "postgresql"), ("sqlite",), ("mariadb",), ("mongodb",)),
    "test-runner": (("jest",), ("vitest",), ("mocha",)),
    "verdict": (("accept", "accepts"), ("reject", "rejects", "rejected")),
    "visibility": (("public",), ("private",)),
    "mode": (("automatic", "automatically", "auto"), ("manual", "manually")),
    "log-level": (("trace",), ("debug",), ("info",), ("warn", "warning"), ("error",)),
    "status": (("green", "passing"), ("red", "failing")),
}
SCOPING = frozenset({"day", "visibility", "order"})
"""Alternatives that scope a statement when something else differs too ("9:30 on Mondays" vs
"16:00 on Fridays" are two meetings), and disagree when they alone differ."""
_QUAL_EN: dict[str, str] = {w: k for k, ws in {
    "environment": "dev development staging stage prod production local locally sandbox preview qa ci uat",
    "audience": ("free paid premium pro trial basic enterprise business admin admins administrator administrators "
                 "guest guests anonymous regular internal external partner partners customer customers staff "
                 "employee employees contractor contractors"),
    "platform": "ios android web mobile desktop linux windows macos mac browser",
    "layer": "frontend backend client server",
    "test-kind": "unit integration e2e end-to-end smoke load acceptance",
    "data-role": "primary replica secondary master slave read write reader writer backup",
    "region": "eu europe asia emea apac",
    "era": "legacy old new",
    "week-part": "weekday weekdays weekend weekends holiday holidays",
}.items() for w in ws.split()}
_CUE_EN_TEXT = """owner owners own owns owned maintainer maintainers maintained maintains on-call oncall
responsible contact lead assignee assigned steward"""
_CUE_EN = frozenset(_CUE_EN_TEXT.split())
_UNITS: dict[str, tuple[str, float]] = {
    **{u: ("time", 0.001) for u in ("ms", "millisecond", "milliseconds", "毫秒")},
    **{u: ("time", 1.0) for u in ("s", "sec", "secs", "second", "seconds", "秒", "秒钟")},
    **{u: ("time", 60.0) for u in ("min", "mins", "minute", "minutes", "分钟")},
    **{u: ("time", 3600.0) for u in ("h", "hr", "hrs", "hour", "hours", "小时", "个小时")},
    **{u: ("time", 86400.0) for u in ("day", "days", "天")},
    **{u: ("time", 604800.0) for u in ("week", "weeks", "星期", "个星期")},
    **{u: ("time", 2592000.0) for u in ("month", "months", "个月")},
    **{u: ("time", 31536000.0) for u in ("year", "years")},
    **{u: ("size", 1e3) for u in ("kb", "kilobyte", "kilobytes")},
    **{u: ("size", 1e6) for u in ("mb", "megabyte", "megabytes")},
    **{u: ("size", 1e9) for u in ("gb", "gigabyte", "gigabytes")},
    **{u: ("size", 1e12) for u in ("tb", "terabyte", "terabytes")},
    **{u: ("size", 1024.0) for u in ("kib",)},
    **{u: ("size", 1024.0 ** 2) for u in ("mib",)},
    **{u: ("size", 1024.0 ** 3) for u in ("gib",)},
    **{u: ("clock", 1.0) for u in ("点", "点钟", "o'clock", "oclock")},
    **{u: ("count", 1.0) for u in ("个", "次", "条", "台", "位", "倍", "遍", "percent", "%")},
}
_NUMBER_WORDS_TEXT = "zero _ two three four five six seven eight nine ten eleven twelve"
_NUMBER_WORDS: dict[str, str] = {w: str(n) for n, w in enumerate(_NUMBER_WORDS_TEXT.split()) if w != "_"}
"""Numbers written as words ("five times"); "one" and "half" only before what they count (`_counted`)."""
_NOT_COUNTED = frozenset(("of", "or", "and", "another", "more", "less", "is", "are", "was", "can", "could", "will",
                          "would", "should", "must", "may", "might", "who", "that", "which", "to", "by", "in", "on",
                          "at", "for", "with", "from", "the", "way", "thing", "day"))


def _counted(text: str, end: int) -> bool:
    """Is the word ending at `end` followed by what it counts ("one approval", "half a minute", "one
    week"), not a pronoun's verb ("one of", "no one can")? Reads the next word only."""
    rest = text[end:end + 24].lstrip(" ")
    if rest[:2].lower() in ("a ", "an"):  # half a minute, half an hour
        rest = rest.split(" ", 1)[1] if " " in rest else ""
    j = 0
    while j < len(rest) and rest[j].isalpha():
        j += 1
    word = rest[:j].lower()
    return bool(word) and word not in _NOT_COUNTED and (not text[:end].lower().endswith("no one"))
_PORT_CUES = frozenset({"port", "ports", "端口", "端口号"})

# Chinese: segmented by these lists (longest match first), other Han characters one by one.
_FILL_ZH = ("的 了 是 在 都 也 就 会 要 和 与 及 或 把 被 让 给 对 到 由 着 过 吗 呢 吧 啊 先 再 还 很 最 请 需 应 该 "
            "应该 必须 需要 可以 能 能够 可 这个 那个 这 那 我们 你们 他们 大家 每 每个 统一 一律 所有 任何 都要 里 中 上 得 地 "
            "最多 至少 不超过 最少 以上 以下 之内 以内 时 时候 进行 就是 所以 因为 如果")
_NEG_ZH = "不 没 没有 别 勿 未 无需 无须 不用 不要 不必 不能 不可 不可以 不应 不应该 不会 不得 无法 非"
_NOT_NEG_ZH = ("不同 不过 不断 不少 不错 不久 不仅 不但 不管 别人 别的 区别 类别 级别 识别 分别 特别 告别 差别 性别 未来 "
               "未知 无论 非常 并非 是否 非法 除非")
_ALT_ZH: dict[str, tuple[tuple[str, ...], ...]] = {
    "switch": (("启用", "开启", "打开", "激活", "启动"), ("禁用", "关闭", "停用", "关掉")),
    "permit": (("允许", "准许", "容许"), ("禁止", "不准", "严禁", "不许", "不允许")),
    "frequency": (("总是", "始终", "一直", "每次都", "永远"), ("从不", "从来不", "永远不", "永不", "绝不", "从未")),
    "indent": (("制表符", "tab键"), ("空格",)),
    "day": (("周一", "星期一", "礼拜一"), ("周二", "星期二", "礼拜二"), ("周三", "星期三", "礼拜三"),
            ("周四", "星期四", "礼拜四"), ("周五", "星期五", "礼拜五"), ("周六", "星期六", "礼拜六"),
            ("周日", "周天", "星期日", "星期天", "礼拜日", "礼拜天")),
    "requirement": (("必填", "必需", "必选"), ("可选", "选填")),
    "order": (("之前", "以前"), ("之后", "以后")),
    "sync": (("同步",), ("异步",)),
    "mode": (("自动",), ("手动",)),
    "verdict": (("接受",), ("拒绝",)),
    "merge-style": (("压缩合并",), ("变基",)),
    "visibility": (("公开",), ("私有",)),
}
_QUAL_ZH: dict[str, str] = {w: k for k, ws in {
    "environment": "开发环境 测试环境 生产环境 预发环境 预发布 预发 线上 线下 本地 开发 生产 沙箱 灰度",
    "audience": ("免费 付费 免费版 付费版 企业版 专业版 基础版 免费用户 付费用户 企业用户 管理员 普通用户 普通 游客 访客 会员 "
                 "内部 外部 合作伙伴 员工 新人 老员工 超级管理员"),
    "platform": "安卓 苹果 小程序 网页 桌面 移动端 桌面端 网页端 web端 pc端 手机端",
    "layer": "前端 后端 服务端 客户端 服务器端",
    "test-kind": "单元测试 集成测试 端到端 端到端测试 冒烟测试 压力测试 压测 单测",
    "data-role": "主库 从库 读库 写库 备库 主节点 从节点 副本",
    "region": "国内 海外 境内 境外",
    "era": "旧版 新版 老版本 新版本 旧版本 老版",
    "week-part": "工作日 周末 节假日 假期 节假日期间",
}.items() for w in ws.split()}
_CUE_ZH_TEXT = "负责人 负责 维护 维护者 维护人 值班 值班人 对接人 联系人 归属 主管 owner"
_CUE_ZH = frozenset(_CUE_ZH_TEXT.split())
_TIME_ZH_TEXT = "上午 下午 早上 晚上 凌晨 中午 傍晚 夜里 半夜 清晨"
_TIME_ZH = frozenset(_TIME_ZH_TEXT.split())
_NUM_ZH = frozenset("零〇一二两三四五六七八九十百千万亿半")
_CONTENT_ZH = ("一些 一起 一定 一般 一样 之一 唯一 一直以来 十分 万一 一下 第一 统一 一致 同一 "
               "会话 会议 周会 例会 晨会 站会 过期 有效期 超时 流量 比例 服务 数据 数据库 迁移 发布 上线 部署 窗口 代码 格式化 缩进 "
               "依赖 日志 备份 端口 版本 集群 节点 上限 连接 连接池 缓存 验证码 限流 请求 接口 网关 构建 仓库 提交 合并 周报 灰度 "
               "支付 搜索 订单 用户 文件 上传 下载 导出 导入 重试 次数 队列 任务 定时 告警 监控 指标 测试 配置 环境 分支 镜像 "
               "证书 密码 令牌 权限 账号 机房 存储 内存 线程 进程 慢查询 生产者 消费者 推送 回滚 队列 限制 大小 阈值 分片 "
               "失效 有效 计费 通知 消息 报表 索引 钩子 域名 登录")
"""Words, not filler and not characters one by one: 会话 and 周会 hold 会, 数据库 is one subject."""


def _stem(w: str) -> str:
    """A light plural stem, the same on both sides: tuesdays → tuesday, requests → request."""
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "'s")):
        return w[:-1]
    return w


_LEX_EN: dict[str, tuple[str, str]] = {}
"""Latin word (stemmed) -> (kind, detail): fill, neg, alt (class:member), qual (class), cue, unit."""
_LEX_ZH: dict[str, tuple[str, str]] = {}
_ZH_MAX = 6


def _lexicons() -> None:
    if _LEX_EN:
        return
    en: dict[str, tuple[str, str]] = {}
    for w in _FILL_EN:
        en[_stem(w)] = ("fill", "")
    for w in _CUE_EN:
        en[_stem(w)] = ("cue", "")
    for w, k in _QUAL_EN.items():
        en[_stem(w)] = ("qual", k)
    for k, members in _ALT_EN.items():
        for m in members:
            for w in m:
                en[_stem(w)] = ("alt", f"{k}:{m[0]}")
    for w in _NEG_EN:
        en[_stem(w)] = ("neg", "")
    en["never"] = ("alt", "frequency:never")
    for u in _UNITS:
        if u.isascii():
            en.setdefault(u, ("unit", u))
            en.setdefault(_stem(u), ("unit", u))
    zh: dict[str, tuple[str, str]] = {}
    for w in _FILL_ZH.split():
        zh[w] = ("fill", "")
    for w in _CONTENT_ZH.split() + _NOT_NEG_ZH.split():
        zh[w] = ("word", "")
    for w in _NEG_ZH.split():
        zh[w] = ("neg", "")
    for w in _CUE_ZH:
        zh[w] = ("cue", "")
    for w, k in _QUAL_ZH.items():
        zh[w] = ("qual", k)
    for k, members in _ALT_ZH.items():
        for m in members:
            for w in m:
                zh[w] = ("alt", f"{k}:{m[0]}")
    for w in _TIME_ZH:
        zh[w] = ("num", w)
    for u in _UNITS:
        if not u.isascii():
            zh[u] = ("unit", u)
    _LEX_ZH.update(zh)
    _LEX_EN.update(en)


# One character class with a quantifier each: linear in the text, whatever it holds.
_LATIN_RE = r"[A-Za-z0-9_@$%][A-Za-z0-9_.:'@+%-]*"
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(f"{_LATIN_RE}|[{_HAN}]+")
_OTHER_DIGIT = re.compile(r"[^\D0-9]")
"""A decimal digit (Unicode Nd) other than 0-9: one character class."""
_EDGE = ".:'-+"


class Tok:
    """One token: `norm` is what is compared, `surface` as written (shown in the differing
    values), `kind` word | num | neg | alt | qual | cue | unit, `detail` (alt: class:member; qual:
    its class; unit: the unit), `name` (written like a name: capitalised, @handle, Han; an owner
    may be named so), `han`, and where it starts and ends in the normalised text `src` (`_join`
    shows that span). A plain class with slots: a store's finder makes hundreds of thousands."""

    __slots__ = ("norm", "surface", "kind", "detail", "name", "han", "at", "end", "src")

    def __init__(self, norm: str, surface: str, kind: str, detail: str = "", name: bool = False, han: bool = False,
                 at: int = 0, end: int = 0, src: str = "") -> None:
        self.norm, self.surface, self.kind, self.detail = norm, surface, kind, detail
        self.name, self.han, self.at, self.end, self.src = name, han, at, end, src

    def __repr__(self) -> str:
        return f"Tok({self.norm!r}, {self.kind})"


# ------------------------------------------------------------------ one analysis a text
# A finder compares each memory with up to 16 others, and each comparison reads what each text
# says (`says`, its asides, owners, content words…). Within `analysed_once()` (the store's finder
# and the check among shown memories enter it) each such per-text analysis runs once per token
# list and is shared by every pair that text is in; outside it, nothing is kept. A pure function
# of the tokens, so the verdicts are the same either way (tests/review/test_finder_cache.py).
_MEMO: ContextVar[dict[tuple[str, int], tuple[object, object]] | None] = ContextVar("disagreement_memo", default=None)
_F = TypeVar("_F", bound=Callable[..., Any])


@contextmanager
def analysed_once() -> Iterator[None]:
    """Within it, each per-text analysis (`_per_text`) of one token list runs once. The memo holds
    the token lists it saw (so an id is not reused while it lives) and is dropped on exit."""
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def _per_text(fn: _F) -> _F:
    """Memoise `fn(toks)` by the token list's identity within `analysed_once()`. Its result is
    shared by every caller: callers never mutate it."""
    name = fn.__qualname__

    @wraps(fn)
    def wrapper(toks: Any) -> Any:
        memo = _MEMO.get()
        if memo is None:
            return fn(toks)
        key = (name, id(toks))
        hit = memo.get(key)
        if hit is not None and hit[0] is toks:
            return hit[1]
        got = fn(toks)
        memo[key] = (toks, got)
        return got

    return wrapper  # type: ignore[return-value]


def _host_port(low: str) -> str:
    """The port of host:port as written (localhost:9000, 127.0.0.1:3000, db.internal:5432), else "".
    Not a time of day (10:15) nor a version."""
    head, colon, tail = low.rpartition(":")
    if not colon or not head or not tail.isdigit() or len(tail) < 2 or len(tail) > 5:
        return ""
    bare = head.replace(".", "")
    if bare.isdigit() and head.count(".") != 3:
        return ""
    return tail if head[0].isalpha() or head.count(".") == 3 else ""


MAX_DIGITS = 15
"""A number with more digits than this is no time, port, version or quantity (an id, a hash, a
pasted blob): it is compared as a word. Every numeric conversion here reads at most this many
digits (a float holds 15 exactly), so none overflows or meets Python's int-from-string limit."""


def _is_number(low: str) -> bool:
    """A number, time or version as written: digits with . , : between them, an optional
    leading v and a short unit glued on (10mb, 6am, 30s, 80%), at most MAX_DIGITS digits; not an
    identifier (0332_add_x)."""
    t = low[1:] if low[0] == "v" else low
    i = digits = 0
    while i < len(t) and (t[i].isdigit() or t[i] in ".,:"):
        digits += t[i].isdigit()
        i += 1
    rest = t[i:]
    return 0 < digits <= MAX_DIGITS and t[0].isdigit() and (
        rest == "" or rest == "%" or (len(rest) <= 3 and rest.isalpha()))


def tokens(text: str) -> list[Tok]:
    """The text's tokens, filler left out (see the module docstring). Linear in the text."""
    import unicodedata

    _lexicons()
    text = unicodedata.normalize("NFKC", text.replace("\u2019", "'"))
    if not text.isascii() and _OTHER_DIGIT.search(text):  # ٨٠٨٠, ८०८०: any decimal digit (Unicode Nd) as ASCII
        text = _OTHER_DIGIT.sub(lambda m: str(unicodedata.digit(m.group())), text)
    for two, one in _JOINED:  # "time out" is the word timeout (same length: positions stay)
        if two in text:
            text = text.replace(two, one)
    out: list[Tok] = []
    no: Tok | None = None  # a "no" waiting for its next word: a negation ("no cache"), or a bound ("no more than 4")
    for m in _TOKEN_RE.finditer(text):
        raw = m.group()
        if raw[0] >= "\u3400":
            _han(text, m.start(), m.end(), out)
            continue
        s = raw.strip(_EDGE)
        if not s:
            continue
        at = m.start() + len(raw) - len(raw.lstrip(_EDGE))
        end = at + len(s)
        low = s.lower()
        if no is not None:
            if low not in _NO_QUANTITY:
                out.append(no)
            no = None
        if low == "no":
            no = Tok("not", s, "neg", at=at, end=end, src=text)
            continue
        port = _host_port(low)
        if port:  # localhost:9000, 127.0.0.1:3000, :3001: a port, said with the word
            out.append(Tok("port", "port", "word", at=at, end=at, src=text))
            out.append(Tok(port, s, "num", at=at, end=end, src=text))
            continue
        if low.isdigit() and at and text[at - 1] == ":" and (at < 2 or text[at - 2] in " (\t"):
            out.append(Tok("port", "port", "word", at=at, end=at, src=text))
        if (low[0].isdigit() or (len(low) > 1 and low[0] == "v" and low[1].isdigit())) and _is_number(low) and not (
                at and text[at - 1] == "#"):  # issue #6077 names something, it is no quantity
            prev_num = out[-1] if out and out[-1].kind == "num" else None
            if (prev_num is not None and low.isdigit() and prev_num.norm.isdigit() and text[end:end + 6] == " * * *"
                    and not text[prev_num.end:at].strip()):  # cron "0 4 * * *": minute, hour
                out[-1] = Tok(f"{int(low)}:{int(prev_num.norm):02d}", text[prev_num.at:end + 6], "num",
                              at=prev_num.at, end=end + 6, src=text)
                continue
            if (prev_num is not None and prev_num.norm.isdigit() and prev_num.end + 1 == at and text[prev_num.end] == ","
                    and low[:3].isdigit() and not low[3:4].isdigit() and len(prev_num.norm) + len(low) <= MAX_DIGITS):
                out[-1] = Tok(prev_num.norm + low, text[prev_num.at:end], "num", at=prev_num.at, end=end, src=text)
                continue  # 2,000 ms, 1,048,576 bytes: digit groups of one number
            out.append(Tok(low, s, "num", at=at, end=end, src=text))
            continue
        if low in ("am", "pm") and out and out[-1].kind == "num" and out[-1].src:
            prev = out.pop()
            out.append(Tok(prev.norm + low, text[prev.at:end], "num", at=prev.at, end=end, src=text))
            continue
        if low in _NUMBER_WORDS or (low in ("one", "half") and _counted(text, end)):
            out.append(Tok(_NUMBER_WORDS.get(low, "1" if low == "one" else "0.5"), s, "num", at=at, end=end, src=text))
            continue
        if len(s) == 1 and s.isupper() and s != "I" and out and out[-1].kind in ("word", "qual", "cue") and (
                not text[out[-1].end:at].strip()):
            out.append(Tok("#" + low, s, "word", name=True, at=at, end=end, src=text))
            continue  # room A, plan B, zone C: a letter that names one of several
        norm = _stem(low)
        kind, detail = _LEX_EN.get(norm, _LEX_EN.get(low, ("word", "")))
        if kind == "fill":
            continue
        if kind == "alt":
            norm = detail
        if kind == "qual" and text[end:end + 8].lower().startswith(_NOT_QUAL_AFTER.get(low, "\0")):
            kind, detail = "word", ""  # a load balancer is no load test
        if kind == "qual" and text[end:end + 7].lower().startswith(_TEAM_AFTER):
            out.append(Tok(norm, s, "word", name=True, at=at, end=end, src=text))
            continue  # the dev team, the ops squad: a team's name, not a case
        out.append(Tok(norm, s, kind, detail, s[0].isupper() or s[0] == "@", at=at, end=end, src=text))
    if no is not None:
        out.append(no)
    return out


def _han(text: str, start: int, stop: int, out: list[Tok]) -> None:
    """Segment one run of Han characters: the longest word of the lists at each place (up to
    _ZH_MAX characters), else a run of numerals, else one character. Linear in the run."""
    i = start
    while i < stop:
        for size in range(min(_ZH_MAX, stop - i), 1, -1):
            w = text[i:i + size]
            hit = _LEX_ZH.get(w)
            if hit is not None:
                break
        else:
            w = text[i]
            hit = _LEX_ZH.get(w)
            if hit is None and w in _NUM_ZH:
                j = i + 1
                while j < stop and text[j] in _NUM_ZH:
                    j += 1
                w = text[i:j]
                hit = ("num", w) if j - i <= MAX_DIGITS else ("word", "")  # a run that long is no number
        kind, detail = hit if hit is not None else ("word", "")
        if kind == "qual" and text[i + len(w):i + len(w) + 1] in _TEAM_ZH:
            kind, detail = "word", ""  # 开发组, 运维团队: a team's name, not a case
        if kind != "fill":
            out.append(Tok(detail if kind == "alt" else w, w, kind, detail, True, True, at=i, end=i + len(w), src=text))
        i += len(w)


_DIGITS = frozenset("0123456789")
_TEAM_AFTER = (" team", " squad", " crew", " group", " guild")
_TEAM_ZH = frozenset("组团部")
_NOT_QUAL_AFTER = {"load": " balanc"}
"""A qualifier word that names something else before these: load balancer."""
_JOINED = ((" time out", " timeout "), (" timed out", " timedout "), (" times out", " timesout "))


def plain_word(piece: str) -> str | None:
    """A whitespace-separated piece of a text (lowercased) as a plain word, stemmed as `tokens`
    stems it; None when it is no plain word (a number, a negation, a choice, a unit, filler,
    CJK). What two texts that disagree differ in little."""
    _lexicons()
    if not piece.isascii() or not _DIGITS.isdisjoint(piece):  # CJK, numbers (as sets, in C)
        return None
    w = piece.strip(".,;:!?()[]{}\"'`")
    if not w:
        return None
    norm = _stem(w)
    kind = _LEX_EN.get(norm, _LEX_EN.get(w, ("word", "")))[0]
    return None if kind in ("neg", "alt", "fill", "unit") else norm


def cross_words(text: str, words: frozenset[str]) -> frozenset[str]:
    """What a text's plain words (`plain_word`) and qualifiers stand for in the other language or
    another spelling: a synonym's target (es → elasticsearch), a Chinese pair's characters (search →
    搜, 索), a qualifier's canonical value ("q:prod" for prod, production, 生产环境, 线上). The
    store's finder probes these too, so "prod replicas: 5" meets "生产环境的副本数是 3". Dictionary
    look-ups per word, and a substring test per Chinese qualifier: linear in the text."""
    out: set[str] = set()
    for w in words:
        x = w
        for _ in range(2):
            x = _SYNONYMS.get(x, "")
            if not x:
                break
            if x.isascii():
                out.add(x)
            else:
                out.update(x)
                break
        canon = _CANON_QUAL.get(w)
        if canon:
            out.add("q:" + canon)
    if not text.isascii():
        out.update("q:" + c for k, c in _CANON_QUAL.items() if not k.isascii() and k in text)
    return frozenset(out)


def subject(toks: Sequence[Tok]) -> frozenset[str]:
    """The words a text is about, its values, negations and choices set aside (what the finder
    joins on)."""
    return frozenset(t.norm for t in toks if t.kind in ("word", "qual", "cue"))


# ------------------------------------------------------------------ comparing two texts
@record(frozen=True)
class Difference:
    kind: str  # number | time | version | port | owner | negation | alternative
    a: str  # the differing words as the first text writes them
    b: str


@record(frozen=True)
class Verdict:
    differences: list[Difference]
    shared: int  # the words both hold, in order

    @property
    def kind(self) -> str:
        return self.differences[0].kind


def _join(toks: Sequence[Tok]) -> str:
    """The words as the text writes them: the span from the first to the last (filler included)."""
    toks = [t for t in toks if t.src]
    if not toks:
        return ""
    first, last = toks[0], toks[-1]
    if first.src is last.src and first.at <= last.end:
        return " ".join(first.src[first.at:last.end].split())
    return " ".join(t.surface for t in toks)


def _number(t: Tok) -> float | None:
    s = t.norm.lstrip("v").replace(",", "")
    if s and all(c in _NUM_ZH for c in s):
        return _zh_number(s)  # 三, 十五, 半
    if sum(c.isdigit() for c in s) > MAX_DIGITS:
        return None
    try:
        return float(s)
    except (ValueError, OverflowError):
        return None


def _quantities(chunk: Sequence[Tok], after: Tok | None) -> list[tuple[str, str]]:
    """(number, unit) of each number in a stretch, the unit being the token after it (or after
    the stretch)."""
    out = []
    for i, t in enumerate(chunk):
        if t.kind != "num":
            continue
        nxt = chunk[i + 1] if i + 1 < len(chunk) else after
        out.append((t.norm, nxt.detail if nxt is not None and nxt.kind == "unit" else ""))
    return out


def _same_quantity(qa: list[tuple[str, str]], qb: list[tuple[str, str]]) -> bool:
    """One quantity written two ways: 30 s and 30000 ms, 三次 and 3 次, 半小时 and 30 分钟, 12am and
    00:00, v20 and 20, a version and a more precise one (3.11 and 3.11.4)."""
    if qa == qb:
        return True
    if len(qa) != 1 or len(qb) != 1:
        return False
    (na, ua), (nb, ub) = qa[0], qb[0]
    if _is_clock(na) and _is_clock(nb):
        ca, cb = _clock(Tok(na, na, "num")), _clock(Tok(nb, nb, "num"))
        return ca is not None and ca == cb
    if ua == ub and na.count(".") + nb.count(".") and (na[:1] == "v" or nb[:1] == "v" or "." in na or "." in nb) and (
            not ua and _version_same(na, nb)):
        return True  # Node 20.0 and 20, Python 3.11 and 3.11.4
    da, db = _UNITS.get(ua, ("", 1.0) if ua == ub else None), _UNITS.get(ub, ("", 1.0) if ua == ub else None)
    xa, xb = _number(Tok(na, na, "num")), _number(Tok(nb, nb, "num"))
    if da is None or db is None or xa is None or xb is None or da[0] != db[0]:
        return False
    return abs(xa * da[1] - xb * db[1]) <= 1e-9 * max(abs(xa * da[1]), 1.0)


def _is_clock(norm: str) -> bool:
    return ":" in norm or (norm.endswith(("am", "pm")) and norm[:1].isdigit())


def _value_kind(chunk: Sequence[Tok], before: Tok | None, after: Tok | None) -> str:
    near = [t for t in (before, after) if t is not None] + list(chunk)
    if any(t.norm in _PORT_CUES for t in near):
        return "port"
    for t in chunk:
        if t.kind != "num":
            continue
        if ":" in t.norm or t.norm.endswith(("am", "pm")) or t.norm in _TIME_ZH or (
                after is not None and after.detail in ("点", "点钟", "o'clock", "oclock")):
            return "time"
        if t.norm.startswith("v") or (t.norm.count(".") and (after is None or after.kind != "unit")):
            return "version"
        if before is not None and before.name and before.kind == "word" and (
                after is None or after.kind not in ("word", "unit")):
            return "version"  # Node 18, SDK 34, Java 21: a name, then its number
        if before is not None and before.norm in ("version", "版本"):
            return "version"
    return "number"


def _shown(kind: str, chunk: list[Tok], before: Tok | None, after: Tok | None) -> str:
    """A differing value with the word that says what it is: "Node 18", "port 8080", "100 requests"."""
    if kind in ("version", "port") and before is not None and before.kind in ("word", "cue"):
        return _join([before, *chunk])
    if after is not None and after.kind in ("word", "unit") and (not chunk or chunk[-1].kind != "unit"):
        return _join([*chunk, after])
    if before is not None and before.kind in ("word", "cue") and (not chunk or chunk[-1].kind != "unit"):
        return _join([before, *chunk])
    return _join(chunk)


class _Veto(Exception):
    pass


def _stretch(a: Sequence[Tok], b: Sequence[Tok], ctx: tuple[Tok | None, Tok | None, Tok | None, Tok | None],
             tails: tuple[Sequence[Tok], Sequence[Tok]], found: list[Difference]) -> tuple[int, int]:
    """Classify one stretch where the texts differ; append what disagrees to `found`. Returns the
    words only one side has (a's, b's); raises _Veto when the stretch says another case or subject.
    `ctx`: the token before and after the stretch on each side; `tails`: the words after it (shown
    with a negation: "不使用", "never deploy")."""
    before_a, after_a, before_b, after_b = ctx
    tail_a, tail_b = tails
    qa = sorted(t.norm for t in a if t.kind == "qual")
    qb = sorted(t.norm for t in b if t.kind == "qual")
    if qa != qb:
        raise _Veto("qualifier")
    rest_a = [t for t in a if t.kind != "qual"]
    rest_b = [t for t in b if t.kind != "qual"]
    # alternatives: one class, two members
    alts_a = {t.detail.split(":")[0]: t for t in rest_a if t.kind == "alt"}
    alts_b = {t.detail.split(":")[0]: t for t in rest_b if t.kind == "alt"}
    used: set[int] = set()
    for cls in alts_a.keys() & alts_b.keys():
        ta, tb = alts_a[cls], alts_b[cls]
        used |= {id(ta), id(tb)}
        if ta.norm != tb.norm:
            found.append(Difference("alternative", ta.surface, tb.surface))
    # negation: never on one side only counts as a not
    def negs(side: list[Tok], other: dict[str, Tok]) -> list[Tok]:
        return [t for t in side if t.kind == "neg" or (t.kind == "alt" and t.norm == "frequency:never"
                                                        and "frequency" not in other)]
    na, nb = negs(rest_a, alts_b), negs(rest_b, alts_a)
    used |= {id(t) for t in na + nb}
    if len(na) % 2 != len(nb) % 2:
        found.append(Difference("negation", _join([*rest_a, *tail_a]), _join([*rest_b, *tail_b])))
    # values
    nums_a = [t for t in rest_a if t.kind in ("num", "unit")]
    nums_b = [t for t in rest_b if t.kind in ("num", "unit")]
    used |= {id(t) for t in nums_a + nums_b}
    if any(t.kind == "num" for t in nums_a) and any(t.kind == "num" for t in nums_b):
        qua, qub = _quantities(rest_a, after_a), _quantities(rest_b, after_b)
        if len(qua) > 1 and len(qub) > 1 and not qua[0][1] and not qub[0][1] and qua[0][0] != qub[0][0]:
            raise _Veto("identifier")  # "service 0 … 30 s" vs "service 1 … 31 s": the first number names the subject
        if not _same_quantity(qua, qub):
            kind = _value_kind(rest_a, before_a, after_a)
            found.append(Difference(kind, _shown(kind, nums_a, before_a, after_a), _shown(kind, nums_b, before_b, after_b)))
    elif nums_a and nums_b:  # units alone: 15 minutes vs 15 hours
        ua = [t.detail for t in nums_a]
        ub = [t.detail for t in nums_b]
        if ua != ub and all(_UNITS.get(u, ("", 0))[0] == _UNITS.get(ub[0], ("?", 0))[0] for u in ua + ub):
            found.append(Difference("number", _join(nums_a), _join(nums_b)))
    words_a = [t for t in rest_a if id(t) not in used]
    words_b = [t for t in rest_b if id(t) not in used]
    # owner: names replaced (`compare_tokens` wants an owner word in the text, and one such stretch)
    if words_a and words_b and all(t.name and t.kind == "word" for t in words_a + words_b):
        found.append(Difference("owner", _join(words_a), _join(words_b)))
        return 0, 0
    if words_a and words_b:
        raise _Veto("subject")
    return len(words_a), len(words_b)


def _tail(toks: Sequence[Tok], at: int) -> list[Tok]:
    """The word after `at`, or up to three Han characters (a Chinese verb is two or three)."""
    out: list[Tok] = []
    for t in toks[at:at + 3]:
        if out and not (t.han and len(t.norm) == 1 and out[-1].han and len(out[-1].norm) == 1):
            break
        out.append(t)
        if not t.han or len(t.norm) > 1:
            break
    return out


_SENTENCE_ENDS = (". ", "; ", "! ", "? ", "。", "；", "！", "？", "\n")


def _one_sentence(x: Tok, y: Tok) -> bool:
    """Are the two tokens in one sentence of their text (no sentence end between them)?"""
    if not x.src or x.src is not y.src:
        return True
    lo, hi = (x.end, y.at) if x.at <= y.at else (y.end, x.at)
    between = x.src[lo:hi] + " "
    return not any(e in between for e in _SENTENCE_ENDS)


def _cannot(a: Sequence[Tok], b: Sequence[Tok]) -> bool:
    """A quick no, before the alignment: a qualifier on one side only vetoes; each word one side
    has and the other lacks (not written like a name) is either a detail, at most MAX_EXTRA of
    them, or replaces another word, a veto; and such words on both sides are taken as another
    subject without aligning."""
    wa = {t.norm: t for t in a if t.kind in ("word", "qual", "cue")}
    wb = {t.norm: t for t in b if t.kind in ("word", "qual", "cue")}
    only_a = [wa[k] for k in wa.keys() - wb.keys()]
    only_b = [wb[k] for k in wb.keys() - wa.keys()]
    if any(t.kind == "qual" for t in only_a + only_b):
        return True
    plain_a = sum(1 for t in only_a if not (t.name and t.kind == "word"))
    plain_b = sum(1 for t in only_b if not (t.name and t.kind == "word"))
    # words on both sides that the other lacks: another subject, almost always (a detail added
    # on each side in two places is the rare exception, and then two texts say more than one thing)
    return plain_a + plain_b > MAX_EXTRA or (plain_a > 0 and plain_b > 0)


def compare_tokens(a: Sequence[Tok], b: Sequence[Tok]) -> Verdict | None:
    """`compare` on texts already split by `tokens`. The rules that make two texts compatible
    whichever way found a difference (`_other_case`) run only on a pair found to differ."""
    v = _compare_tokens(a, b)
    if v is not None and _other_case(a, b, v):
        return None
    if v is not None and any(d.kind == "owner" and not (d.a + d.b).isascii() for d in v.differences):
        oa, _ka = _owners(a)
        ob, _kb = _owners(b)
        if len(oa - ob) == 1 and len(ob - oa) == 1:  # 运维组 vs 平台组, as written, not the characters that differ
            whole = Difference("owner", next(iter(oa - ob)), next(iter(ob - oa)))
            v = Verdict([whole if d.kind == "owner" else d for d in v.differences], v.shared)
    return v


def _compare_tokens(a: Sequence[Tok], b: Sequence[Tok]) -> Verdict | None:
    if not a or not b or len(a) > MAX_TOKENS or len(b) > MAX_TOKENS:
        return None
    a, b = _said(a), _said(b)  # a choice passed over is not said: "ClickHouse over MongoDB"
    if not a or not b:
        return None
    v = _aligned(a, b)
    if v is not None:
        if vetoed(says(a), says(b), v.differences) or (any(d.kind == "number" for d in v.differences) and _in_range(a, b)):
            return None
        return v
    v = loose(a, b)
    if v is not None and any(d.kind == "number" for d in v.differences) and _in_range(a, b):
        return None  # "can be 1 to 32" vs "defaults to 8": a range and a value inside it
    if v is not None and all(d.kind == "version" and _version_same(d.a.split()[-1], d.b.split()[-1])
                             for d in v.differences):
        return None  # Node 20 vs 20.11.0: one version and its release
    v = v or slots(a, b)
    return v


@_per_text
def _said(toks: Sequence[Tok]) -> Sequence[Tok]:
    """The tokens less a choice passed over ("ClickHouse over MongoDB": MongoDB is not said); the
    same list when there is none."""
    kept = [t for t in toks if not (t.kind == "alt" and _passed_over(t))]
    return toks if len(kept) == len(toks) else kept


@_per_text
def _whole(toks: Sequence[Tok]) -> str:
    """`_join` of the whole text."""
    return _join(list(toks))


def _other_case(a: Sequence[Tok], b: Sequence[Tok], v: Verdict) -> bool:
    """Rules that make two texts compatible whichever way found them different: another thing of
    one kind (`replaced`), a narrower case (`narrower`), two steps of a sequence, a negation about
    another day."""
    if past(a) != past(b):
        return True  # "used to listen on 8000" vs "listens on 8080": history, not a disagreement
    owners = frozenset(_key(w.lower()) for d in v.differences if d.kind == "owner" for w in (*d.a.split(), *d.b.split()))
    if replaced(a, b, owners):
        return True  # "the build cache … 7 days" vs "the artifact cache … 30 days": two caches
    if not owners and narrower(a, b):
        return True  # "Pull requests need 2 approvals" vs "Pull requests to the infra repo need 3": an exception
    if _steps(a) ^ _steps(b) == {"first", "later"}:
        return True  # "先放 5% 流量" vs "观察 30 分钟后放到 50%": two steps
    return any(d.kind == "alternative" and _alt_class(d.a) == "day" for d in v.differences) and _other_day_negated(a, b)


def narrower(a: Sequence[Tok], b: Sequence[Tok]) -> bool:
    """Does one text name a narrower case of what the other says, its words on that side only: a
    phrase after the subject ("Pull requests to the infra repo", "Merge requests from the bot"), or
    words before it (核心模块测试覆盖率, 导出接口, "Audit logs")? A rule and its exception, not a
    disagreement. The same alignment as `replaced`."""
    from difflib import SequenceMatcher

    for x, y in ((a, b), (b, a)):
        cx, cy = _content(x), _content(y)
        kx, ky = [k for k, _t in cx], [k for k, _t in cy]
        ops = SequenceMatcher(None, kx, ky, autojunk=False).get_opcodes()
        src_x = x[0].src if x else ""
        for n, (op, _i1, _i2, j1, j2) in enumerate(ops):
            if op != "insert":
                continue
            new = [c for k in ky[j1:j2] for c in _fresh(k, kx, src_x, frozenset())]
            if not new or (not all(c.isascii() for c in new) and len(new) < 2):
                continue
            last = cy[j2 - 1][1]
            if n == 0 and len(ops) > 1 and ops[1][0] == "equal" and (
                    len(new) >= 4 or any(w in f" {src_x.lower()} " for w in _EVERY)) and not all(
                    c.isascii() for c in new) and cy[j2][1].at - last.end <= 2 and last.src[last.end:cy[j2][1].at].strip() in ("", "的"):
                return True  # words right before the subject both name: 核心模块测试覆盖率, 导出接口 vs 每个接口
            if n == 1 and ops[0][0] == "equal" and _after_preposition(cy[j1][1]) and (
                    last.src[last.end:last.end + 12].lower().split() or [""])[0] in _SUBJECT_VERBS:
                return True  # a phrase between the subject and its verb: "to the infra repo need", "from the bot are"
    return False


_SUBJECT_VERBS = frozenset(("is", "are", "need", "needs", "must", "should", "get", "gets", "has", "have", "require",
                            "requires", "will", "can", "may", "use", "uses", "run", "runs", "expire", "expires"))
_EVERY = ("每个", "所有", "全部", "一律", " every ", " all ", " any ")
_FIRST_STEP = (" first ", " initially ", " to start ", "先", "首先", "第一步")
_LATER_STEP = (" then ", " afterwards ", " after that ", " later ", "然后", "之后", "分钟后", "小时后", "天后", "随后")


@_per_text
def _steps(toks: Sequence[Tok]) -> set[str]:
    """Which steps of a sequence a text names: "first" (先, first, initially) and/or "later" (然后,
    then, 30 分钟后)."""
    src = toks[0].src.lower() if toks and toks[0].src else ""
    padded = f" {src.replace(',', ' ').replace('.', ' ')} "
    out = set()
    if any(m in padded for m in _FIRST_STEP):
        out.add("first")
    if any(m in padded for m in _LATER_STEP):
        out.add("later")
    return out


def _other_day_negated(a: Sequence[Tok], b: Sequence[Tok]) -> bool:
    """Do the texts name other days, one of them negating ("Don't run migrations on Fridays" vs
    "We run migrations on Tuesdays")? Then both hold."""
    sa, sb = says(a), says(b)
    da, db = sa.alts.get("day", frozenset()), sb.alts.get("day", frozenset())
    return bool(da and db and not da & db) and (_negations(sa, sb) % 2) != (_negations(sb, sa) % 2)


@_per_text
def _content(toks: Sequence[Tok]) -> list[tuple[str, Tok]]:
    """The text's content words outside its asides, as `replaced` aligns them: `_key`s (synonyms
    folded; a run of single Han characters one word), less verbs that say how (a capitalised one
    inside a sentence is a name: Go), port words, team words and words that say a change or when."""
    out: list[tuple[str, Tok]] = []
    run: list[Tok] = []

    def flush() -> None:
        if run:
            w = "".join(t.norm for t in run)
            if w not in GENERIC_VERBS and _SLOT_IGNORE.isdisjoint(w):
                out.append((w, Tok(w, w, "word", "", True, True, at=run[0].at, end=run[-1].end, src=run[0].src)))
            run.clear()

    for t in _core(toks):
        if t.han and len(t.norm) == 1 and t.kind == "word":
            if run and run[-1].end != t.at:
                flush()
            run.append(t)
            continue
        flush()
        if t.kind not in ("word", "qual") or t.norm.startswith("#") or t.norm in _OWN_ZH_OPEN:
            continue
        low = t.norm
        head = t.src[:t.at].rstrip() if t.src else ""
        if (low in GENERIC_VERBS or t.surface.lower() in GENERIC_VERBS) and not (t.surface[:1].isupper() and head and head[-1] not in ".!?:;"):
            continue
        k = _key(low)
        if ((k in _SLOT_IGNORE or (t.han and not _SLOT_IGNORE.isdisjoint(k))) and k != "build") or k == "own" or (
                low in _ORDINALS or low in _PORT_CUES or low in _TEAM_WORDS):
            continue
        out.append((k, t))
    flush()
    return out


_TEAM_WORDS = frozenset(("team", "teams", "squad", "crew", "group", "guild", "组", "团队", "小组"))


def replaced(a: Sequence[Tok], b: Sequence[Tok], owners: frozenset[str] = frozenset()) -> bool:
    """Is a word of one text replaced by another word in the other, beside a word both hold ("the
    build cache" vs "the artifact cache", "connect timeout" vs "idle timeout", "in the Berlin office"
    vs "in the London office", 读超时 vs 连接超时)? Then they are two things of one kind, whatever
    values differ. Synonyms are one word (`_key`); a word the other text holds elsewhere is moved,
    not replaced; `owners` (the owner names that differ) are the difference itself. A difflib
    alignment of two short word lists (MAX_TOKENS at most)."""
    from difflib import SequenceMatcher

    ca, cb = _content(a), _content(b)
    ka, kb = [k for k, _t in ca], [k for k, _t in cb]
    src_a, src_b = (a[0].src if a else ""), (b[0].src if b else "")
    ops = SequenceMatcher(None, ka, kb, autojunk=False).get_opcodes()
    for n, (op, i1, i2, j1, j2) in enumerate(ops):
        if op != "replace":
            continue
        before = n + 1 < len(ops) and ops[n + 1][0] == "equal"  # build cache, 读超时, the Berlin office
        after = n > 0 and ops[n - 1][0] == "equal" and _after_preposition(ca[i1][1]) and _after_preposition(cb[j1][1])
        if not (before or after):
            continue  # "for avatars" vs "for attachments" after a word both hold; not "is generated" vs "cron"
        fa = [c for k in ka[i1:i2] for c in _fresh(k, kb, src_b, owners)]
        fb = [c for k in kb[j1:j2] for c in _fresh(k, ka, src_a, owners)]
        if fa and fb and (len(fa) + len(fb) >= 3 or all(c.isascii() for c in fa + fb)):
            return True  # (Chinese: three characters at least, not a verb or a particle each side)
    return False


_PREPOSITIONS = ("for", "in", "on", "of", "at", "to", "from", "with", "by")


def _after_preposition(t: Tok) -> bool:
    head = t.src[max(0, t.at - 12):t.at].lower().split() if t.src else []
    while head and head[-1] in ("the", "a", "an", "all", "our", "its"):
        head.pop()
    return bool(head) and head[-1] in _PREPOSITIONS


def _fresh(k: str, other: list[str], other_src: str, owners: frozenset[str]) -> list[str]:
    """A word the other text does not hold, as a list of what is new in it: [the word], or for a
    Chinese word its characters the other text lacks (not a verb that says how, not an owner's
    name); [] when the other holds it (in a longer word or a shorter one too: 合并 and 合并请求)."""
    if k.isascii():
        return [] if k in other or k in owners else [k]
    if any(k in o or (not o.isascii() and o in k) for o in other):
        return []
    return [c for c in k if c not in other_src and c not in GENERIC_VERBS and not any(c in o for o in owners)]



_PAST_EN = ("used to ", "previously", "formerly", "originally", "in the past", "back then", "back in ", "at first",
            "until recently", "until last ", "until early ", "until late ", "until mid", "until we ", "until the move",
            "until the migration", "until yesterday", "before we ", "prior to ")
_PAST_ZH = ("曾经", "原来", "原先", "过去", "去年", "早期", "以往", "此前", "当初", "最初")
_PAST_CLAUSE_ZH = ("以前", "之前")
"""...at the start of a clause or after a year (2024 年以前), else "before an event" (发布之前)."""
_YEAR_BEFORE = frozenset(("before", "until", "till"))
_PAST_VERBS = frozenset(("was", "were", "had", "used", "ran", "did", "lived", "took", "kept"))
_NOW = ("now", "currently", "today", "these days", "nowadays", "现在", "目前", "如今", "现已", "当前")
_CHANGED_ZH = ("升级", "迁", "改成", "改为", "换成", "调到", "调成", "切到", "切换")


@_per_text
def past(toks: Sequence[Tok]) -> bool:
    """Does the text speak of the past, not of now ("used to", "previously", "until last spring",
    "before 2024", "In 2021 … had", 以前/之前 opening a clause, 曾经, 原来, 去年)? One text in the past
    and the other in the present are history and its sequel, never a disagreement (docs/search.md).
    A text that also says now (now, currently, 现在, 目前) or a change (去年升级到…) states the
    present. A few substring scans and one walk over the words: linear in the text."""
    src = toks[0].src if toks and toks[0].src else ""
    if not src:
        return False
    low = f" {src.lower()} "
    if any(f" {w}" in low or (not w.isascii() and w in low) for w in _NOW):
        return False
    if any(w in low for w in _PAST_EN) or (not src.isascii() and any(w in src for w in _PAST_ZH)):
        return not (not src.isascii() and "去年" in src and any(w in src for w in _CHANGED_ZH))
    if not src.isascii():
        for w in _PAST_CLAUSE_ZH:
            k = src.find(w)
            while k >= 0:
                head = src[max(0, k - 8):k].rstrip()
                if not head and k > 8:
                    head = " "
                if not head or head[-1] in "，。；：,;:年" or head[-1].isdigit():
                    return True
                k = src.find(w, k + 1)
    words = low.split()
    said_past = any(w.strip(".,;:") in _PAST_VERBS for w in words)
    for i, w in enumerate(words[:-1]):
        year = words[i + 1].strip(".,;:")
        if len(year) == 4 and year.isdigit() and year[:2] in ("19", "20") and (
                w in _YEAR_BEFORE or (w == "to" and i and words[i - 1] == "prior") or (
                w in ("in", "during") and said_past)):
            return True  # before 2024, until 2023, in 2021 … had
    return False


def _in_range(a: Sequence[Tok], b: Sequence[Tok]) -> bool:
    """Does one text give a range (`_ranged`) that holds every value the other gives in its dimension?"""
    for x, y in ((a, b), (b, a)):
        if not _ranged(x):
            continue
        sx, sy = says(x), says(y)
        for dim in {d for d, *_ in sx.nums} & {d for d, *_ in sy.nums}:
            vx = [v for d, v, *_ in sx.nums if d == dim]
            vy = [v for d, v, *_ in sy.nums if d == dim]
            if len(vx) >= 2 and all(min(vx) <= v <= max(vx) for v in vy):
                return True
    return False


def _aligned(a: Sequence[Tok], b: Sequence[Tok]) -> Verdict | None:
    """The word-by-word comparison (the module docstring)."""
    from difflib import SequenceMatcher

    na, nb = [t.norm for t in a], [t.norm for t in b]
    if na == nb or _cannot(a, b):
        return None
    found: list[Difference] = []
    extra_a = extra_b = shared = owners = 0
    try:
        for op, i1, i2, j1, j2 in SequenceMatcher(None, na, nb, autojunk=False).get_opcodes():
            if op == "equal":
                shared += sum(1 for t in a[i1:i2] if t.kind in ("word", "qual", "cue", "alt"))
                continue
            ctx = (a[i1 - 1] if i1 else None, a[i2] if i2 < len(a) else None,
                   b[j1 - 1] if j1 else None, b[j2] if j2 < len(b) else None)
            tails = (_tail(a, i2), _tail(b, j2))
            before = len(found)
            ea, eb = _stretch(a[i1:i2], b[j1:j2], ctx, tails, found)
            extra_a += ea
            extra_b += eb
            if len(found) > before and found[-1].kind == "owner":
                near = a[max(0, i1 - OWNER_WINDOW):i2 + 2]
                if not any(t.kind == "cue" and _one_sentence(t, a[i1]) for t in near):
                    return None  # names that differ with no owner word near them: other people, other things
                owners += 1
    except _Veto:
        return None
    if not found or extra_a + extra_b > MAX_EXTRA or shared < MIN_SHARED or owners > 1:
        return None
    if shared < MIN_SHARE * (shared + extra_a) or shared < MIN_SHARE * (shared + extra_b):
        return None
    scoping = [d for d in found if d.kind == "alternative" and _alt_class(d.a) in SCOPING]
    if scoping and len(found) > len(scoping):
        return None
    return Verdict(found, shared)


def _alt_class(surface: str) -> str:
    _lexicons()
    low = surface.lower()
    hit = _LEX_EN.get(_stem(low)) or _LEX_ZH.get(surface) or ("", "")
    return hit[1].split(":")[0]


def compare(a: str, b: str) -> Verdict | None:
    """Whether two texts disagree about one subject (see the module docstring): the differences,
    or None when they are compatible, about other things, or too long to be one statement."""
    return compare_tokens(tokens(a), tokens(b))


# ------------------------------------------------------------------ paraphrases
# The alignment above finds a value that differs in one sentence written twice. Two people write
# one fact in different words ("100 requests a minute" vs "throttled at 500 requests per minute"),
# so when the alignment says nothing, `loose` compares what each text says as sets: its subject
# (content words, folded by a few synonyms and stemmed to their first five letters; filler, and
# verbs that say how rather than what, left out; the differing values set aside), its qualifiers
# (one canonical value per class: dev/development/local/开发环境 are one), and its values (numbers
# by their unit's dimension, the members of each set of alternatives, the parity of its
# negations, an owner's name). `vetoed` then applies the same "other case" rules to both ways.
_GENERIC_TEXT = """use used uses using run runs ran running get gets got make makes made let lets set sets
go goes put take takes keep keeps kept live lives stay stays is be can may might should must need needs needed
want wants done do did does happen happens happened start starts started begin begins kick kicks off on
listen listens bind binds serve serves work works handle come comes mean means say says ship ships shipped
up at most least max maximum min minimum limit limited limits cap caps capped configured configure
default defaults value still every each per even if also instance stack require requires pin pins pinned
target targets 使 用 使用 跑 运行 上 为 监听 开始 执行"""
GENERIC_VERBS = frozenset(_GENERIC_TEXT.split())
"""Words that say how, not what: left out of a text's subject (and of the words only one side has)."""
_SYNONYMS = {"req": "request", "reqs": "request", "db": "database", "repo": "repository", "config": "configuration",
             "env": "environment", "auth": "authentication", "pr": "pull-request", "prs": "pull-request",
             "valid": "expire", "expiry": "expire", "ttl": "expire", "lifetime": "expire", "retried": "retry",
             "retries": "retry", "attempt": "retry", "attempts": "retry", "throttled": "limit",
             "throttle": "limit", "indented": "indent", "indentation": "indent", "long": "length",
             "postgresql": "postgres", "k8s": "kubernetes", "owner": "own", "owned": "own", "owns": "own",
             "maintained": "own", "maintains": "own", "maintainer": "own", "handled": "own", "on-call": "own",
             "oncall": "own", "responsible": "own", "svc": "service", "jdk": "java", "es": "elasticsearch",
             "capped": "limit", "cap": "limit", "limited": "limit", "belongs": "own", "belong": "own", "nvmrc": "node", "caching": "cache", "cached": "cache",
             "timedout": "timeout", "timesout": "timeout", "timeouts": "timeout", "限流": "limit", "上限": "limit", "限制": "limit",
             "push": "推送", "pii": "data", "url": "link", "urls": "link", "mr": "合并请求", "mrs": "合并请求",
             "approve": "审批", "approves": "审批", "approval": "审批", "approvals": "审批", "hook": "钩子", "hooks": "钩子", "billing": "计费", "payment": "支付",
             "payments": "支付", "order": "订单", "orders": "订单", "search": "搜索", "user": "用户", "users": "用户",
             "account": "账号", "accounts": "账号", "login": "登录", "notification": "通知", "notifications": "通知",
             "message": "消息", "messages": "消息", "file": "文件", "files": "文件", "image": "图片", "images": "图片",
             "video": "视频", "report": "报表", "reports": "报表", "export": "导出", "exports": "导出", "import": "导入",
             "permission": "权限", "permissions": "权限", "index": "索引", "indexes": "索引",
             "configuration": "配置", "monitoring": "监控", "metric": "指标", "metrics": "指标", "download": "下载",
             "token": "令牌", "tokens": "令牌", "certificate": "证书", "certificates": "证书", "domain": "域名",
             "log": "日志", "logs": "日志", "失效": "expire", "过期": "expire", "有效期": "expire", "有效": "expire", "concurrency": "并发", "lb": "balancer", "2fa": "factor", "pushes": "推送", "rollback": "回滚", "alert": "告警", "queue": "队列", "consumer": "消费者",
             "producer": "生产者", "job": "任务", "task": "任务",
             "session": "会话", "deployment": "deploy", "deployments": "deploy", "timeout": "超时", "cache": "缓存", "backup": "备份", "deploy": "部署",
             "database": "数据库", "retry": "重试", "password": "密码", "service": "服务", "upload": "上传",
             "traffic": "流量", "cluster": "集群", "version": "版本", "branch": "分支", "request": "请求", "codeowners": "own"}
_IDENT_TEXT = """tenant tenants phase sprint shard worker room ticket issue step stage milestone cluster team
floor iteration chapter section story tier building row column slot partition region zone rack batch wave
round"""
_IDENT_WORDS = frozenset(_IDENT_TEXT.split())
"""A number right after one of these names a thing ("tenant 4", "phase 2"): part of the subject, no value."""
_MULTI_TEXT = "support supports supported supporting accept accepts accepted open opened compatible tested"
_MULTI = frozenset(_MULTI_TEXT.split())
_IMPERATIVE = frozenset(("open", "accept"))
"""Of `_MULTI`, the verbs that opening a text are an instruction, not "one of several"."""
"""A version or port that differs beside one of these is one of several ("Python 3.11 is supported")."""
_CANON_QUAL = {**{w: "dev" for w in ("dev", "development", "local", "locally", "开发环境", "开发", "本地", "线下")},
               **{w: "prod" for w in ("prod", "production", "生产环境", "生产", "线上")},
               **{w: "staging" for w in ("staging", "stage", "预发环境", "预发布", "预发")},
               **{w: "test" for w in ("qa", "uat", "测试环境")},
               **{w: "e2e" for w in ("e2e", "end-to-end", "端到端", "端到端测试")},
               **{w: "replica" for w in ("replica", "副本")}}
_ORDINALS_TEXT = "first second third fourth fifth last next previous initial final 第一 第二 第三 最后"
_ORDINALS = frozenset(_ORDINALS_TEXT.split())
_LOWER_BOUND = ("at least", "minimum", "no less than", "no fewer than", "or more", "more than", "至少", "最少",
                "不少于", "以上")
_UPPER_BOUND = ("at most", "maximum", "max ", "up to", "no more than", "or less", "or fewer", "capped", "最多",
                "不超过", "以内", "之内", "上限")
_SWITCHED_ON = (" is on", " are on", " on by default", "turned on", "switched on")
_SWITCHED_OFF = (" is off", " are off", " off by default", "turned off", "switched off")
_NEVER = frozenset(("frequency:never", "frequency:从不"))
_NEGATIVE = frozenset(("permit:forbid", "permit:禁止", "switch:disable", "switch:禁用"))
"""A choice whose class the other text does not name at all counts as a negation there:
"周二可以部署" vs "周二禁止部署"."""
_TOOLS = ("package-manager", "merge-style", "indent", "database", "test-runner")
"""Choices a "not" before is about ("pnpm, not npm"): the negated one is not said."""
LOOSE_MAX_EXTRA = 2.0
"""Subject words (a Han character counts half) one side has and the other lacks, beyond which
two differently written texts are taken as about other things."""
STRONG_DIMENSIONS = frozenset(("time", "size", "clock"))
"""Values in these units are strong enough to say one subject where each side has a word the other lacks."""


def _key(w: str) -> str:
    """A content word as `loose` compares it: synonyms folded, a light stem, then its first five
    letters (a stem that meets indent/indented/indentation, deploy/deploys/deployment)."""
    w = _SYNONYMS.get(w, w)
    if not w.isascii():
        return w
    if w.endswith("s") and w[:-1] in _SYNONYMS:
        return _key(w[:-1])  # caches: cache, not "cach"
    if w.endswith(("shes", "ches", "xes", "sses")):
        w = w[:-2]
    w = _stem(w)
    for suf in ("ing", "ed"):
        if len(w) > len(suf) + 3 and w.endswith(suf):
            w = w[:-len(suf)]
            if len(w) > 3 and w[-1] == w[-2]:
                w = w[:-1]
            break
    w = _SYNONYMS.get(w, w)
    return w if len(w) <= 5 or "-" in w else w[:5]


@record(frozen=True)
class Says:
    """What one text says, as `loose` compares it."""
    subject: dict[str, float]  # content key -> weight (a Han character 0.5)
    quals: dict[str, frozenset[str]]  # class -> canonical values
    ordinals: frozenset[str]
    alts: dict[str, frozenset[str]]  # class -> members said (not negated)
    alt_surface: dict[str, str]
    negs: int
    nums: list[tuple[str, float, str, str]]  # (dimension, value in base units or minutes of the day, as written, kind)
    cue: bool
    bound: str  # "lower", "upper", "" (both or none)
    multi: bool


_SIZE_SUFFIX = frozenset(("k", "m", "g"))
_SIZE_NAMES = ("size", "body", "upload", "mem", "heap", "buffer")
"""A number with k/m/g glued on after a name holding one of these is a size (nginx's 50m)."""
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def _zh_number(s: str) -> float | None:
    """A Chinese numeral up to the thousands (一, 十五, 三十, 两百, 半) as a number, else None
    (and None for more than MAX_DIGITS characters)."""
    if s == "半":
        return 0.5
    if len(s) > MAX_DIGITS:
        return None
    total = cur = 0
    for c in s:
        if c in _ZH_DIGITS:
            cur = _ZH_DIGITS[c]
        elif c in "十百千":
            total += (cur or 1) * {"十": 10, "百": 100, "千": 1000}[c]
            cur = 0
        else:
            return None
    return float(total + cur)


_RATE_MARKS = (" per ", "/", " a ", " an ", "每")
_RATE_BEFORE = (("每秒", 1.0), ("每分钟", 60.0), ("每小时", 3600.0), ("每天", 86400.0), ("qps", 1.0), ("rps", 1.0),
                ("rpm", 60.0))
_RATE_WINDOW = 40


def _rate(t: Tok) -> float | None:
    """The period in seconds when the number is a rate: "10 per minute", "200 req/min", "500
    requests a minute" (a time unit after per, /, a, 每 in its clause), "每秒 50 次", "QPS 200"
    (a mark just before). Reads at most _RATE_WINDOW characters each side."""
    src = t.src
    if not src:
        return None
    after = src[t.end:t.end + _RATE_WINDOW].lower()
    for i, ch in enumerate(after):
        if ch in ",;()。；，":
            after = after[:i]
            break
    for mark in _RATE_MARKS:
        k = after.find(mark)
        if k < 0:
            continue
        rest = after[k + len(mark):].lstrip()
        j = 0
        while j < len(rest) and (rest[j].isalpha()):
            j += 1
        word = rest[:j]
        unit = _UNITS.get(word) or _UNITS.get(_stem(word)) or (_UNITS.get(word[:2]) if word[:1] >= "\u3400" else None)
        if unit is not None and unit[0] == "time":
            return unit[1]
    before = src[max(0, t.at - 12):t.at].lower()
    for mark, period in _RATE_BEFORE:
        if mark in before or (mark.isascii() and after.lstrip().startswith(mark)):
            return period
    return None


def _clock(t: Tok) -> float | None:
    """02:00, 2am, 4:30pm as minutes of the day."""
    s = t.norm
    pm = s.endswith("pm")
    s = s[:-2] if s.endswith(("am", "pm")) else s
    h, _, m = s.partition(":")
    if len(h) > 2 or len(m) > 2 or not h.isdigit() or not (m.isdigit() or not m):
        return None  # no time of day: 24:00 at most, two digits each
    hour = int(h)
    if hour == 12 and s != t.norm:
        hour = 0  # 12am is midnight, 12pm noon (+720 below)
    return float(hour * 60 + (int(m) if m else 0) + (720 if pm else 0))


@_per_text
def says(toks: Sequence[Tok]) -> Says:
    subject: dict[str, float] = {}
    quals: dict[str, set[str]] = {}
    ordinals: set[str] = set()
    alts: dict[str, set[str]] = {}
    surf: dict[str, str] = {}
    negs = 0
    nums: list[tuple[str, float, str, str]] = []
    cue = multi = False
    n = len(toks)

    def add_alt(detail: str, surface: str) -> None:
        cls = detail.split(":")[0]
        alts.setdefault(cls, set()).add(detail)
        surf.setdefault(cls, surface)

    for i, t in enumerate(toks):
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < n else None
        if t.kind == "neg":
            if nxt is not None and nxt.kind == "alt" and nxt.norm.startswith(_TOOLS):
                continue  # "pnpm, not npm": the not is about the choice, which is not said
            negs += 1
        elif t.kind == "alt":
            if prev is not None and prev.kind == "neg" and t.norm.startswith(_TOOLS):
                continue
            add_alt(t.norm, t.surface)
            multi = multi or t.surface.lower() in _MULTI
        elif t.kind == "num":
            if prev is not None and prev.kind == "word" and prev.norm in _IDENT_WORDS and (
                    nxt is None or nxt.kind not in ("unit", "num")) and not (
                    t.src and t.src[prev.end:t.at].strip()):  # "cluster 3", not "cluster has 3 nodes"
                subject[f"{prev.norm}#{t.norm}"] = 1.0
                continue
            unit, norm = (nxt.detail if nxt is not None and nxt.kind == "unit" else ""), t.norm
            if nxt is not None and nxt.han and nxt.norm == "周" and t.han:
                unit = "星期"  # 一周, 两周
            glued = norm.lstrip("0123456789.,:")
            if glued and glued in _UNITS and glued not in ("am", "pm"):
                unit, norm = glued, norm[:-len(glued)]
            elif glued in _SIZE_SUFFIX and prev is not None and any(w in prev.norm for w in _SIZE_NAMES):
                unit, norm = glued + "b", norm[:-len(glued)]  # client_max_body_size 50m
            config = prev is not None and prev.kind == "word" and "_" in prev.norm
            if not unit and prev is not None and config:
                last = prev.surface.lower().rsplit("_", 1)[1]
                unit = last if last in _UNITS else ""  # SEARCH_TIMEOUT_MS=12000: the name says the unit
            if norm and all(c in _NUM_ZH for c in norm):
                zh = _zh_number(norm)
                norm = str(zh) if zh is not None else norm
            dim, factor = _UNITS.get(unit, ("", 1.0))
            kind = _value_kind([t], prev, nxt)
            if kind == "version" and (config or (prev is not None and prev.han)) and "." not in norm:
                kind = "number"  # POOL_SIZE=40, 并发 200: a setting's value, not a version of it
            if kind == "time":
                c = _clock(t)
                nums.append(("clock", c if c is not None else -1.0, t.surface, "time"))
                continue
            try:
                x = float(norm.lstrip("v").replace(",", "")) if kind != "version" or norm.count(".") < 2 else None
            except ValueError:
                x = None
            period = _rate(t) if x is not None and kind in ("number", "version") and dim in ("", "time", "count") else None
            if x is None:  # 17.0.2: a version, compared as written
                nums.append(("n", float(hash(norm.lstrip("v"))), t.surface, "version"))
            elif period:  # 100 requests per minute, 30 attempts/min, 每秒 50 次, QPS 200: a rate, per second
                nums.append(("rate", x / period, t.surface, "number"))
            elif dim == "time" and t.src and t.src[max(0, t.at - 7):t.at].lower().rstrip().endswith(("every", "每")):
                nums.append(("period", x * factor, t.surface, "number"))  # every 10 minutes, 每 10 分钟: how often
            else:
                nums.append((dim or "n", x * factor, t.surface, "number" if dim else kind))
        elif t.kind == "unit" and t.src and _UNITS.get(t.detail, ("", 0.0))[0] == "time" and not any(
                x.kind == "num" for x in toks[max(0, i - 2):i]) and (
                " " + t.src[max(0, t.at - 5):t.at].lower()).rstrip().endswith((" a", " an", " one")):
            nums.append(("time", _UNITS[t.detail][1], t.surface, "number"))  # "a week", "within an hour"
        elif t.kind == "qual":
            klass = _QUAL_EN.get(t.norm) or _QUAL_ZH.get(t.norm) or t.detail
            quals.setdefault(klass, set()).add(_CANON_QUAL.get(t.norm, t.norm))
        elif t.kind in ("word", "cue"):
            low = t.norm
            if t.kind == "cue" or _SYNONYMS.get(low) == "own":
                cue = True
            if low in _ORDINALS:
                ordinals.add(low)
                continue
            if low in _MULTI and not (i == 0 and low in _IMPERATIVE):
                multi = True  # (not "Open localhost:9000 …": a verb that opens it)
            if not t.han:
                low = t.surface.lower()  # `_key` stems it (its own way: pushes → push)
            parts = low.replace("_", "-").split("-") if ("-" in low or "_" in low) and not t.han else [low]
            for part in parts:
                _lexicons()
                if len(parts) > 1 and part in _NUMBER_WORDS:
                    continue  # two-space: the number says how many, not what
                hit = _LEX_EN.get(_stem(part)) if len(parts) > 1 else None
                if hit is not None and hit[0] == "alt":
                    add_alt(hit[1], part)
                    continue
                if hit is not None and hit[0] == "qual" and "-" in low:
                    subject[_key(part)] = 1.0  # deploy-preview, staging-deploy: part of a name, not a case
                    continue
                if part in GENERIC_VERBS or part in _PORT_CUES or part in ("version", "版本") or hit is not None:
                    continue
                k = _key(part)
                if not _DIGITS.isdisjoint(k):
                    k = "#" + k  # p50, jira-1234: a name with digits names a thing
                if k != "own" and k.isascii():
                    subject[k] = 1.0
                elif k != "own":  # Chinese by its characters: 数据库 and 数据 share 数据 however segmented
                    for ch in k:
                        subject[ch] = 0.5
    text = (toks[0].src if toks and toks[0].src else "").lower()
    if "mode" not in alts and (" by hand" in text or "人工" in text):
        add_alt("mode:manual", "by hand")  # "someone runs it by hand", 人工执行
    if "switch" not in alts and any(w in text for w in _SWITCHED_ON):
        add_alt("switch:enable", "on")
    elif "switch" not in alts and any(w in text for w in _SWITCHED_OFF):
        add_alt("switch:disable", "off")
    for cls in ("merge-style",):  # "merge" the verb beside the style: "squash when merging"
        if len(alts.get(cls, ())) > 1:
            alts[cls].discard("merge-style:merge")
    bound = _bound(text)
    return Says(subject, {k: frozenset(v) for k, v in quals.items()}, frozenset(ordinals), {k: frozenset(v) for k, v in alts.items()}, surf, negs,
                nums, cue, bound, multi)


def _bound(text: str) -> str:
    """"lower" (at least, 至少), "upper" (at most, 上限) or "" (both or none) in a lowercased text;
    an English bound starts a word ("for more" is no "or more")."""
    padded = f" {text}"
    lower = any((f" {b}" if b.isascii() else b) in padded for b in _LOWER_BOUND)
    upper = any((f" {b}" if b.isascii() else b) in padded for b in _UPPER_BOUND)
    return "lower" if lower and not upper else "upper" if upper and not lower else ""


_NOUN_ALTS = frozenset(("log-level", "database", "test-runner", "protocol", "package-manager", "case", "letter-case"))
"""Choices that name a thing ("debug logs", "Postgres"): one the other text does not name at all is
a word only it holds, like a subject word ("audit logs … 1 year" vs "debug logs … 3 days")."""


def _named_alone(s: Says, other: Says) -> dict[str, float]:
    return {f"alt:{cls}": 1.0 for cls in s.alts if cls in _NOUN_ALTS and cls not in other.alts}


def _negations(s: Says, other: Says) -> int:
    """Negations, with never and a negative choice the other text does not name counted in."""
    n = s.negs
    for cls, members in s.alts.items():
        if cls not in other.alts and members & (_NEVER | _NEGATIVE):
            n += 1
    return n


def vetoed(sa: Says, sb: Says, found: Sequence[Difference]) -> bool:
    """Rules that make two texts compatible however they were compared: a qualifier or an
    ordinal (first/second retry) tells them apart; a number names the thing (tenant 4 vs tenant
    6); a version or port differs where several are supported or open; one text states a floor
    and the other a ceiling."""
    if sa.quals != sb.quals or sa.ordinals != sb.ordinals:
        return True
    ids_a = {k for k in sa.subject if "#" in k}
    ids_b = {k for k in sb.subject if "#" in k}
    if ids_a != ids_b:
        return True
    values = [d for d in found if d.kind in ("number", "version", "port", "time")]
    if values and (sa.multi or sb.multi) and any(d.kind in ("version", "port") for d in values):
        return True
    return bool(values and sa.bound and sb.bound and sa.bound != sb.bound)


def loose(a: Sequence[Tok], b: Sequence[Tok]) -> Verdict | None:
    """Whether two texts written in different words disagree (see above): None unless their
    subjects meet (shared content words; at most LOOSE_MAX_EXTRA on one side only, or one each
    beside a value in known units, a version or a port, or an owner), and a value, a choice, a
    negation or an owner differs."""
    if not a or not b or len(a) > MAX_TOKENS or len(b) > MAX_TOKENS:
        return None
    sa, sb = says(a), says(b)
    shared = sum(w for k, w in sa.subject.items() if k in sb.subject)
    only_a = {k: w for k, w in sa.subject.items() if k not in sb.subject} | _named_alone(sa, sb)
    only_b = {k: w for k, w in sb.subject.items() if k not in sa.subject} | _named_alone(sb, sa)
    ea, eb = sum(only_a.values()), sum(only_b.values())
    if ea > LOOSE_MAX_EXTRA or eb > LOOSE_MAX_EXTRA:
        return None
    if ea and eb and any(k.startswith("alt:") for k in (*only_a, *only_b)):
        return None  # a named thing replaced ("debug logs" vs "audit logs"): another subject
    found: list[Difference] = []
    strong = tool = False
    for cls in sorted(sa.alts.keys() & sb.alts.keys()):
        ma, mb = sa.alts[cls], sb.alts[cls]
        if cls == "frequency":
            continue  # always/never: counted as a negation
        if ma - mb and mb - ma:
            found.append(Difference("alternative", sa.alt_surface[cls], sb.alt_surface[cls]))
            tool = tool or cls in _TOOLS
    for cls in sa.alts.keys() & sb.alts.keys():  # a choice both name is part of what they are about
        if sa.alts[cls] == sb.alts[cls] and cls not in ("frequency", "permit", "switch", "day", "order"):
            shared += 1.0
    unit = False
    for d in sorted({d for d, *_ in sa.nums} & {d for d, *_ in sb.nums}):
        va = [x for dd, x, _w, _k in sa.nums if dd == d]
        vb = [x for dd, x, _w, _k in sb.nums if dd == d]
        if not (set(va) - set(vb)) or not (set(vb) - set(va)):
            continue  # one side's values all said by the other too: a detail
        wa, ka = next((w, k) for dd, x, w, k in sa.nums if dd == d and x not in vb)
        wb, kb = next((w, k) for dd, x, w, k in sb.nums if dd == d and x not in va)
        found.append(Difference(ka if ka == kb or kb == "number" else kb, wa, wb))
        strong = strong or d in STRONG_DIMENSIONS
        unit = unit or d != "n" or ka in ("version", "port") or kb in ("version", "port")
    if unit and len(found) > 1 and any(f.kind != "alternative" for f in found[:-1]) and any(
            d == "n" for d, *_ in sa.nums):
        return None  # "service 0 … 30 s" vs "service 1 … 31 s": the bare number names the subject
    scoping = [f for f in found if f.kind == "alternative" and _alt_class(f.a) in SCOPING | {"order"}]
    if scoping and len(found) > len(scoping):
        return None  # "before March" vs "after March": two periods
    if (_negations(sa, sb) % 2) != (_negations(sb, sa) % 2) and not found:
        if ea + eb > 1 or (shared < 2 and not (shared >= 1 and ea + eb == 0)):
            return None
        found.append(Difference("negation", _whole(a), _whole(b)))
    one = not any(e in (_whole(a) + _whole(b)) for e in _SENTENCE_ENDS)
    if not found and one and sa.cue and sb.cue and 0 < ea <= 1 and 0 < eb <= 1 and shared >= 1:
        found.append(Difference("owner", " ".join(only_a), " ".join(only_b)))
        return None if vetoed(sa, sb, found) else Verdict(found, int(shared))
    if not found or vetoed(sa, sb, found):
        return None
    if ea and eb and not (strong and shared >= 2 and len(only_a) <= 1 and len(only_b) <= 1):
        return None  # words replaced on both sides: another subject, unless a value in units says otherwise
    if shared < 1 and not (tool and (not sa.subject or not sb.subject)):
        return None  # "Use pnpm, not npm": a choice with no subject words is about the choice
    if shared < 2 and (ea and eb or not (unit or tool or ea + eb == 0)):
        return None
    return Verdict(found, max(int(shared), 1))


# ------------------------------------------------------------------ slots
# When neither the alignment nor `loose` finds a disagreement, `slots` compares what the two texts
# say as slots, tolerant of asides and of words one side adds: each text's asides are set aside
# ("see config/limits.yaml", "(ask @lena)", "ping them for changes", "详见…", "有问题找…"); its
# anchors are its subject words (`says`) and its qualifiers; its slots are its values by
# dimension (durations, sizes, counts and percentages, times of day, versions, ports), its
# choices, whether it negates, and its owner. Two texts disagree when their anchors cover most of
# the shorter one (`SLOT_SHARE`), a slot both fill differs, and nothing tells them apart (a
# qualifier, an ordinal, a floor against a ceiling, a range holding the other's value).
SLOT_SHARE = 0.6
"""The anchors both texts hold: at least this share of the shorter text's."""
SLOT_MIN_SHARED = 1.0
"""...and at least this much (a word 1, a Han character 0.5)."""
_VALUE_KINDS = frozenset(("number", "time", "port", "version"))
SLOT_NEAR_EXTRA = 1.5
"""Anchors one text alone holds in the clause of the differing slot, beyond which the slot is
another thing's ("the API's health check … port 8081")."""
SLOT_ONE_SIDE = 0.5
SLOT_REPLACED = 1.0
"""...and in the whole text (its asides left out), at most this much on the side with less, where
both texts are Chinese (else SLOT_ONE_SIDE)."""
"""Where each text has anchors the other lacks, one of them may have this much (a Chinese verb
of one character: 做, 跑); more on both sides is another subject."""
_OWN_WORDS = frozenset(("负", "责", "维", "护", "人", "者", "归", "own", "owner", "team"))
_ASIDE_EN_TEXT = "see ping ask contact cc bring check refer talk"
_ASIDE_EN = frozenset(_ASIDE_EN_TEXT.split())
_ASIDE_ZH = ("详见", "见", "参见", "参考", "有问题", "问题找", "改之前", "抄送")
_PASSED_OVER = (" over", "instead of", "rather than", "而不是", "而非", "代替")
_WHY_MARKS = (" so that ", " so ", " because ", " to keep ", " in order to ", " but ", " since the ", "因为", "以便", "为了",
              "以免", "但是", "但")
_CLAUSE_ENDS = frozenset(",;，；、—–()（）!?！？。\n")
_OWN_ZH_OPEN = ("归", "由")
_OWN_BY = ("run", "managed", "operated", "maintained", "owned", "handled")
_OWN_ZH_SPAN = 10
"""How far before 负责/维护 a 归/由 opens the owner's name."""
_OWN_ZH_CLOSE = frozenset(("负责", "维护", "管理", "负责人", "管"))
_ONCALL = frozenset(("on-call", "oncall", "值班", "值班人"))
_SLOT_IGNORE_TEXT = """upgra bump migra move moved switc chang now today curre yet last month week year ago recen
since again 已 经 目 前 现 在 升 级 迁 改 调 成 了 到 统 律 换
built build compi open reach visit 设 大 小 conta inclu janua febru march april may june july augus septe octob novem decem
one qps rps over under time anymo longe every size someo hand night 有 后 #q1 #q2 #q3 #q4 #h1 #h2"""
_SLOT_IGNORE = frozenset(_SLOT_IGNORE_TEXT.split())
"""Words that say a value changed or when (upgraded, bumped to, now, last month, 已经, 升级, 改成):
not what the text is about (`_key`s: five letters at most)."""
_WEAK_QUALS = frozenset(("customer", "customers", "server"))
_EVERY_PART = frozenset(("night", "morning", "evening", "afternoon"))
_PERIOD_WORDS = {"hourly": 3600.0, "daily": 86400.0, "nightly": 86400.0, "weekly": 604800.0}
_RANGE_EN = frozenset(("between", "from", "through", "to", "until", "到", "至"))


def _asides(src: str) -> list[tuple[int, int]]:
    """The spans of `src` that are asides: a clause (between , ; ( ) — and sentence ends) that
    starts with a pointer elsewhere (see, ping, ask, 详见, 有问题找…), and what parentheses
    hold. One pass over the text."""
    spans: list[tuple[int, int]] = []
    start = 0
    depth_at = -1
    n = len(src)
    for i in range(n + 1):
        ch = src[i] if i < n else "\n"
        if ch in "(（":
            depth_at = i
        elif ch in ")）" and depth_at >= 0:
            spans.append((depth_at, i + 1))
            depth_at = -1
        if ch in _CLAUSE_ENDS or (ch == "." and (i + 1 >= n or src[i + 1] in " \n")):
            clause = src[start:i].strip(" \t:-*")
            first = clause.split(None, 1)[0].lower() if clause else ""
            if first in _ASIDE_EN or clause.startswith(_ASIDE_ZH):
                spans.append((start, i))
            else:  # a reason or purpose inside the clause: "… so history stays intact", "…，因为…"
                low = src[start:i].lower()
                at = min((k for k in (f" {low}".find(m) for m in _WHY_MARKS) if k >= 0), default=-1)
                if at >= 0:
                    spans.append((start + at, i))
            start = i + 1
    return spans


@_per_text
def _core_text(toks: Sequence[Tok]) -> str:
    """The text, lowercased, its asides blanked out."""
    src = toks[0].src if toks and toks[0].src else ""
    if not src:
        return ""
    out: list[str] = []
    at = 0
    for lo, hi in sorted(_asides(src)):
        if lo >= at:
            out.append(src[at:lo])
            at = hi
    out.append(src[at:])
    return " ".join(out).lower()


@_per_text
def _core(toks: Sequence[Tok]) -> list[Tok]:
    """The tokens outside the text's asides."""
    if not toks or not toks[0].src:
        return list(toks)
    spans = sorted(_asides(toks[0].src))
    out: list[Tok] = []
    k = 0
    for t in toks:  # tokens and spans both in text order: one walk
        while k < len(spans) and spans[k][1] <= t.at:
            k += 1
        if not (k < len(spans) and spans[k][0] <= t.at < spans[k][1]):
            out.append(t)
    return out


@_per_text
def _owners(toks: Sequence[Tok]) -> tuple[frozenset[str], frozenset[str]]:
    """(who a text names as owner, the kinds of owner word it uses: own | oncall). Names: @handles
    and words written like names (not opening a sentence) at most OWNER_WINDOW words after an
    owner word ("owned by the Discovery team", "run by SRE") or two before it ("SRE owns"), in
    its sentence; in Chinese, what 归…负责 / 由…维护 enclose."""
    kinds: set[str] = set()
    cues: list[int] = []
    for i, t in enumerate(toks):
        low = t.norm
        by = bool(t.src) and any(t.src[:t.at].lower().rstrip().endswith((f"{w} by", f"{w} by the")) for w in _OWN_BY)
        if t.kind == "cue" or _SYNONYMS.get(low) == "own" or _SYNONYMS.get(t.surface.lower()) == "own" or (
                low in _OWN_ZH_CLOSE) or low == "codeowners" or by:
            kinds.add("oncall" if low in _ONCALL else "own")
            cues.append(i - 1 if by else i)  # "run by SRE": the name right after
    if not kinds:
        return frozenset(), frozenset()
    names: set[str] = set()
    for i in cues:
        t = toks[i] if i >= 0 else toks[0]
        rest = t.src[t.end:t.end + _OWN_ZH_SPAN + 2].lstrip() if t.src and i >= 0 else ""
        if rest[:1] in ("是", "为", ":", "："):
            rest = rest[1:].lstrip()
            j = 0
            while j < len(rest) and rest[j] >= "\u3400":
                j += 1
            if j >= 2:
                names.add(rest[:j])  # owner 是基础平台组, 负责人为数据组
    for i, t in enumerate(toks):
        if t.han and t.norm in _OWN_ZH_CLOSE and t.src:
            lo = max(0, t.at - _OWN_ZH_SPAN)
            opened = max(t.src.rfind(c, lo, t.at) for c in _OWN_ZH_OPEN)
            name = t.src[opened + 1:t.at].strip() if opened >= 0 else ""
            if name and "\n" not in name:
                names.add(name)  # 归支付组负责, 由基础架构组维护
            continue
        if t.kind != "word" or t.han or not t.src:
            continue
        after = any(0 < i - c <= OWNER_WINDOW and _one_sentence(toks[max(c, 0)], t) for c in cues)
        before = any(0 < c - i <= 2 and _one_sentence(toks[c], t) for c in cues)  # "SRE owns", "Alice owns"
        if not (after or before):
            continue
        if i and toks[i - 1].kind == "neg":
            continue  # "owned by Lifecycle, not Growth"
        if t.surface[:1] == "@":
            names.add(t.norm)
        elif t.name and _SYNONYMS.get(t.norm) != "own" and len(t.surface) > 1:
            head = t.src[:t.at].rstrip()
            if before or (head and head[-1] not in ".!?。"):  # a capital opening a sentence is no name
                names.add(_key(t.norm))
    return frozenset(names), frozenset(kinds)


@_per_text
def _multi(toks: Sequence[Tok]) -> bool:
    """Does the text say one of several is supported or open (`_MULTI`)? Not a verb that opens it
    ("Open localhost:9000 to…")."""
    return any(t.surface.lower() in _MULTI for t in toks[1:]) or bool(
        toks and toks[0].surface.lower() in _MULTI and toks[0].surface.lower() not in _IMPERATIVE)


def _whole_word(t: Tok) -> bool:
    """A Chinese word of the lists (not one character, not a word that says a change: 统一)."""
    return t.han and t.kind == "word" and len(t.norm) > 1 and _SLOT_IGNORE.isdisjoint(t.norm)


def _near_extra(toks: Sequence[Tok], mine: dict[str, float], other: dict[str, float], other_src: str = "",
               names: bool = False) -> float:
    """The anchors only this text holds that stand in a clause holding a value, a choice or a
    negation (words in another clause are an aside: "…, so users log in again every day"; a text
    with none of them is all one such clause), counting a Chinese word of the lists `other_src`
    does not hold at all as one (消费者 vs 生产者 share a character). With `names`, the word right
    before a number counts too (else it is the value's own name: Python 3.9)."""
    src = toks[0].src if toks and toks[0].src else ""
    if not src:
        return 0.0
    ends = [i for i, ch in enumerate(src) if ch in _CLAUSE_ENDS or (ch == "." and src[i + 1:i + 2] in (" ", ""))]
    clause: list[int] = []
    k = 0
    for t in toks:  # tokens and clause ends in text order: one walk
        while k < len(ends) and ends[k] < t.at:
            k += 1
        clause.append(k)
    held = {c for c, t in zip(clause, toks, strict=True) if t.kind in ("num", "alt", "neg")} or set(clause)
    extra = whole = 0.0
    seen: set[str] = set()
    for i, (c, t) in enumerate(zip(clause, toks, strict=True)):
        if c in held and t.kind == "alt" and f"alt:{t.norm.split(':')[0]}" in mine.keys() - other.keys():
            extra += 0.0 if f"alt:{t.norm.split(':')[0]}" in seen else 1.0  # "debug logs" vs "audit logs"
            seen.add(f"alt:{t.norm.split(':')[0]}")
            continue
        if c not in held or t.kind not in ("word", "cue") or (
                not names and i + 1 < len(toks) and toks[i + 1].kind == "num"):
            continue
        parts = [t.norm] if t.han else [x for x in t.surface.lower().replace("_", "-").split("-") if x]
        keys = [c for x in parts for key in (_key(x),) for c in ([key] if key.isascii() else key)]
        own = [key for key in keys if key in mine and key not in other]
        whole += 1.0 if own and other_src and _whole_word(t) and t.norm not in other_src else 0.0
        for key in keys:
            if key in mine and key not in other and key not in seen:
                seen.add(key)
                extra += mine[key]
    return max(extra, whole)


@_per_text
def _first_choices(toks: Sequence[Tok]) -> dict[str, str]:
    """Each class of choice's first member in the text (where it names two, the first is what it
    states; a later one is what to do about it)."""
    out: dict[str, str] = {}
    for t in toks:
        if t.kind == "alt":
            out.setdefault(t.norm.split(":")[0], t.norm)
    return out


def _passed_over(t: Tok) -> bool:
    """A choice named as the one not taken: "ClickHouse over MongoDB", "instead of yarn", "而不是 npm"."""
    if not t.src:
        return False
    head = t.src[max(0, t.at - 12):t.at].lower().rstrip()
    return head.endswith(_PASSED_OVER)


@_per_text
def _contrasts(toks: Sequence[Tok]) -> int:
    """Negations that open a clause after a comma: a contrast ("each file, not the whole request"),
    not a negation of what the text says."""
    n = 0
    for t in toks:
        if t.kind == "neg" and t.src and t.at and t.src[:t.at].rstrip()[-1:] in (",", ";"):
            n += 1
    return n


def _version_same(x: str, y: str) -> bool:
    """20 and 20.11.0, 3.20 and 3.20.x: one is the other's prefix."""
    x, y = x.lower().lstrip("v").removesuffix(".x"), y.lower().lstrip("v").removesuffix(".x")
    return x == y or x.startswith(y + ".") or y.startswith(x + ".")


@_per_text
def _ranged(toks: Sequence[Tok]) -> bool:
    """Does the text give a range ("between 1 and 10", "from 10 to 500", "3.9 through 3.12", "1 到 10")?"""
    text = toks[0].src.lower() if toks and toks[0].src else ""
    return any(t.kind == "num" for t in toks) and (
        any(f" {w} " in f" {text} " for w in _RANGE_EN) or "到" in text or "至" in text or "~" in text)


@_per_text
def _periods(toks: Sequence[Tok]) -> list[tuple[float, str]]:
    """How often a text says something happens without a number: hourly, daily, every hour, 每小时,
    每天; not beside a time of day ("每天凌晨 1 点", "daily at 3am": the time is what it says)."""
    out: list[tuple[float, str]] = []
    if any(t.kind == "num" and (":" in t.norm or t.norm.endswith(("am", "pm")) or t.norm in _TIME_ZH) for t in toks) or any(
            t.kind == "unit" and t.detail in ("点", "点钟", "o'clock", "oclock") for t in toks):
        return out
    for t in toks:
        low = t.surface.lower()
        if low in _PERIOD_WORDS:
            out.append((_PERIOD_WORDS[low], t.surface))
        elif low in _EVERY_PART and t.src and t.src[max(0, t.at - 7):t.at].lower().rstrip().endswith("every"):
            out.append((86400.0, f"every {t.surface}"))  # every night, every morning: daily
        elif t.kind == "unit" and _UNITS.get(t.detail, ("", 0.0))[0] == "time" and t.src:
            head = t.src[max(0, t.at - 7):t.at].lower().rstrip()
            if head.endswith(("every", "每")):
                out.append((_UNITS[t.detail][1], t.surface))
    return out


def _value_slots(sa: Says, sb: Says, ra: bool, rb: bool,
                 pa_: Sequence[tuple[float, str]] = (), pb_: Sequence[tuple[float, str]] = ()) -> list[Difference]:
    found: list[Difference] = []

    def group(s: Says) -> dict[str, list[tuple[float, str, str]]]:
        g: dict[str, list[tuple[float, str, str]]] = {}
        interval = any(k.startswith(("inter", "frequ")) for k in s.subject) or {"间", "隔"} <= s.subject.keys() or (
            {"频", "率"} <= s.subject.keys())
        for dim, x, w, k in s.nums:
            if dim == "clock" and x < 0:
                continue  # 上午, 凌晨: a part of the day, not a time
            key = "port" if k == "port" else "period" if dim == "time" and interval else dim  # interval 10s: how often
            g.setdefault(key, []).append((x, w, k))
        return g

    ga, gb = group(sa), group(sb)
    for g, pa in ((ga, pa_), (gb, pb_)):
        for x, w in pa:
            if not any(abs(v - x) < 1e-9 for v, *_ in g.get("period", [])):
                g.setdefault("period", []).append((x, w, "number"))
    bare = False
    for key in sorted(ga.keys() & gb.keys()):
        va, vb = ga[key], gb[key]

        def said(v: tuple[float, str, str], other: list[tuple[float, str, str]]) -> bool:
            return any(v[0] == o[0] or (v[2] == "version" or o[2] == "version") and _version_same(v[1], o[1])
                       for o in other)

        new_a = [v for v in va if not said(v, vb)]
        new_b = [v for v in vb if not said(v, va)]
        if not new_a or not new_b:
            continue  # one side's values all said by the other: a detail
        if (ra and len(va) >= 2 and all(min(x for x, *_ in va) <= x <= max(x for x, *_ in va) for x, *_ in vb)) or (
                rb and len(vb) >= 2 and all(min(x for x, *_ in vb) <= x <= max(x for x, *_ in vb) for x, *_ in va)):
            continue  # a range and a value inside it (a default)
        ka, kb = new_a[0][2], new_b[0][2]
        kind = "port" if key == "port" else "time" if key == "clock" else ka if ka == kb or kb == "number" else kb
        found.append(Difference(kind, new_a[0][1], new_b[0][1]))
        bare = bare or (key == "n" and kind == "number")
    if bare and len(found) > 1:
        return []  # "service 0 … 30 s" vs "service 1 … 31 s": the bare number names the subject
    return found


def _quals_agree(qa: dict[str, frozenset[str]], qb: dict[str, frozenset[str]]) -> bool:
    """Qualifiers tell two texts apart, unless one side names several of a class ("locally and in
    CI": every case) where the other names none; "customer" on one side only is the data's kind
    ("real customer data"), not a case."""
    for cls in qa.keys() | qb.keys():
        x, y = qa.get(cls, frozenset()) - _WEAK_QUALS, qb.get(cls, frozenset()) - _WEAK_QUALS
        if x == y or (not x and len(y) > 1) or (not y and len(x) > 1):
            continue
        return False
    return True


def slots(a: Sequence[Tok], b: Sequence[Tok]) -> Verdict | None:
    """Whether two texts disagree as slots (above): None unless they share their anchors and a
    slot both fill differs, with nothing telling them apart."""
    if not a or not b or len(a) > MAX_TOKENS or len(b) > MAX_TOKENS:
        return None
    ca, cb = _core(a), _core(b)
    if not ca or not cb:
        return None
    sa, sb = says(ca), says(cb)
    if not _quals_agree(sa.quals, sb.quals) or sa.ordinals - {"last"} != sb.ordinals - {"last"}:
        return None  # ("last" is as often the verb: "cookies last 7 days")
    ids_a = {k for k in sa.subject if "#" in k} - _SLOT_IGNORE
    ids_b = {k for k in sb.subject if "#" in k} - _SLOT_IGNORE
    if any(k[0] != "#" for k in ids_a ^ ids_b) or (ids_a - ids_b and ids_b - ids_a):
        return None  # tenant 4 vs tenant 6, p50 vs p99 (a name with digits on one side only is a detail: S3)
    found = _value_slots(sa, sb, _ranged(ca), _ranged(cb), _periods(ca), _periods(cb))
    if found and (_multi(ca) or _multi(cb)) and any(d.kind in ("version", "port") for d in found):
        return None  # one of several supported or open
    ba, bb = _bound(_core_text(a)), _bound(_core_text(b))
    if found and ba and bb and ba != bb:
        return None  # a floor and a ceiling
    fa, fb = _first_choices(ca), _first_choices(cb)
    for cls in sorted(sa.alts.keys() & sb.alts.keys()):
        ma, mb = sa.alts[cls], sb.alts[cls]
        ma = frozenset((fa[cls],)) if len(ma) > 1 and cls in fa else ma  # "默认是关闭的，需要手动打开": the first says it
        mb = frozenset((fb[cls],)) if len(mb) > 1 and cls in fb else mb
        if ma - mb and mb - ma:
            found.append(Difference("alternative", sa.alt_surface[cls], sb.alt_surface[cls]))
    oa, ka = _owners(ca)
    ob, kb = _owners(cb)
    owner = bool(oa and ob and ka & kb and oa - ob and ob - oa)
    if owner:
        found.append(Difference("owner", " ".join(sorted(oa - ob)), " ".join(sorted(ob - oa))))
    if not found and (_negations(sa, sb) - _contrasts(ca) > 0) != (_negations(sb, sa) - _contrasts(cb) > 0):
        found.append(Difference("negation", _join(ca), _join(cb)))
    if not found:
        return None
    scoping = [f for f in found if f.kind == "alternative" and _alt_class(f.a) in SCOPING]
    if scoping and len(found) > len(scoping) and not all(
            f.kind == "time" or f in scoping for f in found):
        return None  # "before March" vs "after March", "9:30 on Mondays" vs "16:00, Fridays": other events
    names = {_key(x) for x in oa ^ ob} | set(oa ^ ob)

    def anchors(s: Says, other: Says) -> dict[str, float]:
        """Its subject less the owner's name (for a Chinese name, its characters the other lacks),
        owner words and words that say a change."""
        return {k: w for k, w in s.subject.items() if k not in names and k not in _SLOT_IGNORE and k not in _OWN_WORDS
                and not (owner and k not in other.subject and any(k in x for x in names if not x.isascii()))}

    wa, wb = anchors(sa, sb) | _named_alone(sa, sb), anchors(sb, sa) | _named_alone(sb, sa)
    for s, w in ((sa, wa), (sb, wb)):
        for vals in s.quals.values():
            for v in vals:
                w["q:" + v] = 1.0
    shared = sum(min(w, wb[k]) for k, w in wa.items() if k in wb)
    ta, tb = sum(wa.values()), sum(wb.values())
    if shared < SLOT_MIN_SHARED or shared < SLOT_SHARE * min(ta, tb):
        return None
    # words replaced on both sides: another subject; in two Chinese texts (a word the lists lack is
    # compared by its characters) a word on the side with less is allowed where, in the clauses that
    # say the slot, one side has at most one character more ("用户上传的头像" vs "头像上传后…，保持原图")
    han = not (ca[0].src.isascii() or cb[0].src.isascii())
    if min(ta - shared, tb - shared) > (SLOT_REPLACED if han else SLOT_ONE_SIDE) or min(
            _near_extra(ca, wa, wb, cb[0].src, True), _near_extra(cb, wb, wa, ca[0].src, True)) > SLOT_ONE_SIDE:
        return None
    if any(f.kind in _VALUE_KINDS for f in found) and max(
            _near_extra(ca, wa, wb, cb[0].src), _near_extra(cb, wb, wa, ca[0].src)) > SLOT_NEAR_EXTRA:
        return None  # "The API listens on port 8080" vs "The API's health check is served on port 8081"
    return Verdict(found, max(int(shared), 1))
