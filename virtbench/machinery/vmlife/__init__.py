"""What a VM costs beyond steady state, as pure computations and the /proc readers they need:
boot phases from two clocks (phases.py), host memory footprint (footprint.py), migration
and snapshot figures from QMP and a guest ticker (migration.py). The environments that
measure them and the benchmarks that report them are above (docs/lifecycle.md)."""
