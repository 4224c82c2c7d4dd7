"""lscnb: the helper package of the executable book on exploding and vanishing gradients in RNNs.

Submodules are imported lazily so that ``import lscnb`` stays cheap:
``config`` (profiles), ``results`` (stored results with provenance), ``sweep`` (runs keyed by config),
``jacobian`` (transition derivatives and spectra), ``models``, ``data``, ``theory``, ``train``, ``plot``
and ``experiments`` (one module per chapter).
"""

from importlib import import_module

__version__ = "0.1.0"
__all__ = [
    "config",
    "results",
    "sweep",
    "jacobian",
    "models",
    "data",
    "theory",
    "train",
    "plot",
    "experiments",
    "kernels",
    "checks",
]


def __getattr__(name):
    if name in __all__:
        return import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'lscnb' has no attribute {name!r}")
