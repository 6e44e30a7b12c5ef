"""The HTML report's figures that found no room beside charts.py in ../ (a package holds at
most 15 modules, tests/unit/test_package_size.py): plotly figure specs (plain dicts: data +
layout), pure, reading the result model.

tunechart  a tune run's effects per metric: each knob's (and resolved interaction's) effect
           from its first level to its second, with its interval, the ±min-effect band shaded
"""
