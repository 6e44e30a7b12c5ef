"""cpu-suite: the programs SPEC CPU2006 took from open projects, as Debian packages them, each
on an input virtbench makes (inputs.py), run and checked by the program table (programs.py),
their output read by pure parsers (parsers.py), timed and scored by the benchmark (suite.py).
Not SPEC's inputs, not a SPEC score (docs/benchmarks.md#cpu-suite)."""
