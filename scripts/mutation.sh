#!/usr/bin/env bash
# Mutation testing of the core with mutmut ([tool.mutmut] in pyproject.toml), then the score per module. Not in CI
# (hours on 2 cores): run it in the background. mutmut resumes where it stopped and runs only the tests that cover
# each mutant. List equivalent mutants in tests/MUTANTS.md.
#   scripts/mutation.sh                  # the whole core
#   scripts/mutation.sh theory.relevancy # one module (lscnb.theory.relevancy)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-env.sh
export OMP_NUM_THREADS=1 LSCNB_THREADS=1 LSCNB_PROFILE=quick
module="${1:+lscnb.${1#lscnb.}}"
mutmut run --max-children "${LSCNB_MUTATION_JOBS:-$(nproc)}" ${module:+"$module.*"} || true
python scripts/mutation_score.py ${module:+"$module"}
