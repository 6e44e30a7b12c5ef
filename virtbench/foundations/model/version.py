"""The version of the report's schema, which every top-level report carries."""
from __future__ import annotations

# the version of the report's schema (docs/report.schema.json): the minor part grows when
# fields are added, the major part when a field changes or goes (2.0: verdicts are the
# decisions of docs/decisions.md, from the paired analysis of the blocks by default; 2.1:
# price_lists; 3.0: the published studies' rule is `published_rule`, was `seed_rule`; 3.1:
# headline, verdict_p and verdict_p_adjusted; adaptive resolution_pct and unresolved;
# warning_groups, warnings[].detail; 3.2: differences, vs_baseline.differs_in,
# run.kernels_build, compare's differences; 3.4: density (a density sweep's run),
# run.density_sweep, DensityReport.run_id, stop reason interrupted)
SCHEMA_VERSION = "3.4"


def read_schema_version(value):
    """A report of the same major version reads as this one (minor versions only add
    fields, which every record defaults); another major version stays as given and fails."""
    if isinstance(value, str) and value.split(".")[0] == SCHEMA_VERSION.split(".")[0]:
        return SCHEMA_VERSION
    return value
