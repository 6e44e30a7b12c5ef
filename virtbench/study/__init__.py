"""What to run: the study file, its schema, command-line flags on top of it, published claims, the user's targets, and what a plan can decide."""
