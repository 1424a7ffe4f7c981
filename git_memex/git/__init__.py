"""Everything that talks to git: pygit2, hooks, the merge driver's merge, sync, install."""
