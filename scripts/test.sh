#!/usr/bin/env bash
# Run the whole test suite: unit tests of lscnb, then every chapter executed in the quick profile (nbval).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-env.sh
export LSCNB_PROFILE=quick
python -m pytest tests -q "$@"
python -m pytest --nbval-lax book -q -p no:cacheprovider "$@"
