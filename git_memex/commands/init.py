"""`git memex init`: set the current repository up (idempotent), or undo it with --uninstall."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from git_memex.errors import USAGE

if TYPE_CHECKING:
    from git_memex.core.context import Context

CLIENT_CHOICES = ("vscode", "cursor", "claude", "codex", "opencode", "visualstudio")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("init", help="set up the current repository (memory folder, merge driver, hooks, agents)",
                       description="Set up the current git repository: the memory folder, the .gitattributes line, "
                       "the merge driver in the repository's git config, the git hooks (where husky, lefthook or the "
                       "pre-commit framework runs them, a marked entry in their committed file, so every clone runs "
                       "the secret scan; elsewhere chained shims), the AGENTS.md pointer line and, with --client, the "
                       "editor's MCP configuration. Running it again changes nothing.")
    p.add_argument("--yes", "-y", action="store_true", help="take the defaults without asking")
    p.add_argument("--client", choices=CLIENT_CHOICES, help="also write this editor's MCP configuration")
    p.add_argument("--claude-hooks", action="store_true",
                   help="with --client claude: also add SessionStart/UserPromptSubmit/Stop hooks to .claude/settings.json")
    p.add_argument("--codex-hooks", action="store_true",
                   help="with --client codex: also add SessionStart/UserPromptSubmit/Stop hooks to $CODEX_HOME/hooks.json "
                   "(Codex asks you to trust them in /hooks before they run); with --uninstall: take them out of "
                   "that user-level file, which --uninstall alone keeps for your other repositories")
    p.add_argument("--replace-open-memex", action="store_true",
                   help="with --client: take the reference tool's MCP server (open-memex) out of the file init writes, "
                   "so the agent sees one tool set; without it init only says where that server is")
    p.add_argument("--no-hooks", action="store_true", help="do not install git hooks")
    p.add_argument("--uninstall", action="store_true",
                   help="undo init: our hooks (restoring chained ones) and the hook managers' marked lines, the merge "
                   "driver, the .gitattributes line, init's settings in this clone's git config, the index in "
                   ".git/memex and our part of the editor and agent files (the rest of each file byte for byte); "
                   "asks first on a terminal (--yes skips that); memories, drafts and personal memories stay")
    p.add_argument("--subscribe", action="store_true",
                   help="subscribe without asking to every org memory repo the project names in "
                   ".ai/open-memex/orgs.gitconfig (for scripts; otherwise a terminal is asked per org, "
                   "and elsewhere the `git memex org add` commands are printed)")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(func=run)


def _ask(question: str, default: str, out: TextIO | None = None) -> str:
    try:
        if out is not None:  # e.g. stderr, so that --json keeps stdout for the one document
            out.write(f"{question} [{default}]: ")
            out.flush()
            answer = input().strip()
        else:
            answer = input(f"{question} [{default}]: ").strip()
    except EOFError:
        return default
    return answer or default


def run(args: argparse.Namespace) -> int:
    from git_memex.commands._common import emit_json
    from git_memex.core.context import load_context
    from git_memex.errors import MemexError
    from git_memex.git.init import init_repo, uninstall

    ctx = load_context()
    if ctx.repo is None:
        raise MemexError("not inside a git repository; run `git init` first, or cd into your project", USAGE)
    if args.subscribe and args.uninstall:
        raise MemexError("--subscribe and --uninstall cannot be used together", USAGE)
    if args.replace_open_memex and args.uninstall:
        raise MemexError("--replace-open-memex and --uninstall cannot be used together", USAGE)
    if args.codex_hooks and not args.uninstall and args.client not in (None, "codex"):
        raise MemexError("--codex-hooks goes with --client codex (or with --uninstall, to remove them)", USAGE)
    if args.codex_hooks and args.uninstall and args.client is not None:
        raise MemexError("--uninstall --codex-hooks takes no --client; it removes our hooks from Codex's hooks.json", USAGE)
    orgs: list[dict[str, object]] = []
    if args.uninstall:
        if not args.yes and sys.stdin.isatty() and sys.stdout.isatty():
            plan = uninstall(ctx, apply=False, codex_hooks=args.codex_hooks)
            todo = [st for st in plan.steps if st.action != "unchanged"]
            if not todo:
                print("nothing of git-memex's set-up is left here; nothing changed")
                return 0
            out = sys.stderr if args.json else sys.stdout
            print("git memex init --uninstall will change:", file=out)
            for st in todo:
                print(f"  {st.action:9}  {st.what}" + (f"  ({st.detail})" if st.detail else ""), file=out)
            if not _ask("Go ahead? (y/n)", "n", out).lower().startswith("y"):
                print("nothing changed", file=out)
                if args.json:
                    emit_json({"steps": [], "snippets": [], "changed": False})
                return 0
        rep = uninstall(ctx, codex_hooks=args.codex_hooks)
    else:
        client = args.client
        hooks = not args.no_hooks
        claude_hooks = args.claude_hooks
        codex_hooks = args.codex_hooks
        if not args.yes and sys.stdin.isatty() and sys.stdout.isatty():
            if client is None:
                c = _ask(f"Configure an editor's MCP server? ({'/'.join(('none', *CLIENT_CHOICES))})", "none")
                c = "none" if c.strip().lower() in ("", "n", "no", "none") else c.strip().lower()
                if c not in ("none", *CLIENT_CHOICES):
                    raise MemexError(f"unknown editor {c!r}; choose one of: none, {', '.join(CLIENT_CHOICES)}", USAGE)
                client = None if c == "none" else c
            if hooks:
                hooks = _ask("Install git hooks (secret scan, index refresh on pull)? (y/n)", "y").lower().startswith("y")
            if client == "claude" and not claude_hooks:
                claude_hooks = _ask("Add Claude Code session hooks (context + keyword capture)? (y/n)", "y").lower().startswith("y")
            if client == "codex" and not codex_hooks:
                codex_hooks = _ask("Add Codex session hooks (context + keyword capture)? (y/n)", "y").lower().startswith("y")
        if codex_hooks and client is None:
            raise MemexError("--codex-hooks needs --client codex", USAGE)
        if args.replace_open_memex and client is None:
            raise MemexError("--replace-open-memex needs --client: say which editor's file to change", USAGE)
        join_ask = None
        if hooks and not args.yes and sys.stdin.isatty() and sys.stdout.isatty():
            work_tree = ctx.repo.work_tree

            def join_ask(manager: str, where: Path) -> bool:
                rel = where.relative_to(work_tree) if where.is_relative_to(work_tree) else where
                return _ask(f"This repository uses {manager}: add git-memex's secret scan to {rel} (committed, "
                            "so every clone runs it)? (y/n)", "y").lower().startswith("y")
        rep = init_repo(ctx, hooks=hooks, ask=join_ask)
        if client:
            from git_memex.agents import clients

            home = Path.home()
            w = clients.write_config(client, ctx.repo.work_tree, home, replace_reference=args.replace_open_memex)
            if client == "codex":  # Codex's files are user level: `--uninstall` here names them only if so
                from git_memex.git.init import _set_local

                _set_local(ctx.repo.work_tree, "memex.codex", "true")
            rep.add(f"{client} MCP config {w.path}", w.action, "its memex server is not git-memex's"
                    if w.action == "kept" else "")
            for name in w.replaced:
                rep.add(f"reference tool's server {name} in {w.path}", "removed", clients.REPLACE_FLAG)
            if w.action == "printed":
                rep.snippets.append(f"{w.path} {w.detail or 'is not plain JSON'}, so it was left alone; add this "
                                    f"yourself:\n{w.snippet}")
            if w.action == "kept":
                rep.snippets.append(f"{w.path}: {w.detail}:\n{w.snippet}")
            note = clients.path_note(client, w.path, hooks=client == "claude" and claude_hooks)
            if note:
                rep.snippets.append(note)
            if client == "claude":
                approval = clients.claude_approval_note(ctx.repo.work_tree, home)
                if approval:
                    rep.snippets.append(approval)
            for seen in clients.reference_servers(client, ctx.repo.work_tree, home):
                rep.snippets.append(clients.reference_note(
                    seen, replaced_by_init=seen.path == w.path and not args.replace_open_memex))
            g = clients.write_agent_guidance(ctx.repo.work_tree, client, ctx.memory_dir_rel)
            rep.add(f"agent guidance {g.path}", g.action)
            if client == "claude" and claude_hooks:
                h = clients.write_claude_hooks(ctx.repo.work_tree)
                rep.add(f"Claude Code hooks {h.path}", h.action)
                if h.action == "printed":
                    rep.snippets.append(f"{h.path} {h.detail or 'is not plain JSON'}; add this yourself:\n{h.snippet}")
            if client == "codex" and codex_hooks:
                h = clients.write_codex_hooks(home)
                rep.add(f"Codex hooks {h.path}", h.action)
                if h.action == "printed" and h.path.name == "config.toml":
                    rep.snippets.append(f"{h.path} already holds inline [hooks] tables (Codex warns when a folder has "
                                        f"both those and hooks.json), so nothing was written; add these to it:\n{h.snippet}")
                elif h.action == "printed":
                    rep.snippets.append(f"{h.path} is not plain JSON; add this yourself:\n{h.snippet}")
                if h.action in ("created", "updated"):
                    rep.snippets.append("Codex runs new or changed hooks only after you trust them: open /hooks in "
                                        "Codex and trust the three git-memex hooks.")
        from git_memex.ops import reindex

        reindex(ctx, trigger="init")
        orgs = _offer_orgs(ctx, subscribe=args.subscribe,
                           ask=not args.yes and not args.subscribe and sys.stdin.isatty() and sys.stdout.isatty(),
                           out=sys.stderr if args.json else sys.stdout)
    if args.json:
        emit_json({"steps": [s.__dict__ for s in rep.steps], "snippets": rep.snippets, "changed": rep.changed,
                   **({"orgs": orgs} if orgs else {})})
        return 0
    for s in rep.steps:
        print(f"{s.action:9}  {s.what}" + (f"  ({s.detail})" if s.detail else ""))
    for snip in rep.snippets:
        print()
        print(snip)
    offered = [o for o in orgs if o["state"] == "offered"]
    if offered:
        from git_memex.git.orgfile import rel_path

        print()
        print(f"{rel_path(ctx)} names {len(offered)} org memory repo{'s' if len(offered) != 1 else ''} "
              "this clone is not subscribed to; to subscribe, run:")
        for o in offered:
            print(f"  {o['command']}")
        print("(or `git memex init --subscribe` to subscribe to all of them)")
    if not args.uninstall and not rep.changed and not any(o["state"] == "subscribed" for o in orgs):
        print("already set up; nothing changed")
    return 0


def _offer_orgs(ctx: Context, *, subscribe: bool, ask: bool, out: TextIO) -> list[dict[str, object]]:
    """The org memory repos the committed file names that this clone is not subscribed to: asked
    about one by one (`ask`), subscribed to (`subscribe`), or else listed as "offered" with the
    command that subscribes. A bad entry, an org subscribed to another URL and a failed
    subscription are one warning line each on stderr; init itself still completes."""
    from git_memex.errors import MemexError
    from git_memex.git import org, orgfile

    named, problems = orgfile.read(ctx)
    for why in problems:
        print(f"warning: {why}", file=sys.stderr)
    result: list[dict[str, object]] = []
    for n in named:
        entry: dict[str, object] = {"name": n.name, "url": n.url, "branch": n.branch, "command": n.command}
        if n.state == "subscribed":
            continue  # already subscribed: not offered again
        if n.state == "other-url":
            print(f"warning: {orgfile.rel_path(ctx)} names org {n.name} at {n.url}, but this clone subscribes "
                  f"to {n.name} at {n.subscribed_url}; left as it is (`git memex doctor` explains)", file=sys.stderr)
            result.append({**entry, "state": "other-url"})
            continue
        if ask and not _ask(f"Subscribe to org memory repo {n.name} ({n.url})? (y/n)", "y", out).lower().startswith("y"):
            result.append({**entry, "state": "declined"})
            continue
        if not (ask or subscribe):
            result.append({**entry, "state": "offered"})
            continue
        try:
            res = org.add(ctx, n.name, n.url, branch=n.branch)
        except MemexError as exc:
            print(f"warning: cannot subscribe to org {n.name}: {exc.message}", file=sys.stderr)
            result.append({**entry, "state": "failed", "error": exc.message})
            continue
        print(f"subscribed to org {n.name} ({n.url}): {res['memories']} memories indexed", file=out)
        result.append({**entry, "state": "subscribed", "memories": res["memories"]})
    return result
