"""One module per ``tilecheck`` subcommand: ``add_parser(subparsers)`` and ``run(args) -> int``."""
