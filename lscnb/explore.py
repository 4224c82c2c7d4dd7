"""Explorers: sliders over a plain lscnb figure function, built only where a reader can move them.

``explorer(fn, static=..., name=control, ...)`` draws ``fn(**defaults)`` and, when an interactive frontend is
attached to the kernel (:func:`frontend`), puts sliders above a figure that redraws when they move. A headless
execution (papermill, nbclient, nbval, the book build) creates **no widget at all**, so it never waits on a widget
comm (the nbclient/nbconvert hang on ``interact`` cells, jupyter/nbclient#312, jupyter/nbconvert#2029); it prints
one line saying how to get the sliders instead.

Controls are plain descriptions (:func:`slider`, :func:`choice`): their default values are known without building
any widget.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

ENV_WIDGETS = "LSCNB_WIDGETS"
HINT = (
    "Sliders need a live kernel: open this chapter in Jupyter or on Colab (or set LSCNB_WIDGETS=1); "
    "the figure above is the default view."
)


@dataclass(frozen=True)
class Slider:
    """A slider from ``min`` to ``max`` by ``step`` starting at ``value``; ``log``: a base-10 log slider whose
    ``step`` is in decades. Integers everywhere make an integer slider."""

    value: float
    min: float
    max: float
    step: float
    log: bool = False
    fmt: str | None = None

    @property
    def integer(self) -> bool:
        return not self.log and all(
            isinstance(v, numbers.Integral) for v in (self.value, self.min, self.max, self.step)
        )

    def widget(self, name: str):
        import ipywidgets as widgets

        kw = {"description": name, "continuous_update": False, "style": {"description_width": "initial"}}
        if self.fmt:
            kw["readout_format"] = self.fmt
        if self.log:
            return widgets.FloatLogSlider(
                value=self.value, base=10, min=math.log10(self.min), max=math.log10(self.max), step=self.step, **kw
            )
        cls = widgets.IntSlider if self.integer else widgets.FloatSlider
        return cls(value=self.value, min=self.min, max=self.max, step=self.step, **kw)


@dataclass(frozen=True)
class Choice:
    """A drop-down over ``options`` starting at ``value``."""

    options: tuple
    value: object

    def widget(self, name: str):
        import ipywidgets as widgets

        return widgets.Dropdown(options=list(self.options), value=self.value, description=name)


def _real(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


def slider(value, min, max, step=None, *, log: bool = False, fmt: str | None = None) -> Slider:
    """A :class:`Slider`; ``step`` defaults to 1 for integers, a hundredth of the range otherwise (a tenth of a
    decade for ``log``)."""
    value, lo, hi = _real(value, "value"), _real(min, "min"), _real(max, "max")
    if not lo < hi:
        raise ValueError(f"slider min must be below max, got min={lo!r}, max={hi!r}")
    if not lo <= value <= hi:
        raise ValueError(f"slider value must lie in [min, max] = [{lo}, {hi}], got {value!r}")
    if log and lo <= 0:
        raise ValueError(f"a log slider needs min > 0, got {lo!r}")
    if step is None:
        ints = all(isinstance(v, numbers.Integral) for v in (value, lo, hi))
        step = 0.1 if log else (1 if ints else (hi - lo) / 100)
    if _real(step, "step") <= 0:
        raise ValueError(f"slider step must be positive, got {step!r}")
    return Slider(value, lo, hi, step, log, fmt)


def choice(*options, value=None) -> Choice:
    """A :class:`Choice` among ``options``, starting at ``value`` (default: the first)."""
    if not options:
        raise ValueError("choice needs at least one option")
    value = options[0] if value is None else value
    if value not in options:
        raise ValueError(f"choice value must be one of {list(options)}, got {value!r}")
    return Choice(tuple(options), value)


def _user_ns() -> dict:
    try:
        from IPython import get_ipython
    except ImportError:
        return {}
    shell = get_ipython()
    return getattr(shell, "user_ns", {}) if shell is not None else {}


def _in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (not a terminal IPython or plain Python)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def frontend() -> str | None:
    """Which interactive frontend is attached, or None when the run is (or may be) headless.

    ``LSCNB_WIDGETS=1`` forces widgets on, ``LSCNB_WIDGETS=0`` off. Otherwise, in a kernel: ``colab`` when
    ``google.colab`` is imported; ``jupyter`` when a Jupyter server started the kernel (jupyter_server puts the
    notebook's path in the kernel's ``JPY_SESSION_NAME``; ipykernel copies it to ``__session__``); ``vscode``
    when the VS Code Jupyter extension set ``__vsc_ipynb_file__``. papermill, nbclient, nbval and jupyter-book
    set none of these. A headless run started from inside a Jupyter kernel inherits ``JPY_SESSION_NAME``: such
    runners set ``LSCNB_WIDGETS=0`` (``python -m lscnb reproduce`` and the scripts do).
    """
    env = os.environ.get(ENV_WIDGETS, "").strip().lower()
    if env in ("0", "false", "no", "off"):
        return None
    if env in ("1", "true", "yes", "on"):
        return f"{ENV_WIDGETS}=1"
    if env:
        raise ValueError(f"{ENV_WIDGETS} must be 0 or 1, got {os.environ[ENV_WIDGETS]!r}")
    if not _in_kernel():
        return None
    if "google.colab" in sys.modules:
        return "colab"
    if os.environ.get("JPY_SESSION_NAME"):
        return "jupyter"
    if _user_ns().get("__vsc_ipynb_file__"):
        return "vscode"
    return None


def _image(fig):
    """``fig`` as a PNG display object (it renders under any backend), closing it."""
    import matplotlib.pyplot as plt
    from IPython.display import Image

    from . import plot

    data = plot.png(fig)
    plt.close(fig)
    return Image(data=data, format="png")


def _check(fn: Callable, controls: dict) -> dict:
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if not controls:
        raise ValueError("explorer needs at least one control (name=explore.slider(...) or explore.choice(...))")
    for name, control in controls.items():
        if not isinstance(control, (Slider, Choice)):
            raise TypeError(
                f"control {name!r} must be explore.slider(...) or explore.choice(...), got {type(control).__name__}"
            )
    return {name: control.value for name, control in controls.items()}


def explorer(fn: Callable, *, static: bool = True, **controls):
    """Explore ``fn(**values)`` (a function returning a matplotlib figure) over ``controls``.

    Headless (no :func:`frontend`): draws ``fn`` at the controls' defaults when ``static`` (``static=False``: the
    default view is drawn elsewhere, e.g. by the cell above) and prints :data:`HINT`; no widget is created. With a
    frontend: shows the controls and, below them, the figure at the defaults, redrawn in place (a display
    handle, not an Output widget) when a control moves. Returns None (so a cell may end with the call).
    """
    defaults = _check(fn, controls)
    if frontend() is None:
        if static:
            from IPython.display import display

            display(_image(fn(**defaults)))
        print(HINT)
    else:
        _live(fn, controls, defaults)


def _live(fn: Callable, controls: dict, defaults: dict) -> dict:
    """The controls, and a figure that follows them (``interactive_output`` plumbing on a display handle)."""
    import ipywidgets as widgets
    from IPython.display import DisplayHandle, Markdown, display

    boxes = {name: control.widget(name) for name, control in controls.items()}
    display(widgets.VBox(list(boxes.values())))
    handle = DisplayHandle()
    handle.display(_image(fn(**defaults)))

    def redraw(_change=None):
        values = {name: box.value for name, box in boxes.items()}
        try:
            handle.update(_image(fn(**values)))
        except Exception as err:  # noqa: BLE001 - shown to the reader in place of the figure
            handle.update(Markdown(f"*No figure for {values}: {type(err).__name__}: {err}*"))

    for box in boxes.values():
        box.observe(redraw, names="value")
    return boxes
