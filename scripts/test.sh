#!/usr/bin/env bash
# Run the whole test suite: unit tests of lscnb, every chapter executed in the quick profile (nbval), then the
# book built (replay, warnings as errors) and every page checked in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-env.sh
export LSCNB_PROFILE=quick
python -m pytest tests -q -p no:cacheprovider --ignore=tests/test_browser.py "$@"
python -m pytest --nbval-lax book -q -p no:cacheprovider "$@"
# The book: replay plots committed full results; a figure without them reuses the quick results just computed.
rm -rf _build/html _build/.doctrees
LSCNB_PROFILE=replay LSCNB_REUSE=1 scripts/build-book.sh -W --keep-going
python -m pytest tests/test_browser.py -q -p no:cacheprovider "$@"
