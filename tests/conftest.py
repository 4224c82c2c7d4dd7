import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture
def stores(tmp_path, monkeypatch):
    """Results and cache roots in a temporary folder."""
    monkeypatch.setenv("LSCNB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("LSCNB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LSCNB_GIT_COMMIT", "test-commit")
    return tmp_path
