"""Figures of a report, beside charts.py in ../ (a package holds at most 15 modules,
tests/unit/test_package_size.py): the HTML report's plotly figure specs (plain dicts: data +
layout), and a paper's matplotlib figures (`virtbench figures`, docs/papers.md; matplotlib
is the `paper` extra, imported only by that command). Pure, reading the result model.

tunechart  a tune run's effects per metric: each knob's (and resolved interaction's) effect
           from its first level to its second, with its interval, the ±min-effect band shaded
style      how a paper's figures look: palette, sizes, rc, PaperFigure, the axes' helpers
paper      a paper's figures: ratios on a log axis with the ±threshold band, values with
           intervals, samples by trial, a tune's effects (and breakdowns')
breakdowns a paper's figures of what a run explains: exits by reason, the price list
densitypaper  a density sweep's paper figure: aggregate (and the native reference) and each
           guest against the count, the QoS floor, the knee
declared   the figures a study declares ([[figure]]): its paper's, published beside measured
save       a paper figure as file bytes (pdf, svg, png) with the run in its metadata; safe
           file names
"""
