"""The vocabulary every layer shares: errors, the method's defaults, the warning catalogue, metric identity, capabilities, a trial's outcome, URLs shown without passwords."""
