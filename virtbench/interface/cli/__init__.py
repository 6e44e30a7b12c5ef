"""The `virtbench` command: its parser (parser.py), its subcommands (commands.py) and `virtbench density` (density.py)."""
