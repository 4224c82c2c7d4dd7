"""pytest settings for every run in the project (the chapters under nbval, and tests/).

A chapter's Jupyter kernel that dies while starting is started again, up to ``KERNEL_STARTS`` times. Two
pytest-xdist workers that start kernels at the same moment can race for a free TCP port (jupyter_client picks the
ports, then the kernel binds them), and the loser dies "before replying to kernel_info": nbval then reports every
cell of that chapter as an error, though nothing in the chapter ran (CI, 2026-11-27: all 49 cells of
book/corelnet.ipynb). A chapter that fails for its own reasons fails after the kernel is up, so a retry hides none.

Once a cell has finished (its reply is in), nbval reads the cell's outputs waiting at most 5 seconds for each; on a
loaded machine a cell that displays figures can take longer to deliver them, and nbval then fails a cell that ran
(2026-11-29: relevancy's Table 4.2 cell, four busy processes on two cores). Each cell waits ``OUTPUT_TIMEOUT`` seconds
instead; a cell that does not finish still fails at nbval's cell timeout.
"""

import functools
import logging
import time

KERNEL_STARTS = 3
OUTPUT_TIMEOUT = 60


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


def wait_longer_for_output(init, seconds=OUTPUT_TIMEOUT):
    """``init`` (nbval's ``IPyNbCell.__init__``), after which the cell waits ``seconds`` (at least) for each output."""

    @functools.wraps(init)
    def init_with_longer_wait(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.output_timeout = max(self.output_timeout, seconds)

    return init_with_longer_wait


try:
    import nbval.kernel
except ImportError:  # the test extra is not installed: no chapter runs under nbval
    pass
else:
    if not hasattr(nbval.kernel.start_new_kernel, "__wrapped__"):
        nbval.kernel.start_new_kernel = retry_start(nbval.kernel.start_new_kernel)
    import nbval.plugin

    if not hasattr(nbval.plugin.IPyNbCell.__init__, "__wrapped__"):
        nbval.plugin.IPyNbCell.__init__ = wait_longer_for_output(nbval.plugin.IPyNbCell.__init__)
