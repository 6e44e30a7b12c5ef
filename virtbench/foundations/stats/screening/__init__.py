"""Screening: which of several two-level knobs move a metric, from a designed experiment.

design    the two-level design for k knobs: full factorial (k <= 3), a fractional factorial
          of resolution IV or V (4 <= k <= 8, pyDOE3), Plackett-Burman folded over (k >= 9);
          its configurations, resolution and aliasing
effects   effects by least squares with blocks (statsmodels), their intervals corrected over
          the family, each knob decided: matters / no effect / undecided (blocks that would
          decide), and the configuration the effects recommend
(docs/tune.md)
"""
