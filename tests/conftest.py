import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

# Without a GPU, Triton kernels run in Triton's CPU interpreter; the variable must be set before triton is imported
# (triton's own library functions are compiled at its import).
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


@pytest.fixture
def stores(tmp_path, monkeypatch):
    """Results and cache roots in a temporary folder."""
    monkeypatch.setenv("LSCNB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("LSCNB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LSCNB_GIT_COMMIT", "test-commit")
    return tmp_path
