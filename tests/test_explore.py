"""lscnb.explore: frontend detection, no widget when headless, live controls, and the chapters' explorer cells."""

import importlib
import inspect
import json
import sys
import types
from pathlib import Path

import ipywidgets
import matplotlib.pyplot as plt
import pytest

from lscnb import explore

BOOK = Path(__file__).resolve().parent.parent / "book"


@pytest.fixture
def bare(monkeypatch):
    """No frontend variable, no Colab, a kernel with an empty namespace."""
    for var in (explore.ENV_WIDGETS, "JPY_SESSION_NAME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    monkeypatch.setattr(explore, "_in_kernel", lambda: True)
    monkeypatch.setattr(explore, "_user_ns", dict)
    return monkeypatch


@pytest.fixture(autouse=True)
def no_open_figures():
    """Start each test with no open figure: another test on the same pytest-xdist worker may have left one, and the
    tests here check that the explorer closes every figure it draws (conftest closes them after each test)."""
    plt.close("all")


@pytest.fixture
def no_widgets(monkeypatch):
    """Fail the test if any ipywidgets.Widget is constructed (it would open a comm)."""

    def refuse(self, *args, **kwargs):
        raise AssertionError(f"a widget was created: {type(self).__name__}")

    monkeypatch.setattr(ipywidgets.Widget, "__init__", refuse)


def _figure_fn(calls):
    def fn(a=0.0, b=1, kind="x"):
        calls.append({"a": a, "b": b, "kind": kind})
        fig, ax = plt.subplots(figsize=(1, 1))
        ax.plot([0, 1], [a, b])
        return fig

    return fn


CONTROLS = {"a": explore.slider(0.5, 0.0, 1.0, 0.1), "b": explore.slider(2, 1, 5), "kind": explore.choice("x", "y")}


def test_headless_by_default(bare):
    assert explore.frontend() is None


def test_jupyter_server_kernel(bare):
    bare.setenv("JPY_SESSION_NAME", "/home/reader/book/lsc.ipynb")
    assert explore.frontend() == "jupyter"


def test_colab(bare):
    bare.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    assert explore.frontend() == "colab"


def test_vscode(bare):
    bare.setattr(explore, "_user_ns", lambda: {"__vsc_ipynb_file__": "/w/book/lsc.ipynb"})
    assert explore.frontend() == "vscode"


def test_not_a_kernel_is_headless_even_with_session_variable(bare):
    bare.setenv("JPY_SESSION_NAME", "x.ipynb")  # a subprocess of a Jupyter kernel inherits it
    bare.setattr(explore, "_in_kernel", lambda: False)
    assert explore.frontend() is None


@pytest.mark.parametrize("value", ["0", "false", "off"])
def test_env_forces_widgets_off(bare, value):
    bare.setenv("JPY_SESSION_NAME", "x.ipynb")
    bare.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    bare.setenv(explore.ENV_WIDGETS, value)
    assert explore.frontend() is None


def test_env_forces_widgets_on(bare):
    bare.setattr(explore, "_in_kernel", lambda: False)
    bare.setenv(explore.ENV_WIDGETS, "1")
    assert explore.frontend() == "LSCNB_WIDGETS=1"


def test_env_bad_value(bare):
    bare.setenv(explore.ENV_WIDGETS, "maybe")
    with pytest.raises(ValueError, match="LSCNB_WIDGETS"):
        explore.frontend()


def test_real_process_without_kernel_is_headless(monkeypatch):
    monkeypatch.delenv(explore.ENV_WIDGETS, raising=False)
    monkeypatch.setenv("JPY_SESSION_NAME", "x.ipynb")
    assert explore.frontend() is None  # pytest runs no kernel


@pytest.mark.parametrize("static", [True, False])
def test_headless_creates_no_widget(bare, no_widgets, capsys, static):
    calls = []
    assert explore.explorer(_figure_fn(calls), static=static, **CONTROLS) is None
    assert calls == ([{"a": 0.5, "b": 2, "kind": "x"}] if static else [])
    out = capsys.readouterr().out
    assert explore.HINT in out and out.count("\n") == (2 if static else 1)  # the image's repr, then the hint
    assert not plt.get_fignums()


def test_live_controls_redraw(bare, capsys):
    bare.setenv(explore.ENV_WIDGETS, "1")
    calls = []
    fn = _figure_fn(calls)
    boxes = explore._live(fn, CONTROLS, {k: c.value for k, c in CONTROLS.items()})
    assert type(boxes["a"]) is ipywidgets.FloatSlider and type(boxes["b"]) is ipywidgets.IntSlider
    assert type(boxes["kind"]) is ipywidgets.Dropdown and not boxes["a"].continuous_update
    boxes["a"].value = 0.8
    boxes["kind"].value = "y"
    assert calls == [{"a": 0.5, "b": 2, "kind": "x"}, {"a": 0.8, "b": 2, "kind": "x"}, {"a": 0.8, "b": 2, "kind": "y"}]
    assert not plt.get_fignums()
    assert explore.explorer(fn, **CONTROLS) is None  # with LSCNB_WIDGETS=1 it builds them too


def test_live_error_shown_in_place(bare, monkeypatch):
    from IPython.display import DisplayHandle, Markdown

    shown = []
    monkeypatch.setattr(DisplayHandle, "update", lambda self, obj, **kw: shown.append(obj))
    calls = []
    draw = _figure_fn(calls)

    def fn(a=0.0):
        if a > 0.7:
            raise RuntimeError("boom")
        return draw(a=a)

    boxes = explore._live(fn, {"a": CONTROLS["a"]}, {"a": 0.5})
    boxes["a"].value = 0.6
    boxes["a"].value = 0.8
    assert [type(o).__name__ for o in shown] == ["Image", "Markdown"]
    assert "RuntimeError: boom" in shown[1].data and isinstance(shown[1], Markdown)


def test_log_slider():
    box = explore.slider(0.05, 0.001, 1.0, 0.1, log=True).widget("alpha")
    assert type(box) is ipywidgets.FloatLogSlider and (box.min, box.max, box.value) == (-3.0, 0.0, 0.05)


@pytest.mark.parametrize(
    "args,kw,match",
    [
        ((2.0, 0.0, 1.0), {}, "value"),
        ((0.5, 1.0, 0.0), {}, "min"),
        ((0.5, 0.0, 1.0, 0.0), {}, "step"),
        ((0.5, 0.0, 1.0), {"log": True}, "log"),
        (("a", 0, 1), {}, "value"),
        ((float("nan"), 0, 1), {}, "value"),
    ],
)
def test_slider_checks(args, kw, match):
    with pytest.raises(ValueError, match=match):
        explore.slider(*args, **kw)


def test_choice_checks():
    assert explore.choice("a", "b").value == "a" and explore.choice("a", "b", value="b").value == "b"
    with pytest.raises(ValueError, match="option"):
        explore.choice()
    with pytest.raises(ValueError, match="value"):
        explore.choice("a", value="c")


def test_explorer_checks(bare):
    with pytest.raises(TypeError, match="fn"):
        explore.explorer(3, a=CONTROLS["a"])
    with pytest.raises(ValueError, match="control"):
        explore.explorer(print)
    with pytest.raises(TypeError, match="'a'"):
        explore.explorer(print, a=ipywidgets)


def _explorer_cells():
    for path in sorted(BOOK.glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        for cell in cells:
            src = "".join(cell["source"])
            if cell["cell_type"] == "code" and "explore.explorer(" in src:
                yield path.stem, src


def test_no_chapter_builds_widgets_directly():
    for path in sorted(BOOK.glob("*.ipynb")):
        text = path.read_text()
        assert "ipywidgets" not in text and "widgets.interact" not in text, path.name


@pytest.mark.parametrize("chapter,source", list(_explorer_cells()))
def test_chapter_explorer_cell(chapter, source, monkeypatch):
    """Each explorer cell names controls that its figure function takes, and uses the default view drawn above."""
    seen = []
    monkeypatch.setattr(explore, "explorer", lambda fn, **kw: seen.append((fn, kw)))
    exec(source, {"ex": importlib.import_module(f"lscnb.experiments.{chapter}")})  # noqa: S102 - the book's own cell
    ((fn, kw),) = seen
    params = inspect.signature(fn).parameters
    assert kw.pop("static") is False
    assert kw and set(kw) <= set(params), (chapter, set(kw) - set(params))
    for control in kw.values():
        assert isinstance(control, (explore.Slider, explore.Choice))
