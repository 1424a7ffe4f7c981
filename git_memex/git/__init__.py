"""Everything that talks to git: the subprocess helper, pygit2, hooks, the merge driver's merge, sync, install."""
