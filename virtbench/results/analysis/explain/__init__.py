"""Why a guest is slower, beside its rows: the price lists of `primitives` cases
(pricelist.py) and the exit profiles with the overhead each explains (profiles.py)."""
