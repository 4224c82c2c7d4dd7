#!/usr/bin/env bash
# Build the HTML book into _build/html, setting up a virtual environment first if needed.
# Usage: scripts/build-book.sh            (replay profile: plots committed results)
#        LSCNB_PROFILE=quick scripts/build-book.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-env.sh
profile="${LSCNB_PROFILE:-replay}"
mkdir -p _build
# the execution cache keys on code only: drop it when the profile changes
if [ -f _build/.profile ] && [ "$(cat _build/.profile)" != "$profile" ]; then
  rm -rf _build/.jupyter_cache
fi
echo "$profile" > _build/.profile
export LSCNB_PROFILE="$profile"
jupyter-book build . "$@"
echo "book built: $(pwd)/_build/html/index.html (profile $profile)"
