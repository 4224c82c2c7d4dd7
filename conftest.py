"""pytest settings for every run in the project (the chapters under nbval, and tests/).

A chapter's Jupyter kernel that dies while starting is started again, up to ``KERNEL_STARTS`` times. Two
pytest-xdist workers that start kernels at the same moment can race for a free TCP port (jupyter_client picks the
ports, then the kernel binds them), and the loser dies "before replying to kernel_info": nbval then reports every
cell of that chapter as an error, though nothing in the chapter ran (CI, 2026-11-27: all 49 cells of
book/corelnet.ipynb). A chapter that fails for its own reasons fails after the kernel is up, so a retry hides none.
"""

import functools
import logging
import time

KERNEL_STARTS = 3


def retry_start(start, attempts=KERNEL_STARTS, pause=1.0):
    """``start`` (nbval's ``start_new_kernel``), called again after a ``RuntimeError`` (a kernel that died or did not
    answer in time) up to ``attempts`` times in all, ``pause`` seconds times the attempt number apart."""

    @functools.wraps(start)
    def start_with_retries(*args, **kwargs):
        for attempt in range(1, attempts + 1):
            try:
                return start(*args, **kwargs)
            except RuntimeError as error:
                if attempt == attempts:
                    raise
                logging.getLogger("nbval").warning(
                    "kernel start %d of %d failed (%s); retrying", attempt, attempts, error
                )
                time.sleep(pause * attempt)

    return start_with_retries


try:
    import nbval.kernel
except ImportError:  # the test extra is not installed: no chapter runs under nbval
    pass
else:
    if not hasattr(nbval.kernel.start_new_kernel, "__wrapped__"):
        nbval.kernel.start_new_kernel = retry_start(nbval.kernel.start_new_kernel)
