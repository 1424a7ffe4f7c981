"""A prior for common words that does not depend on the store's size (issue 33, item 5).

The prompt hook weighs a prompt's words by how rare they are (docs/agents.md, "Keyword capture"):
a memory must hold enough of the prompt's weight. Weighted by the store's own IDF alone, a small
store cannot tell a common word from a rare one: with one memory, the words that memory holds
are "in every document" (IDF ~0.29) and every word it lacks "in none" (IDF ~1.39), so in "how
many retries does zorblax get?" the unmatched `many` and `get` outweigh `retries` and `zorblax`
and the answer never comes.

So each word's weight is an IDF over the store **plus a fixed reference store**: `PRIOR_MEMORIES`
imaginary memories in which every word of `COMMON` (general English and Chinese words a
question is full of: `many`, `get`, `work`, `一下`, not technical terms) stands in `PRIOR_SHARE`
of them and every other word in none. In a store of one, `zorblax` held by the one memory then
weighs ~3.6 and `many` ~1.2; in a store of 10,000 the store's own counts dominate, as they
should. The reference store is the same whatever the store's size; only its weight against the
store's own counts shrinks as the store grows (Bayesian pseudo-counts).

Standard library and core.textproc only (the tokeniser search uses), no I/O: the prompt hook
imports it (tests/test_startup.py).
"""

from __future__ import annotations

import math

from git_memex.core.textproc import CJK_RE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

PRIOR_MEMORIES = 100
"""The size of the imaginary reference store (pseudo-counts); chosen on the tuning half of
bench/prompts/set.json (`python -m bench.prompt_hook --sweep`, docs/agents.md)."""
PRIOR_SHARE = 0.3
"""The share of the reference store's memories in which a word of COMMON stands."""

# General English words a developer's question is full of and that say nothing about which memory
# answers it: frequent verbs (with their forms), nouns, adjectives, adverbs and quantifiers of
# everyday English, written for this list (not taken from the prompt set, nor from any frequency
# list's data). Function words are search's stopwords already (core/textproc.py) and never reach
# here. Technical words (test, build, deploy, file, code, data, user, error) are deliberately not
# in it: in a memory store they are topics.
_COMMON_TEXT = """
    get gets got getting gotten make makes made making go goes went going gone know knows knew
    knowing known take takes took taking taken see sees saw seeing seen come comes came coming
    think thinks thought thinking look looks looked looking want wants wanted wanting give gives
    gave giving given use uses used using find finds found finding tell tells told telling ask
    asks asked asking work works worked working seem seems seemed feel feels felt try tries tried
    trying leave leaves left leaving call calls called calling need needs needed needing mean
    means meant keep keeps kept keeping let lets letting begin begins began help helps helped
    helping talk talks talked turn turns turned turning start starts started starting show shows
    showed shown showing hear heard play plays played run runs ran running move moves moved moving
    like likes liked live lives lived believe hold holds held bring brings brought happen happens
    happened happening write writes wrote written writing provide provides sit stand lose loses
    lost pay pays paid meet include includes included including continue learn change changes
    changed changing lead understand watch follow follows followed following stop stops stopped
    stopping create creates created speak read reads reading allow allows allowed add adds added
    adding spend grow open opens opened walk win offer remember consider appear buy wait waits
    waited waiting serve send sends sent sending expect stay fall cut reach remain suggest raise
    pass passes passed sell require requires required report decide pull put puts putting say says
    said saying fix fixes fixed fixing check checks checked checking explain explains figure
    handle deal goes doing done become becomes became care cares matter matters sure thanks thank
    break breaks broke broken fail fails failed failing miss misses missed set sets setting
    time times year years people way ways day days man men thing things woman women life child
    children world school state family group country problem problems hand hands part parts place
    places case cases week weeks company system systems program question questions number numbers
    night point points home water room money story fact month months lot lots right study book
    eye eyes job jobs word words business issue issues side sides kind kinds head house service
    friend father mother power hour hours game line lines end member law car city community name
    names team teams minute minutes idea ideas kid kids body information back parent face others
    level office door health person art war history party result results morning reason research
    girl guy guys moment air force education stuff something anything everything nothing someone
    anyone everyone somebody anybody everybody example examples sort bit bits piece pieces step
    steps sense order
    good better best new newer newest first last long longer longest great little own old right
    big bigger biggest high higher highest different small smaller large larger next early young
    important few bad worse worst same able sure real whole clear easy easier hard harder free
    full special certain possible likely recent late later current simple quick quickly fast
    faster slow slower main nice fine okay ok wrong true false open short low lower strong ready
    many much often always never sometimes usually already still yet even ever again really
    actually maybe perhaps probably almost quite rather enough less least well away around ago
    soon today tomorrow yesterday tonight else instead together anyway exactly especially
    certainly simply yes hey hi hello please thanks
    one ones two three four five six seven eight nine ten hundred thousand second third another
    every either neither several various whatever whenever wherever whether though although
    however since unless till per via etc unlike upon within across along among behind beside
    beyond toward towards near onto inside outside
    我们 你们 他们 大家 自己 这个 那个 一个 一些 有些 一下 一次 几个 可以 需要 应该 能够 不能
    现在 时候 已经 知道 觉得 没有 还是 就是 不是 这样 那样 这里 那里 因为 所以 但是 如果 然后
    问题 东西 事情 时间 今天 明天 昨天 多少 多久 一点 帮我 告诉 看看 还有 一直 所有 每个
    你好 您好 谢谢 总是 从不 经常 有时 通常 可能 也许 真的 其实 一起 帮忙 不能 能不 不会 怎样
"""
COMMON = frozenset(_COMMON_TEXT.split())


def common(word: str) -> bool:
    """Whether `word` (a query word as search parses it: lower case, or a CJK bigram) is in COMMON,
    as written or as a plain English inflection of a word there (`asks`, `worked`, `thinking`)."""
    if word in COMMON:
        return True
    for end, back in (("s", ""), ("es", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"), ("ly", "")):
        if word.endswith(end) and len(word) > len(end) + 2 and word[: -len(end)] + back in COMMON:
            return True
    return False


def _bigram(word: str) -> bool:
    return len(word) == 2 and CJK_RE.fullmatch(word) is not None


def _fragments(words: Sequence[tuple[str, int]]) -> set[int]:
    """The positions of CJK bigrams that are pieces of two words, not a word. Search cuts Chinese
    into overlapping bigrams, as the index does (core/textproc.py), and a prompt's words come in
    text order, so `我们的部署总是失败` gives `我们 们的 的部 部署 署总 总是 是失 失败`. A bigram that
    no memory holds and that is not everyday, overlapping a neighbour that is a word (a memory
    holds it, or it is everyday), is such a piece (`的部` beside `部署`): it weighs nothing."""
    def word_at(k: int) -> bool:
        w, df = words[k]
        return df > 0 or common(w)

    out: set[int] = set()
    for k, (w, df) in enumerate(words):
        if not _bigram(w) or df > 0 or common(w):
            continue
        before = k > 0 and _bigram(words[k - 1][0]) and words[k - 1][0][1] == w[0] and word_at(k - 1)
        after = k + 1 < len(words) and _bigram(words[k + 1][0]) and words[k + 1][0][0] == w[1] and word_at(k + 1)
        if before or after:
            out.add(k)
    return out


def rare(held: Iterable[str]) -> bool:
    """Whether the words a memory holds include one that is not everyday (`common`): a memory that
    shares only words like `help`, `fix`, `make` with a prompt is not what it asks about."""
    return any(not common(w) for w in held)


def weights(words: Sequence[tuple[str, int]], memories: int, *, prior_memories: float = PRIOR_MEMORIES,
            prior_share: float = PRIOR_SHARE) -> list[float]:
    """Each query word's weight: its IDF over the store (`memories` memories, `df` of them holding
    the word) plus the reference store (module docstring), in BM25's (Lucene's) form; a piece of two
    CJK words (`_fragments`) weighs 0."""
    n = memories + prior_memories
    pieces = _fragments(words)
    out: list[float] = []
    for k, (word, df) in enumerate(words):
        if k in pieces:
            out.append(0.0)
            continue
        # a CJK bigram no memory holds tells little of which memory answers (the prompt's own
        # words the store lacks, or pieces `_fragments` did not catch): the background frequency
        # of an everyday word
        d = df + (prior_share * prior_memories if common(word) or (df == 0 and _bigram(word)) else 0.0)
        out.append(math.log(1.0 + (n - d + 0.5) / (d + 0.5)))
    return out


def share(held: Iterable[str], words: Sequence[tuple[str, int]], memories: int, *,
          prior_memories: float = PRIOR_MEMORIES, prior_share: float = PRIOR_SHARE) -> float:
    """The share of the query's weight (`weights`) that the words `held` carry, 0..1."""
    w = weights(words, memories, prior_memories=prior_memories, prior_share=prior_share)
    total = sum(w)
    if total <= 0:
        return 0.0
    have = set(held)
    return sum(x for (word, _df), x in zip(words, w, strict=True) if word in have) / total
