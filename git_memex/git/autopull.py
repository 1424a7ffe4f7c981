"""`memex.autoPull true`: a pull at session start that never blocks and always leaves a receipt.

Invariants (D12, docs/decisions.md):
- The session never waits: `start` spawns one detached process and returns; the block the session
  gets is built from the index as it was, so a pulled rule reaches the *next* session, never the
  running one unannounced.
- It never fails the session: every error of `start` is swallowed (the hook must exit 0), and the
  background run's errors go to the receipt.
- Every pull leaves a receipt: `<data root>/receipts/autopull-<project key>.json` (0600), written
  in one step when the run starts ("running", with its pid) and again when it ends (exit code,
  what `git memex pull --json` said or its first stderr line). `sync-status` shows it.
- One at a time per project: a receipt that says "running" with a live pid means no new run.
- Credentials are never asked for (no terminal, `GIT_TERMINAL_PROMPT=0`,
  `SSH_ASKPASS_REQUIRE=never`; the user's own `core.sshCommand` stays in force), and after
  `TIMEOUT_S` the pull's whole process group (git, ssh) is killed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from git_memex.core.context import Context

TIMEOUT_S = 120
"""Seconds the background pull may take (GIT_MEMEX_AUTOPULL_TIMEOUT overrides it, for tests)."""


def _timeout() -> float:
    try:
        return max(1.0, float(os.environ.get("GIT_MEMEX_AUTOPULL_TIMEOUT", TIMEOUT_S)))
    except ValueError:
        return TIMEOUT_S


def receipt_path(ctx: Context) -> Path:
    return ctx.data_root / "receipts" / f"autopull-{ctx.project_key}.json"


def read_receipt(ctx: Context) -> dict[str, Any] | None:
    try:
        from git_memex.core.files import read_private

        data = json.loads(read_private(ctx.data_root, receipt_path(ctx)).decode("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write(path: Path, doc: dict[str, Any]) -> None:
    from git_memex.core.files import atomic_write_text

    atomic_write_text(path, json.dumps(doc, ensure_ascii=False, indent=2) + "\n")


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start(ctx: Context) -> str | None:
    """Start the background pull when the setting asks for it and there is somewhere to pull
    from; the one line the session block carries, or None. Never raises."""
    try:
        if not ctx.bool_setting("autoPull") or ctx.repo is None:
            return None
        prev = read_receipt(ctx)
        if prev and prev.get("state") == "running" and _alive(prev.get("pid")):
            return "memex.autoPull: a pull from the last session start is still running; `git memex sync-status` shows its receipt."
        # No credential prompt can reach anyone: no terminal (a new session, stdin closed), git's
        # own prompt off, ssh's askpass never. The user's ssh set-up (core.sshCommand,
        # GIT_SSH_COMMAND, ~/.ssh/config) is left as it is.
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "SSH_ASKPASS_REQUIRE": "never"}
        receipt = receipt_path(ctx)
        _write(receipt, {"state": "starting", "started_at": _now(), "work_tree": str(ctx.repo.work_tree)})
        subprocess.Popen([sys.executable, "-m", "git_memex.git.autopull", str(ctx.repo.work_tree), str(receipt)],
                         cwd=ctx.repo.work_tree, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        return ("memex.autoPull: pulling from origin in the background; what arrives reaches the next session "
                "(receipt: `git memex sync-status`).")
    except Exception:  # noqa: BLE001 - a failed auto-pull never fails the session (D12)
        return None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def run(work_tree: str, receipt: str) -> int:
    """The background side: `git memex pull --json`, bounded, its outcome written as the receipt."""
    path = Path(receipt)
    started = _now()
    _write(path, {"state": "running", "pid": os.getpid(), "started_at": started, "work_tree": work_tree})
    doc: dict[str, Any] = {"state": "done", "started_at": started, "work_tree": work_tree}
    try:
        # its own process group, so that a timeout stops git and ssh too, not only the pull
        p = subprocess.Popen([sys.executable, "-m", "git_memex", "pull", "--json"], cwd=work_tree,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        try:
            limit = _timeout()
            out, err = p.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            import contextlib
            import signal

            with contextlib.suppress(OSError):
                os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            raise
        doc["exit"] = p.returncode
        try:
            doc["result"] = json.loads(out) if out.strip() else None
        except ValueError:
            doc["result"] = None
        if p.returncode != 0:
            lines = [ln for ln in err.splitlines() if ln.strip()]
            doc["error"] = lines[0] if lines else f"exit {p.returncode}"
    except subprocess.TimeoutExpired:
        doc.update(exit=None, error=f"the pull took longer than {_timeout():g} s and was stopped")
    except OSError as exc:
        doc.update(exit=None, error=f"the pull could not start ({exc.strerror})")
    doc["finished_at"] = _now()
    _write(path, doc)
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], sys.argv[2]))
