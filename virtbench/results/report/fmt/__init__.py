"""Text for every report format, by what it formats (pure; reads the result model):

numbers    values, percentages, intervals, p-values, ratios
verdicts   a comparison's verdict mark and a result's verdict cell
tables     the cells of a result's row in the per-benchmark tables
published  the published studies' figures beside the measured ones
header     the lines around a run's tables: run, analysis, adaptive trials; the footer
lists      one line an item: warnings' places, undecided comparisons, method notes, claims
compare    two runs side by side
declared   a study's own tables ([[table]]): the paper's ○/× matrix, values, exits
"""
