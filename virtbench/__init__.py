"""virtbench: what does virtualization cost me, and why?

The package is its architecture: one package per layer, the highest first. A module imports
its own layer or a lower one, never a higher one; inside a layer, its packages keep the
order written here (`a > b`: a may import b, never the reverse; `a, b`: one level; `a | b`:
one level, and neither imports the other). tests/unit/test_layers.py checks every import
against this table, and that the table is the test's layer list.

layers:
    interface    cli > web                        the command; the read-only web view
    execution    fleet > run                      many hosts; a study to stored trials
    results      history > analysis, report       series; decisions; every format
    study        study                            what to run
    measure      environments | benchmarks        where a benchmark runs; what it runs
    machinery    agent, host, machine, kernels, image, exits, vmlife
    foundations  store, stats, model              runs on disk; statistics; the result model
    core         core                             the shared vocabulary

Each layer package's docstring says what it holds and what it may import.
"""

__version__ = "0.1.0"
