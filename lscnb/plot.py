"""The book's figure style, a few plot kinds shared by chapters, and the provenance caption under each figure."""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "figure.figsize": (7.0, 3.6),
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "legend.frameon": False,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "lines.linewidth": 1.6,
    "image.cmap": "viridis",
    "axes.prop_cycle": mpl.cycler(
        color=["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"]
    ),
}
PAPER = dict(color="k", linestyle="--", linewidth=1.2)
"""Line style for the paper's reported numbers when drawn beside ours."""
THEORY = dict(color="k", linestyle=":", linewidth=1.4)
"""Line style for theory curves."""


def use_style() -> None:
    """Apply the book's style to every later figure."""
    mpl.rcParams.update(STYLE)


def figure(ncols: int = 1, nrows: int = 1, *, width: float | None = None, height: float | None = None, **kw):
    """A figure in the book's style, sized by panels."""
    use_style()
    width = width or min(3.4 * ncols, 10.5)
    height = height or 3.2 * nrows
    return plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False, constrained_layout=True, **kw)


def canvas(width: float, height: float):
    """A bare figure in the book's style, for layouts that ``figure``'s grid of panels cannot make (sub-figures)."""
    use_style()
    return plt.figure(figsize=(width, height), constrained_layout=True)


def png(fig) -> bytes:
    """The figure rendered to PNG bytes (whatever matplotlib backend is active)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight")
    return buf.getvalue()


def show(fig, *collected, data: str = "", note: str = "") -> None:
    """Display ``fig`` (as PNG, so it renders under any backend, in HTML and on nbval) with, under it, the
    provenance of every collection of results that made it."""
    from IPython.display import Image, Markdown, display

    display(Image(data=png(fig), format="png"))
    plt.close(fig)
    lines = captions(collected, data)
    if note:
        lines.append(f"*{note}*")
    if lines:
        display(Markdown("\n\n".join(lines)))


def captions(collected, data: str = "") -> list[str]:
    """The provenance lines under a figure or table, one per collection of results that made it
    (:meth:`lscnb.sweep.Collected.caption`). Where there are several, each line names its figure, and a last line
    warns when they come at different scales (a quick figure beside a committed full one, in a replay)."""
    collected = list({id(c): c for c in collected}.values())
    if len(collected) < 2:
        return [c.caption(data=data) for c in collected]
    lines = [f"**Runs of figure `{c.figure}`:** {c.caption(data=data)}" for c in collected]
    if len({c.scale for c in collected}) > 1:
        names = lambda scale: ", ".join(f"`{c.figure}`" for c in collected if c.scale == scale)  # noqa: E731
        lines.append(
            f"*⚠ **Mixed scales:** {names('full')} at paper scale, {names('quick')} at quick (toy) scale: a "
            "comparison across them compares training budgets as well as models.*"
        )
    return lines


def grouped_bars(ax, groups, series, value, *, label=str, color=None, width: float = 0.8) -> None:
    """One bar per (group, series): the series side by side, centred on each group's tick (0, 1, ...), ``width``
    shared among them. ``value(group, s)`` is a bar's height (nan: none); ``label(s)`` and ``color(s)`` (default the
    series' place in the colour cycle, ``C0``, ``C1``, ...) its legend entry and colour."""
    w = width / len(series)
    for i, s in enumerate(series):
        x = np.arange(len(groups)) + (i - (len(series) - 1) / 2) * w
        ax.bar(x, [value(g, s) for g in groups], w, label=label(s), color=color(s) if color else f"C{i}")


def unit_circle(ax, radius: float = 1.0, **kw) -> None:
    t = np.linspace(0, 2 * np.pi, 400)
    ax.plot(radius * np.cos(t), radius * np.sin(t), **{"color": "k", "linewidth": 0.8, **kw})
    ax.set_aspect("equal")


def eigenvalues(ax, eigs, *, radius: float | None = 1.0, label: str | None = None, **kw) -> None:
    """Scatter complex eigenvalues with a reference circle."""
    eigs = np.asarray(eigs)
    ax.scatter(eigs.real, eigs.imag, s=kw.pop("s", 4), alpha=kw.pop("alpha", 0.7), label=label, **kw)
    if radius is not None:
        unit_circle(ax, radius)
    ax.set_xlabel("Re λ")
    ax.set_ylabel("Im λ")


def heatmap(
    ax, values, *, x=None, y=None, xlabel: str = "", ylabel: str = "", cbar_label: str = "", log10: bool = False, **kw
):
    """An image of ``values[y, x]`` with the origin at the bottom left and a colour bar."""
    values = np.asarray(values, dtype=float)
    if log10:
        values = np.log10(np.clip(values, np.finfo(float).tiny, None))
    extent = None
    if x is not None and y is not None:
        extent = [x[0], x[-1], y[0], y[-1]]
    im = ax.imshow(values, origin="lower", aspect="auto", extent=extent, **kw)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(False)
    bar = ax.figure.colorbar(im, ax=ax)
    bar.set_label(cbar_label)
    return im


def table(rows: list[dict], columns: list[str] | None = None, floatfmt: str = "{:.4g}") -> str:
    """A Markdown table of ``rows`` (dicts), for paper-vs-ours comparisons; the columns are every key of the rows, in
    the order they first appear (a row without one leaves its cell blank)."""
    if not rows:
        return ""
    columns = columns or list(dict.fromkeys(k for r in rows for k in r))

    def cell(v) -> str:  # a pipe inside a cell (|λ_k|, |H|) would end it: escape it; a newline would end the row
        text = floatfmt.format(v) if isinstance(v, float) else str(v)
        return text.replace("|", "\\|").replace("\n", " ")

    head = "| " + " | ".join(map(cell, columns)) + " |\n|" + "---|" * len(columns) + "\n"
    return head + "".join("| " + " | ".join(cell(r.get(c, "")) for c in columns) + " |\n" for r in rows)


def show_table(rows: list[dict], *collected, columns: list[str] | None = None, data: str = "", title: str = ""):
    """Display a Markdown table with its provenance under it."""
    from IPython.display import Markdown, display

    text = (f"**{title}**\n\n" if title else "") + table(rows, columns)
    text += "\n" + "\n\n".join(captions(collected, data))
    display(Markdown(text))


def checked(*claims: str) -> None:
    """One line under a chapter's collapsed checks cell, saying what its asserts (which ran above it) checked."""
    from IPython.display import Markdown, display

    if not claims or not all(isinstance(c, str) and c.strip() for c in claims):
        raise ValueError("claims must be one or more non-empty strings")
    display(Markdown("✓ **Checked:** " + "; ".join(c.strip().rstrip(".") for c in claims) + "."))
