# Sourced by the build and test scripts: create .venv (or use $LSCNB_VENV) with everything the book needs.
# On a machine without a GPU the CPU build of torch is installed first, so pip does not pull a CUDA build.
venv="${LSCNB_VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# shellcheck disable=SC1091
source "$venv/bin/activate"
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
export MPLBACKEND="${MPLBACKEND:-Agg}"
stamp="$venv/.lscnb-installed"
if [ ! -f "$stamp" ] || [ requirements.txt -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  python -m pip install -q --upgrade pip >/dev/null
  if ! python -c "import torch" 2>/dev/null; then
    if command -v nvidia-smi >/dev/null 2>&1; then
      python -m pip install -q torch
    else
      # the CPU wheel (PyTorch's CPU index first, PyPI for its dependencies); no retries when offline
      python -m pip install -q "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu \
        --extra-index-url https://pypi.org/simple --retries 0 --timeout 20 \
        || python -m pip install -q "torch==2.13.0"
    fi
  fi
  python -m pip install -q -r requirements.txt
  python -m pip install -q -e . --no-deps
  python -m ipykernel install --sys-prefix --name python3 >/dev/null
  touch "$stamp"
fi
