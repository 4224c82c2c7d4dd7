#!/usr/bin/env bash
# Run every chapter (or the ones named) in the quick profile at seeds 1-4, one papermill run per core, and list
# every failing assert. Options: --seeds 1,2,3,4  --threads 1,2  --jobs N  --out DIR (see --help).
#   scripts/check-seeds.sh                       # all chapters, seeds 1-4, 1 torch thread
#   scripts/check-seeds.sh --threads 1,2 corelnet
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-env.sh
exec python scripts/check_seeds.py "$@"
