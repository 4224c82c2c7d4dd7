#!/usr/bin/env bash
# Build the HTML book into _build/html, setting up a virtual environment first if needed.
# Usage: scripts/build-book.sh            (replay profile: plots committed results)
#        LSCNB_PROFILE=quick scripts/build-book.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-env.sh
profile="${LSCNB_PROFILE:-replay}"
mkdir -p _build
# the execution cache keys on notebook code only: drop it when the profile, the results or the package change
stamp="$profile $( (find results lscnb -type f \( -name '*.json' -o -name '*.npz' -o -name '*.py' \) -print0 2>/dev/null \
  | sort -z | xargs -0 cksum) | cksum)"
if [ ! -f _build/.stamp ] || [ "$(cat _build/.stamp)" != "$stamp" ]; then
  rm -rf _build/.jupyter_cache _build/.doctrees  # sphinx re-reads only changed sources otherwise
fi
echo "$stamp" > _build/.stamp
export LSCNB_PROFILE="$profile"
# The build is headless: explorers draw no widget (lscnb.explore detects no frontend anyway; this makes sure of it)
export LSCNB_WIDGETS=0
if [ "$profile" = replay ] && [ -z "${LSCNB_NO_PREPASS:-}" ]; then
  # A replay build computes the figures without committed full results at quick scale. Jupyter Book executes the
  # notebooks one after another; computing those runs first, one per core, and letting the notebooks reuse them
  # (LSCNB_REUSE=1 reuses only results made by the code now on disk) uses every core.
  OMP_NUM_THREADS=1 LSCNB_THREADS=1 python -m lscnb reproduce all --profile quick --no-notebook --owed \
    --executor processes --workers "$(nproc)" --threads-per-run 1
  export LSCNB_REUSE=1
fi
jupyter-book build . "$@"
echo "book built: $(pwd)/_build/html/index.html (profile $profile)"
