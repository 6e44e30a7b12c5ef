#!/usr/bin/env bash
# The main job: set up, then a quick study (bare metal vs a QEMU guest) and its report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/virtbench run studies/quick.toml --quick
.venv/bin/virtbench report --format markdown -o report.md
echo "quickstart: report written to $(pwd)/report.md"
