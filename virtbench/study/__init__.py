"""The study layer: what to run.

design.py (the study and its plan), schema.py (the study file), flags.py (command-line
flags on top of it), claims.py (published claims), targets.py (the user's machines),
reach.py (what a plan can decide).

May import measure (to name environments and benchmarks), machinery, foundations and core.
"""
