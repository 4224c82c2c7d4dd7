"""The built HTML book as a reader's browser sees it: every page opened in headless Chromium, offline.

Fails on a missing image, a failed or external resource load, raw TeX or raw Markdown left unrendered (a table
left as a paragraph of pipes, ``**``, a heading's ``#``), a JavaScript error, or a chapter page without figures.
Screenshots of every page go to ``_build/screenshots/``. Skipped, saying why, when
the book has not been built (``scripts/build-book.sh``) or Chromium/Playwright are absent.
"""

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = os.environ.get("LSCNB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def _pages():
    if not (HTML / "index.html").exists():
        return []
    skip = {"genindex.html", "search.html", "index.html"}
    return sorted(
        p.relative_to(HTML).as_posix()
        for p in HTML.rglob("*.html")
        if p.name not in skip and "_static" not in p.parts and "_sources" not in p.parts
    )


def _chapter_pages():
    """HTML pages of the chapters (notebooks named by an ``lscnb.experiments`` module), which must show figures."""
    from lscnb.experiments import chapters

    return {str(Path(nb).with_suffix(".html")) for nb in chapters().values()}


def _missing(what: str) -> None:
    """Skip on a reader's machine; in CI (``CI`` set, as .ci/run is run) a browser check that cannot run fails."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser check, but {what}")
    pytest.skip(what)


@pytest.fixture(scope="module")
def browser():
    if not (HTML / "index.html").exists():
        _missing("the book is not built: run scripts/build-book.sh first")
    if CHROMIUM is None:
        _missing("Chromium is not installed (Debian: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
        yield b, f"http://127.0.0.1:{server.server_address[1]}"
        b.close()
    server.shutdown()


RAW_MARKDOWN_JS = r"""() => Array.from(document.querySelectorAll('main p, main li'))
  .filter(e => !e.closest('table, pre'))
  .map(e => { const c = e.cloneNode(true);
              c.querySelectorAll('code, kbd, pre, mjx-container, .math, script').forEach(x => x.remove());
              return c.textContent; })
  .filter(t => /(^|\n)\s*\|?\s*:?-{3,}:?\s*\|/.test(t) || /\*\*\S[^*]*\*\*/.test(t) || /^\s*#{1,6} /.test(t))
  .map(t => t.trim().slice(0, 100))"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_book_was_built_with_pages():
    if not (HTML / "index.html").exists():
        pytest.skip("the book is not built: run scripts/build-book.sh first")
    pages = _pages()
    assert any(p.endswith("intro.html") for p in pages) and any(p.endswith("gradients.html") for p in pages)


@pytest.mark.parametrize("page", _pages() or ["(book not built)"])
def test_page_renders_offline(browser, page):
    b, base = browser
    problems = []
    ctx = b.new_context(viewport={"width": 1280, "height": 900})
    tab = ctx.new_page()

    def block_external(route):
        problems.append(f"external request (the page must work offline): {route.request.url}")
        route.abort()

    tab.route(lambda url: not url.startswith(base), block_external)
    tab.on("pageerror", lambda err: problems.append(f"JavaScript error: {err}"))
    tab.on("console", lambda msg: problems.append(f"console error: {msg.text}") if msg.type == "error" else None)
    tab.on(
        "requestfailed", lambda req: problems.append(f"failed load: {req.url}") if req.url.startswith(base) else None
    )
    tab.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    tab.goto(f"{base}/{page}", wait_until="load")
    tab.evaluate("() => (window.MathJax && MathJax.startup && MathJax.startup.promise) || null")
    tab.wait_for_timeout(300)
    broken = tab.evaluate(
        "() => Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
    )
    problems += [f"image not loaded: {src}" for src in broken]
    text = tab.evaluate("() => document.querySelector('main') ? document.querySelector('main').innerText : ''")
    for raw in ("$$", "\\(", "\\begin{", "\\frac"):
        if raw in text:
            i = text.index(raw)
            problems.append(f"unrendered TeX {raw!r}: ...{text[max(0, i - 60) : i + 60]!r}...")
    # Markdown that did not render: a table left as a paragraph (its |---| row), **bold** or a heading's #, in the
    # text of paragraphs and list items outside tables, code and math
    raw_md = tab.evaluate(RAW_MARKDOWN_JS)
    problems += [f"raw Markdown in the HTML: {t!r}" for t in raw_md]
    if page in _chapter_pages() and tab.locator(".cell_output img").count() == 0:
        problems.append("a chapter page without a figure")
    SHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SHOTS / (page.replace("/", "_").replace(".html", ".png"))), full_page=True)
    ctx.close()
    problems = [p for p in problems if "favicon" not in p]
    assert not problems, "\n".join(problems)
