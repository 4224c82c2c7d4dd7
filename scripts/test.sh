#!/usr/bin/env bash
# Run the whole test suite: ruff, unit tests of lscnb, every chapter executed in the quick profile (nbval), then the
# book built (replay, warnings as errors) and every page checked in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-env.sh
export LSCNB_PROFILE=quick
# Lint and format check first (settings in pyproject.toml): seconds, and a slip shows before the long runs
ruff check lscnb tests bench scripts conftest.py
ruff format --check lscnb tests bench scripts conftest.py
# Headless: no explorer builds a widget (lscnb.explore detects none anyway; this makes sure of it).
export LSCNB_WIDGETS=0
# Tests and chapters run in parallel, one per core (pytest-xdist; LSCNB_TEST_WORKERS=0 runs them in this
# process), each single-threaded: small torch ops slow down badly when threads outnumber cores.
workers="${LSCNB_TEST_WORKERS:-auto}"
export OMP_NUM_THREADS=1 LSCNB_THREADS=1
# One run for both: --dist loadfile keeps each notebook's cells together, in order, in one kernel; the chapters are
# queued first (--no-loadscope-reorder keeps that order) and the unit-test files fill the cores while the last chapter
# finishes, instead of one core idling at the end of each of two runs.
python -m pytest book tests --nbval-lax -q -p no:cacheprovider --ignore=tests/test_browser.py -n "$workers" \
  --dist loadfile --no-loadscope-reorder "$@"
unset OMP_NUM_THREADS LSCNB_THREADS
# The book: replay plots committed full results; a figure without them reuses the quick results just computed.
rm -rf _build/html _build/.doctrees
LSCNB_PROFILE=replay LSCNB_REUSE=1 scripts/build-book.sh -W --keep-going
python -m pytest tests/test_browser.py -q -p no:cacheprovider "$@"
