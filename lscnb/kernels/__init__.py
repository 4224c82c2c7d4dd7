"""Performance-critical computations with a reference implementation and faster backends."""

from .cells import compiled_step
from .scan import BACKENDS, linear_scan, scan_parallel, scan_sequential, scan_triton, usable_backends

__all__ = [
    "BACKENDS",
    "compiled_step",
    "linear_scan",
    "scan_parallel",
    "scan_sequential",
    "scan_triton",
    "usable_backends",
]
