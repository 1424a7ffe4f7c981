"""git-memex: a git-native memory layer for AI coding agents (OpenMemex protocol v0.2)."""

__version__ = "0.1.0"
