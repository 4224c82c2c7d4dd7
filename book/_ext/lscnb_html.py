"""Small fixes to the HTML that Jupyter Book 1.x produces, so that pages load without JavaScript errors."""


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    """sphinx-thebe and sphinx-togglebutton register their inline configuration scripts once per read pass (the
    second copy with filename ``''`` instead of ``None``); a second ``const`` declaration throws. Keep the first
    copy of every script with the same file and attributes."""
    files = context.get("script_files")
    if not files:
        return
    seen, unique = set(), []
    for js in files:
        attrs = getattr(js, "attributes", {}) or {}
        key = (getattr(js, "filename", None) or "", tuple(sorted((k, str(v)) for k, v in attrs.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    files[:] = unique


def setup(app):
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
