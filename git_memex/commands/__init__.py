"""One module per subcommand; each has `register(subparsers)` and sets `func` on its parser."""
