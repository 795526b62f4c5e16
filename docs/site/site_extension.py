"""A small Sphinx extension for the site's pages: a meta description on every page, Chinese text
marked ``lang="zh"`` (so the browser picks a CJK font: pitfalls.css names them, and no glyph is
a tofu box), and the footer's line about the site.

The descriptions come from ``page-descriptions.json`` beside the sources, written by the build
(``docs.site.build``): the page's name -> one sentence.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from docs.site import navigation, search_words, sidebar

DESCRIPTIONS = "page-descriptions.json"
# Han characters, CJK punctuation and full-width forms; a run may hold spaces and ASCII
# punctuation between them (a title such as "那些用pytorch踩过的坑" is one run with its Latin word).
CJK = re.compile(
    r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
    r"(?:[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef\w ,.!?:&()-]*"
    r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef])?"
)
TAG = re.compile(r"(<[^>]*>)")
NO_WRAP = ("script", "style", "title", "textarea")


def mark_chinese(body: str) -> str:
    """Every run of Chinese text outside tags wrapped in ``<span lang="zh">``."""
    if not CJK.search(body):  # most pages: nothing to mark
        return body
    out, skip = [], None
    for part in TAG.split(body):
        if part.startswith("<"):
            name = re.match(r"</?\s*([a-zA-Z0-9]+)", part)
            if name and name.group(1).lower() in NO_WRAP:
                skip = None if part.startswith("</") else name.group(1).lower()
            out.append(part)
        elif skip or not CJK.search(part):
            out.append(part)
        else:
            out.append(CJK.sub(lambda m: f'<span lang="zh">{m.group(0)}</span>', part))
    return "".join(out)


def _page_context(app, pagename, templatename, context, doctree):
    descriptions = getattr(app, "_pitfalls_descriptions", None)
    if descriptions is None:
        path = Path(app.srcdir) / DESCRIPTIONS
        descriptions = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        app._pitfalls_descriptions = descriptions
    text = descriptions.get(pagename)
    if text:
        context["metatags"] = (
            context.get("metatags", "") + f'\n    <meta name="description" content="{html.escape(text, quote=True)}">'
        )
    context["pitfalls_torch"] = app.config.pitfalls_torch
    context["pitfalls_repo"] = app.config.pitfalls_repo
    if "body" in context:
        context["body"] = mark_chinese(context["body"])
    if "toc" in context:
        context["toc"] = mark_chinese(context["toc"])


def _default_settings_once() -> None:
    """MyST builds a fresh document with docutils' default settings for every Markdown snippet it
    renders (``setup_render`` evaluates ``options.get("document", make_document())`` eagerly, and
    throws it away when Sphinx passes its own document). The zh build renders each of its ~13,000
    translated paragraphs that way, and building those settings (an optparse parser each time) was
    a third of its time. The defaults are the same every time: build them once, hand out copies."""
    import copy
    import functools

    from myst_parser.mdit_to_docutils import base

    if getattr(base.get_default_settings, "_pitfalls_cached", False):
        return
    once = functools.lru_cache(maxsize=None)(base.get_default_settings)

    def get_default_settings(*components):
        return copy.deepcopy(once(*components))

    get_default_settings._pitfalls_cached = True
    base.get_default_settings = get_default_settings


def setup(app):
    _default_settings_once()
    _parser_reused_once()
    navigation.install()  # the sidebar tree without copying every section of every page
    sidebar.install()  # furo's sidebar markup without parsing the tree again on every page
    search_words.install()  # each word of the search index stemmed once per build, not once per page
    app.add_config_value("pitfalls_torch", "", "html")  # the torch release that printed the outputs
    app.add_config_value("pitfalls_repo", "", "html")  # https://github.com/OWNER/NAME, when the workflow says
    app.connect("html-page-context", _page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


class _Lent:
    """A MarkdownIt parser lent out for one ``render``, then handed back to its pool."""

    def __init__(self, md, pool: list):
        self._md, self._pool = md, pool

    def __getattr__(self, name):
        return getattr(self._md, name)

    def render(self, src, env=None):
        try:
            return self._md.render(src, env)
        finally:
            self._pool.append(self._md)


def _parser_reused_once() -> None:
    """MyST also builds a whole MarkdownIt parser, every plugin loaded anew, for each snippet it
    renders: the zh build's ~13,000 translated paragraphs spent a fifth of their time there. The
    parser holds no state between renders (``setup_render`` resets the renderer's), so one per
    configuration is kept and lent out; a parse nested inside a render gets a parser of its own."""
    from myst_parser.parsers import sphinx_ as myst_sphinx

    if getattr(myst_sphinx.create_md_parser, "_pitfalls_pooled", False):
        return
    build = myst_sphinx.create_md_parser
    pools: dict = {}  # (id(config), renderer class) -> (config, idle parsers)

    def create_md_parser(config, renderer):
        key = (id(config), renderer)
        if key not in pools or pools[key][0] is not config:
            pools[key] = (config, [])
        idle = pools[key][1]
        return _Lent(idle.pop() if idle else build(config, renderer), idle)

    create_md_parser._pitfalls_pooled = True
    myst_sphinx.create_md_parser = create_md_parser
