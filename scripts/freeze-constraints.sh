#!/usr/bin/env bash
# Write constraints.txt: the versions of every package in .venv, after a green scripts/test.sh. torch and the
# packages built for one torch (triton, nvidia-*) are left out, so a GPU machine keeps the build it has.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC1091
source "${LSCNB_VENV:-.venv}/bin/activate"
{
  echo "# The versions scripts/test.sh last passed with (python $(python -c 'import platform; print(platform.python_version())'), $(date -u +%Y-%m-%d)); refresh: scripts/freeze-constraints.sh"
  python -m pip freeze --exclude-editable | grep -viE '^(torch|triton|nvidia-|lscnb|pip|setuptools|wheel)[=-]' | sort -f
} > constraints.txt
echo "wrote constraints.txt ($(grep -vc '^#' constraints.txt) packages)"
