"""The interface layer: what a person types and sees.

cli/  the `virtbench` command: its parser, one function per subcommand (each imports what it
      needs when it runs), density, qemu fetch
web/  the read-only web view (`virtbench serve`) and the history's pages written as files

May import every layer below (execution, results, study, measure, machinery, foundations,
core); cli may import web, never the reverse. Nothing below imports this layer.
"""
