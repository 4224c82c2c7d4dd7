"""The book shows the running source beside its equations and ends each chapter with exercises (issue 22).

Every ``{literalinclude}`` in a chapter's Markdown must name a file that exists (relative to ``book/``) and, with
``:pyobject:``, a function, class or ``Class.method`` defined in it; the text of ``:start-at:``/``:end-before:``-style
options must occur in that object, or Sphinx would include nothing. Every chapter listed in ``_toc.yml`` has at least
two such includes and at least three ``{exercise}`` directives, each followed by ``{solution-start} <label>`` and a
``{solution-end}`` (the gated form, so that solution code runs as ordinary cells under nbval).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
NOT_CHAPTERS = {"intro", "status", "performance", "references"}
FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w-]+)\}[ \t]*(?P<arg>[^\n]*)$")
OPTION = re.compile(r"^:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")
TEXT_OPTIONS = ("start-at", "start-after", "end-at", "end-before")


def chapters() -> list[str]:
    toc = (ROOT / "_toc.yml").read_text()
    names = re.findall(r"^\s*-\s*file:\s*book/([\w-]+)\s*$", toc, flags=re.M)
    return [n for n in names if n not in NOT_CHAPTERS]


def directives(notebook: Path) -> list[dict]:
    """The MyST directives of a notebook's Markdown cells, in order: name, argument, options, cell index."""
    out = []
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        lines = source.splitlines()
        for i, line in enumerate(lines):
            m = FENCE.match(line.strip())
            if not m:
                continue
            options = {}
            for follow in lines[i + 1 :]:
                o = OPTION.match(follow.strip())
                if not o:
                    break
                options[o["key"]] = o["value"].strip()
            out.append({"name": m["name"], "arg": m["arg"].strip(), "options": options, "cell": index})
    return out


def find_object(tree: ast.Module, dotted: str) -> ast.AST | None:
    """The function or class ``a`` or the member ``a.b`` (e.g. a method) of a parsed module, or None."""
    body, found = tree.body, None
    for part in dotted.split("."):
        found = next(
            (
                node
                for node in body
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == part
            ),
            None,
        )
        if found is None:
            return None
        body = found.body
    return found


def object_source(path: Path, dotted: str) -> str | None:
    text = path.read_text(encoding="utf-8")
    node = find_object(ast.parse(text), dotted)
    if node is None:
        return None
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return "\n".join(text.splitlines()[first - 1 : node.end_lineno])


NOTEBOOKS = sorted(BOOK.glob("*.ipynb"))
INCLUDES = [
    pytest.param(nb, d, id=f"{nb.stem}-{d['options'].get('pyobject', d['arg'])}-cell{d['cell']}")
    for nb in NOTEBOOKS
    for d in directives(nb)
    if d["name"] == "literalinclude"
]


def test_the_scan_finds_the_book():
    assert NOTEBOOKS and chapters(), "no notebooks or no chapters in _toc.yml"
    assert set(chapters()) <= {nb.stem for nb in NOTEBOOKS}
    assert INCLUDES, "no {literalinclude} anywhere in the book"


@pytest.mark.parametrize(("notebook", "include"), INCLUDES)
def test_literalinclude_names_existing_code(notebook, include):
    path = (BOOK / include["arg"]).resolve()
    assert include["arg"], f"{notebook.name}: a literalinclude without a file"
    assert path.is_file(), f"{notebook.name}: {include['arg']} does not exist (paths are relative to book/)"
    dotted = include["options"].get("pyobject")
    if dotted is None:
        return
    source = object_source(path, dotted)
    assert source is not None, f"{notebook.name}: {include['arg']} defines no function, class or method {dotted!r}"
    for key in TEXT_OPTIONS:
        if key in include["options"]:
            text = include["options"][key]
            assert text and text in source, f"{notebook.name}: :{key}: {text!r} is not in {dotted} of {include['arg']}"


def test_find_object_reaches_methods_and_rejects_missing_names():
    tree = ast.parse("class A:\n    def m(self):\n        pass\n\ndef f():\n    pass\n")
    assert isinstance(find_object(tree, "A"), ast.ClassDef)
    assert isinstance(find_object(tree, "A.m"), ast.FunctionDef)
    assert isinstance(find_object(tree, "f"), ast.FunctionDef)
    assert find_object(tree, "A.x") is None and find_object(tree, "g") is None and find_object(tree, "f.m") is None


def test_directives_parses_fences_arguments_and_options(tmp_path):
    cell = "```{exercise}\n:label: ex-a\nText\n```\n\n:::{solution-start} ex-a\n:class: dropdown\n:::\n"
    nb = tmp_path / "x.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": cell}]}))
    found = directives(nb)
    assert [(d["name"], d["arg"], d["options"]) for d in found] == [
        ("exercise", "", {"label": "ex-a"}),
        ("solution-start", "ex-a", {"class": "dropdown"}),
    ]


@pytest.mark.parametrize("chapter", chapters())
def test_chapter_shows_code_beside_its_equations(chapter):
    found = [d for d in directives(BOOK / f"{chapter}.ipynb") if d["name"] == "literalinclude"]
    assert len(found) >= 2, f"{chapter}: {len(found)} literalinclude(s), at least 2 expected"


@pytest.mark.parametrize("chapter", chapters())
def test_chapter_ends_with_exercises_and_gated_solutions(chapter):
    found = directives(BOOK / f"{chapter}.ipynb")
    exercises = [(i, d) for i, d in enumerate(found) if d["name"] == "exercise"]
    assert len(exercises) >= 3, f"{chapter}: {len(exercises)} exercise(s), at least 3 expected"
    labels = [d["options"].get("label", "") for _, d in exercises]
    assert all(labels), f"{chapter}: an exercise without a :label:"
    assert len(set(labels)) == len(labels), f"{chapter}: duplicate exercise labels {labels}"
    for (i, _), label in zip(exercises, labels):
        starts = [j for j, d in enumerate(found) if d["name"] == "solution-start" and d["arg"] == label and j > i]
        assert starts, f"{chapter}: exercise {label!r} has no {{solution-start}} {label} after it"
        ends = [j for j, d in enumerate(found) if d["name"] == "solution-end" and j > starts[0]]
        assert ends, f"{chapter}: the solution of {label!r} has no {{solution-end}} after it"
        between = [d for d in found[starts[0] + 1 : ends[0]] if d["name"] in ("solution-start", "exercise")]
        assert not between, f"{chapter}: the solution of {label!r} is not closed before the next directive"


CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


def quoted_lines(notebook: Path) -> list[str]:
    """The inline code spans of a notebook's Markdown that quote a line of code: an assignment with a call."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return [span for span in CODE_SPAN.findall(text) if " = " in span and "(" in span]


def test_the_prose_quotes_lines_the_package_still_has():
    """A line of code that a chapter's prose quotes (``e = torch.tanh(...)``) must occur in lscnb, up to whitespace:
    when the code changes, the prose that walks through it must change too."""
    squash = lambda s: re.sub(r"\s+", " ", s)  # noqa: E731
    package = squash("\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "lscnb").rglob("*.py")))
    quoted = [(nb.name, span) for nb in NOTEBOOKS for span in quoted_lines(nb)]
    assert quoted, "no quoted line of code in the book's prose"
    stale = [(name, span) for name, span in quoted if squash(span) not in package]
    assert not stale, f"the prose quotes code that lscnb no longer has: {stale}"


def test_quoted_lines_are_assignments_with_calls(tmp_path):
    cell = "The line `x = f(y)` runs; `s_t` and `a = 1` do not count; ```z = g(1)``` neither."
    nb = tmp_path / "x.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": cell}]}))
    assert quoted_lines(nb) == ["x = f(y)"]
