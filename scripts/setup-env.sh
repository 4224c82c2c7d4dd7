# Sourced by the build and test scripts: create .venv (or use $LSCNB_VENV) with everything the book needs, at the
# versions the test suite last passed with (constraints.txt). pip's own configuration (PIP_INDEX_URL,
# PIP_EXTRA_INDEX_URL, pip.conf) chooses the package indexes; this script names none.
venv="${LSCNB_VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# shellcheck disable=SC1091
source "$venv/bin/activate"
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
export MPLBACKEND="${MPLBACKEND:-Agg}"
stamp="$venv/.lscnb-installed"
if [ ! -f "$stamp" ] || [ requirements.txt -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ] \
   || [ constraints.txt -nt "$stamp" ]; then
  python -m pip install -q --upgrade pip >/dev/null
  if ! python -c "import torch" 2>/dev/null; then
    if command -v nvidia-smi >/dev/null 2>&1; then
      python -m pip install -q torch
    else
      # the version the suite was tested with; a CPU build where pip's configured indexes offer one (README)
      python -m pip install -q "torch==2.13.0" || python -m pip install -q torch
    fi
  fi
  constrain=(); [ -f constraints.txt ] && constrain=(-c constraints.txt)
  python -m pip install -q "${constrain[@]}" -r requirements.txt
  python -m ipykernel install --sys-prefix --name python3 >/dev/null
  touch "$stamp"
fi
