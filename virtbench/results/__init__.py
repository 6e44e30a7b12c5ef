"""The results layer: stored samples made into answers.

analysis/  stored samples to the result model: decisions, claims, references, headline,
           what differs, comparisons of two runs
report/    the result model in every format (table, markdown, html, json, csv), and its words
history/   runs lined up into series, their changes and the facts that changed there

May import study, measure, machinery, foundations and core; history may import analysis and
report, never the reverse; analysis and report are one level.
"""
