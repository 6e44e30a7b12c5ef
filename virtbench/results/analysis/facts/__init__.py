"""What differs between environments, as facts: two fingerprints compared (differences.py),
each environment against each of its references in a report (pairs.py), and the study that
separates changes made at once (separate.py). Pure."""
