"""Upkeep commands at scale: `audit`, `export` and `import` on one generated corpus.

    python -m bench.upkeep [--n 10000]

Generates (or reuses) the corpus of `python -m bench` (../shared/bench/gen_corpus.py, seed 1)
in a fresh repository's memory folder, then times, as whole processes: `audit --json` before
the index exists and after `reindex`, `export --scope project -o FILE`, and `import FILE` into a
second repository (every file written with fsync, as every write path does). Prints one line
per step: wall seconds and what the command reported.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.run import ensure_corpus


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10000)
    args = ap.parse_args(argv)
    mem, _queries = ensure_corpus(args.n, 200)
    tmp = Path(tempfile.mkdtemp(prefix="memex-upkeep-"))
    try:
        env = {**os.environ, "GIT_MEMEX_HOME": str(tmp / "data"), "HOME": str(tmp),
               "GIT_CONFIG_GLOBAL": str(tmp / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"}
        (tmp / "gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
        cmd = [sys.executable, "-m", "git_memex"]

        def sh(args: list[str], cwd: Path) -> tuple[float, str]:
            t = time.perf_counter()
            r = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
            if r.returncode != 0:
                raise SystemExit(f"{' '.join(args)} failed: {r.stderr.strip()}")
            return time.perf_counter() - t, r.stdout

        work = tmp / "a"
        (work / ".ai" / "open-memex").mkdir(parents=True)
        for p in mem.glob("*.md"):
            shutil.copy(p, work / ".ai" / "open-memex" / p.name)
        sh(["git", "init", "-q", "-b", "main"], work)
        sh(["git", "add", "-A"], work)
        sh(["git", "commit", "-q", "-m", "corpus"], work)

        def summary(out: str) -> str:
            d = json.loads(out)
            return ", ".join(f"{k} {len(v)}" for k, v in d.items() if isinstance(v, list))

        s, out = sh([*cmd, "audit", "--json"], work)
        print(f"audit, no index yet       {s:6.2f} s  ({summary(out)})")
        sh([*cmd, "reindex"], work)
        s, out = sh([*cmd, "audit", "--json"], work)
        print(f"audit, index in step      {s:6.2f} s  ({summary(out)})")
        bundle = tmp / "bundle.json"
        s, out = sh([*cmd, "export", "--scope", "project", "-o", str(bundle)], work)
        print(f"export --scope project    {s:6.2f} s  ({out.strip()}; {bundle.stat().st_size / 1e6:.1f} MB)")
        other = tmp / "b"
        other.mkdir()
        sh(["git", "init", "-q", "-b", "main"], other)
        sh(["git", "commit", "-q", "--allow-empty", "-m", "init"], other)
        s, out = sh([*cmd, "import", str(bundle)], other)
        print(f"import into a new project {s:6.2f} s  ({out.strip()})")
        s, out = sh([*cmd, "import", str(bundle)], other)
        print(f"import again              {s:6.2f} s  ({out.strip()})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
