"""The Sphinx side of the Chinese edition (loaded by conf.py in both editions).

In both: a language switcher at the top of every page, to the same page in the other edition,
and ``<link rel="alternate" hreflang>`` in the head.

In the zh build (``language = "zh_CN"``):
- before Sphinx's ``Locale`` transform (priority 20), each page gets, besides its own catalogue
  (the .mo compiled from ``docs/locale``), the generated text's translations from ``site.po``
  (templates filled with the page's data) and the messages translated in another page's catalogue
  (a case's title in a topic table);
- after it, every translatable paragraph left in English is classified: *stale* when its English
  changed after it was translated (its entry is fuzzy, or the page's catalogue holds
  translations but not this paragraph), else *not yet translated*. A page with stale paragraphs
  gets a banner, each stale paragraph the class ``zh-stale``; the build writes
  ``translation-status.json`` (what ``docs.site.zh_build`` prints) beside the pages;
- ``<html lang="zh-CN">`` and the CJK font stack (static/zh.css).
"""

from __future__ import annotations

import gettext
import html
import json
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.util.i18n import docname_to_domain
from sphinx.util.nodes import extract_messages

from docs.site import translated
from docs.site.i18n import (
    SITE,
    Catalogues,
    Reuse,
    build_catalogues,
    fill,
    needs_translation,
    raw_messages,
    template,
    translate_raw,
)

STATUS = "translation-status.json"
BANNER = (
    '<div class="zh-stale-banner" role="note"><p><strong>英文原文在此译文之后有改动</strong>：本页有 {n} 段译文已过期，'
    "这些段落暂以英文原文显示（左侧标有色条），译文更新前请以英文为准。</p>"
    '<p lang="en">The English page changed after this translation: {n} paragraph(s) are shown in English '
    "until their translation is updated.</p></div>"
)


def is_zh(config) -> bool:
    return (config.language or "").startswith("zh")


class _Prepared(gettext.NullTranslations):
    """A page's extra translations, found before Sphinx's Locale transform reads them (a
    subclass, so Sphinx keeps it and adds the page's .mo behind it)."""

    def __init__(self, strings: dict[str, str]):
        super().__init__()
        self._catalog = strings


class _Page:
    """The translations a page can use, and how an English message left on it is classified."""

    def __init__(self, env, docname: str):
        cats: Catalogues = env._pitfalls_catalogues
        self.own = cats.translated.get(docname, {})
        self.site = cats.translated.get(SITE, {})
        self.anywhere = env._pitfalls_everywhere
        self.fuzzy = cats.fuzzy.get(docname, set()) | cats.fuzzy.get(SITE, set())
        self.empty = env._pitfalls_empty
        self.has_translations = bool(self.own)

    def find(self, msg: str) -> str | None:
        if msg in self.own:
            return self.own[msg]
        tmpl, args = template(msg)
        shape = self.own.get(tmpl) or self.site.get(tmpl)
        return fill(shape, args) if shape else self.anywhere.find(msg)

    def is_stale(self, msg: str) -> bool:
        """Its English changed after it was translated: fuzzy, or in no catalogue of a page that has translations."""
        tmpl = template(msg)[0]
        if msg in self.fuzzy or tmpl in self.fuzzy:
            return True
        if tmpl in self.empty.known or self.empty.find(msg) is not None:
            return False
        return self.has_translations


class PrepareTranslations(SphinxTransform):
    """The page's messages that its own catalogue lacks, from site.po's templates or another page's catalogue."""

    default_priority = 19  # Locale is 20

    def apply(self, **kwargs) -> None:
        if not is_zh(self.config):
            return
        from sphinx import locale

        docname = self.env.current_document.docname
        page = _Page(self.env, docname)
        strings = {}
        for _node, msg in extract_messages(self.document):
            if msg not in page.own and (found := page.find(msg)):
                strings[msg] = found
        domain = docname_to_domain(docname, self.config.gettext_compact)
        locale.translators["general", domain] = _Prepared(strings)


class MarkStale(SphinxTransform):
    """Every paragraph left in English on a zh page: stale (banner, class) or not yet translated;
    and the text of raw HTML blocks (tables the generators write as HTML) translated the same way."""

    default_priority = 21

    def apply(self, **kwargs) -> None:
        if not is_zh(self.config):
            return
        docname = self.env.current_document.docname
        page = _Page(self.env, docname)
        counts = {"stale": [], "untranslated": 0, "translated": 0}
        for node, msg in list(extract_messages(self.document)):
            if not needs_translation(msg) or not _is_prose(node):
                continue
            # a toctree's caption is translated without the mark: what counts is that its translation exists
            if node.get("translated") or (isinstance(node, addnodes.toctree) and page.find(msg) is not None):
                counts["translated"] += 1
            elif page.is_stale(msg):
                node["classes"].append("zh-stale")
                counts["stale"].append(msg)
            else:
                counts["untranslated"] += 1
        for node in list(self.document.findall(nodes.raw)):
            if "html" in node.get("format", "").split() and _is_prose(node):
                self._raw(node, page, counts)
        self.env._pitfalls_zh = getattr(self.env, "_pitfalls_zh", {})
        self.env._pitfalls_zh[docname] = counts
        if counts["stale"]:
            self._banner(len(counts["stale"]))

    def _raw(self, node, page: _Page, counts: dict) -> None:
        def lookup(msg: str) -> str | None:
            found = page.find(msg)
            if found is not None:
                counts["translated"] += 1
                return html.escape(found, quote=False)
            if page.is_stale(msg):
                counts["stale"].append(msg)
                return f'<span class="zh-stale">{html.escape(msg, quote=False)}</span>'
            counts["untranslated"] += 1
            return None

        text = translate_raw(node.astext(), lookup)
        node.replace_self(nodes.raw("", text, format=node["format"]))

    def _banner(self, n: int) -> None:
        banner = nodes.raw("", BANNER.format(n=n), format="html")
        title = next(iter(self.document.findall(nodes.title)), None)
        if title is not None:
            title.parent.insert(title.parent.index(title) + 1, banner)
        else:
            self.document.insert(0, banner)


STAMP = 'class="pitfalls-stamp"'


def _is_prose(node) -> bool:
    """Text a generator or an author wrote, not a notebook's metadata or a cell's output (outputs
    are never translated: the zh page shows the English build's, as they were printed). The
    stamp under an output (``docs.site.stamp``: which torch printed it) is the site's own words."""
    if isinstance(node, nodes.meta):
        return False
    if isinstance(node, nodes.raw) and node.astext().startswith(f"<p {STAMP}>"):
        return True
    for parent in _ancestors(node):
        # the notebook's metadata, a field list before the title: Sphinx takes it off the page
        if isinstance(parent, nodes.docinfo) or (
            isinstance(parent, nodes.field_list) and isinstance(parent.parent, nodes.document)
        ):
            return False
        if isinstance(parent, nodes.container) and "cell_output" in parent.get("classes", []):
            return False
    return True


def _ancestors(node):
    while node is not None:
        yield node
        node = node.parent


def _extract_raw(app, doctree, docname) -> None:
    """For the gettext builder (``docs.site.i18n update``): the text of raw HTML blocks is a message too."""
    if app.builder.name != "gettext":
        return
    from sphinx.builders.gettext import MsgOrigin

    catalog = app.builder.catalogs[docname_to_domain(docname, app.config.gettext_compact)]
    for node in doctree.findall(nodes.raw):
        if "html" in node.get("format", "").split() and _is_prose(node):
            for _start, _end, msg in raw_messages(node.astext()):
                catalog.add(msg, MsgOrigin(node.source or app.env.doc2path(docname), node.line or 0))


def _compile(app, config) -> None:
    if not is_zh(config):
        return
    source = Path(config.pitfalls_locale_source)
    if not (source / "zh_CN").is_dir():
        from sphinx.errors import ConfigError

        raise ConfigError(f"{source}: no zh_CN catalogues (python -m docs.site.i18n update writes them)")
    app._pitfalls_catalogues = build_catalogues(Path(config.locale_dirs[0]), source)
    app._pitfalls_everywhere = Reuse(app._pitfalls_catalogues.everywhere())
    # written down, not translated yet (a case's title, also as it stands in a table or a link)
    app._pitfalls_empty = Reuse({m: m for m in set().union(*app._pitfalls_catalogues.empty.values())})


def _to_env(app, env, docnames) -> None:
    """The compiled catalogues where the transforms find them (parallel readers get a copy of env)."""
    if is_zh(app.config):
        env._pitfalls_catalogues = app._pitfalls_catalogues
        env._pitfalls_everywhere = app._pitfalls_everywhere
        env._pitfalls_empty = app._pitfalls_empty


def _purge(app, env, docname) -> None:
    getattr(env, "_pitfalls_zh", {}).pop(docname, None)


def _merge(app, env, docnames, other) -> None:
    env._pitfalls_zh = getattr(env, "_pitfalls_zh", {})
    env._pitfalls_zh.update({d: v for d, v in getattr(other, "_pitfalls_zh", {}).items() if d in docnames})


def _switcher(app, pagename, templatename, context, doctree) -> None:
    """A link to the same page in the other edition (the zh site is the folder zh/ of the English
    one), beside the link to the project's repository where the build names it."""
    up = "../" * pagename.count("/")
    if is_zh(app.config):
        context["language"] = "zh-CN"  # furo writes <html lang="{{ language }}">: a BCP 47 tag, not zh_CN
        href, lang, label, title = f"{up}../{pagename}.html", "en", "English", "Read this page in English"
    else:
        href, lang, label, title = f"{up}zh/{pagename}.html", "zh-CN", "中文", "本页的中文版"
    repo = ""
    if app.config.pitfalls_repo:  # the repository the workflow names; a local build names none
        repo_title = "本项目的代码仓库" if is_zh(app.config) else "The project's repository"
        repo = f'<a class="repo-link" href="{html.escape(app.config.pitfalls_repo)}" title="{repo_title}">GitHub</a> '
    link = (
        f'<div class="lang-switch">{repo}<a href="{href}" hreflang="{lang}" lang="{lang}" title="{title}" '
        f'data-lang-switch="{lang}">{label}</a></div>'
    )
    if "body" in context:
        context["body"] = link + context["body"]
    context["metatags"] = context.get("metatags", "") + f'\n    <link rel="alternate" hreflang="{lang}" href="{href}">'


def _status(app, exception) -> None:
    if exception is not None or not is_zh(app.config) or app.builder.name != "html":
        return
    pages = getattr(app.env, "_pitfalls_zh", {})
    status = {
        "pages": len(app.env.found_docs),
        "translated": sum(p["translated"] for p in pages.values()),
        "stale": {d: len(p["stale"]) for d, p in sorted(pages.items()) if p["stale"]},
        "untranslated": {d: p["untranslated"] for d, p in sorted(pages.items()) if p["untranslated"]},
        "stale_messages": {d: p["stale"] for d, p in sorted(pages.items()) if p["stale"]},
    }
    Path(app.outdir, STATUS).write_text(json.dumps(status, ensure_ascii=False, indent=1), encoding="utf-8")


def _search_language():
    """Sphinx 9.0's Chinese search: jieba splits the pages, and English words are stemmed by the
    English stemmer, whose JavaScript defines ``EnglishStemmer``; but language_data.js is written as
    ``window.Stemmer = ChineseStemmer`` (from ``language_name``), which is undefined, so every search
    of a zh page stops with a ReferenceError. The same class, naming the stemmer its file defines.

    It also splits each distinct text once per build: jieba's segmentation depends on the text
    alone, and the ~44,000 texts of the zh pages (labels, table cells, outputs shown on every case
    page) repeat."""
    from sphinx.search.zh import SearchChinese

    class ChineseSearch(SearchChinese):
        language_name = "English"  # only used to name the JavaScript stemmer (and in a debug repr)

        def __init__(self, options):
            super().__init__(options)
            self._split = {}  # text -> its words; the Latin ones are in latin_terms since the first split

        def split(self, input: str) -> list[str]:
            if input not in self._split:
                self._split[input] = super().split(input)
            return list(self._split[input])

    return ChineseSearch


def setup(app):
    translated.install()  # each distinct translation parsed once per build, its nodes the page's
    app.add_search_language(_search_language())
    app.add_config_value("pitfalls_locale_source", "", "env")  # docs/locale: the .po files the zh build compiles
    app.add_transform(PrepareTranslations)
    app.add_transform(MarkStale)
    app.add_css_file("zh.css")
    app.add_js_file("lang-switch.js")
    app.connect("config-inited", _compile)
    app.connect("env-before-read-docs", _to_env)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("html-page-context", _switcher)
    app.connect("build-finished", _status)
    app.connect("doctree-resolved", _extract_raw)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
