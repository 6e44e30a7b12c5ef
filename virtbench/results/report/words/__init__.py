"""The report layer's words: everything virtbench says of its figures in sentences, by one
rule each (pure). Analysis returns numbers, enums and facts; where the result model holds a
sentence (VsReference.message, ClaimLink.message, the headline's words, CompareRow.message,
a warning group's line), the one place that builds the model calls these, and the formats
say the rest from the model.

change          how a change against a reference is said: the overhead in % near 1, the
                factor from 1.5× on (the rule, as a specification)
headline        the headline's row and summary words
decisions       a decision's message, a claim's, the runner's reasons for another block
compare         `virtbench compare`'s verdicts in words
warning_groups  the warnings grouped by kind: the line, the places, the advice
tool_errors     a tool's own error line in a warning, put in words
"""
