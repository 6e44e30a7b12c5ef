"""The published studies on a run: their claims checked with the verdicts' statistics
(claims.py) and their figures beside the measured results (published.py)."""
