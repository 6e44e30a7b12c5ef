"""The core layer: the vocabulary every layer shares: errors, the method's defaults, the
warning catalogue, metric identity, capabilities, a trial's outcome, URLs shown without
passwords.

Imports nothing of virtbench (but the package's own version).
"""
