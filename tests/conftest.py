import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

# Without a GPU, Triton kernels run in Triton's CPU interpreter; the variable must be set before triton is imported
# (triton's own library functions are compiled at its import).
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


@pytest.fixture(autouse=True)
def _no_figure_outlives_its_test():
    """Close the figures a test left open: a pytest-xdist worker runs many tests in one process, and a test that
    counts open figures (tests/test_explore.py) must not see another's."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


@pytest.fixture
def stores(tmp_path, monkeypatch):
    """Results and cache roots in a temporary folder."""
    monkeypatch.setenv("LSCNB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("LSCNB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LSCNB_GIT_COMMIT", "test-commit")
    return tmp_path


def _names_an_argument(check):
    """``check`` (a function of lscnb.checks) that first asserts that the ``name`` it is given is a parameter or local
    variable of the function calling it (or of a function a few calls above it, for a helper that checks its caller's
    argument), so that the error a reader sees names the argument they passed."""
    import functools
    import inspect

    params = list(inspect.signature(check).parameters)
    where = params.index("name")

    @functools.wraps(check)
    def checked(*args, **kwargs):
        name = args[where] if len(args) > where else kwargs.get("name")
        frame = inspect.currentframe().f_back
        while frame.f_globals.get("__name__") == "lscnb.checks":  # a check calling another passes its caller's name
            frame = frame.f_back
        callers = []  # the caller, and up to three above it (a helper, a dataclass's __init__, mutmut's trampoline)
        while frame is not None and len(callers) < 4:
            callers.append(frame.f_code)
            frame = frame.f_back
        base = name.split("[")[0] if isinstance(name, str) else None  # "lr[2]": an entry of the argument lr
        assert base and any(base in code.co_varnames for code in callers), (
            f"{callers[0].co_qualname} passes name={name!r} to checks.{check.__name__}: not one of its arguments"
        )
        return check(*args, **kwargs)

    return checked


@pytest.fixture(autouse=True, scope="session")
def _checks_name_their_argument():
    """Every argument check in lscnb names an argument of its caller (tests/test_independent_*: error messages)."""
    from lscnb import checks

    mp = pytest.MonkeyPatch()
    for fn in ("positive_int", "positive_float", "one_of", "tensor", "square_matrices"):
        mp.setattr(checks, fn, _names_an_argument(getattr(checks, fn)))
    yield
    mp.undo()
