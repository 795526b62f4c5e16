"""Furo's sidebar markup, made from Sphinx's toctree HTML in one pass over its tags.

Furo turns the tree of pages into a collapsible sidebar (``furo.navigation.get_navigation_tree``):
a checkbox and a label after the link of every entry with children, ``has-children`` on it, the
checkbox ticked on the branch of the current page, and ``current-page`` on the last entry of that
branch. It does so by parsing the whole tree with BeautifulSoup and writing it out again, on every
page: with ~200 pages of ~200 entries, a quarter of an edition's build. ``navigation_tree`` makes
the same tree (tests/docs/test_sidebar.py compares the parsed results on the site's own tree) by
inserting those few tags into the text as it is. ``install`` puts it in furo's place, only for the
furo release it was read against.

The tree furo starts from is Sphinx's, resolved anew for every page although it differs from page
to page only in its links (relative to the page's folder) and in the ``current`` marks on the
branch that leads to the page. ``install`` also makes Sphinx resolve it once per folder, for no page
in particular, and marks each page's branch in that text (``marked``; same test).
"""

from __future__ import annotations

import html
import posixpath
import re

FURO_VERSION = "2025.12.19"  # furo.navigation.get_navigation_tree as read for this module
_TAG = re.compile(r"<(/?)(li|ul|a)\b([^>]*)>")
_CLASS = re.compile(r'\bclass="([^"]*)"')
_LABEL = '<label for="{id}"><span class="icon"><svg><use href="#svg-arrow-right"></use></svg></span></label>'
_CHECKBOX = (
    '<input type="checkbox" class="toctree-checkbox" id="{id}" name="{id}" role="switch" '
    'aria-label="Toggle navigation of {name}"{checked}/>'
)


class _Entry:
    """One ``<li>``: where its start tag is, its classes, whether a list sits below it, where its
    first child (the link) ends and what the link says."""

    def __init__(self, match: re.Match):
        self.start, self.tag_end = match.start(), match.end()
        found = _CLASS.search(match.group(3))
        self.classes = found.group(1).split() if found else []
        self.has_children = False
        self.link_end: int | None = None  # the end of the first child, where furo inserts its tags
        self.link_start: int | None = None
        self.name = ""


def navigation_tree(toctree_html: str) -> str:
    """What ``furo.navigation.get_navigation_tree`` makes of Sphinx's toctree HTML."""
    if not toctree_html:
        return toctree_html
    entries: list[_Entry] = []
    open_entries: list[_Entry] = []
    for match in _TAG.finditer(toctree_html):
        closing, name = match.group(1), match.group(2)
        if name == "li":
            if closing:
                open_entries.pop()
            else:
                entries.append(_Entry(match))
                open_entries.append(entries[-1])
        elif name == "ul" and not closing:
            for entry in open_entries:  # furo asks element.find("ul"): any list below
                entry.has_children = True
        elif name == "a" and open_entries:
            entry = open_entries[-1]
            if not closing and entry.link_start is None:
                entry.link_start = match.end()
            elif closing and entry.link_end is None:
                entry.link_end = match.end()
                entry.name = html.unescape(re.sub(r"<[^>]*>", "", toctree_html[entry.link_start : match.start()]))
    current = [e for e in entries if "current" in e.classes]
    last_current = current[-1] if current else None
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), applied from the end
    count = 0
    for entry in entries:
        classes = list(entry.classes)
        if entry.has_children:
            count += 1
            classes.append("has-children")
            box = f"toctree-checkbox-{count}"
            checked = ' checked=""' if "current" in entry.classes else ""
            name = html.escape(entry.name, quote=True)
            edits.append(
                (
                    entry.link_end,
                    entry.link_end,
                    _CHECKBOX.format(id=box, name=name, checked=checked) + _LABEL.format(id=box),
                )
            )
        if entry is last_current:
            classes.append("current-page")
        if classes != entry.classes:
            edits.append((entry.start, entry.tag_end, f'<li class="{" ".join(classes)}">'))
    return _spliced(toctree_html, edits)


_CURRENT_LINK = '<a class="reference internal" href="{href}">'
_NO_PAGE = "\x00sidebar"  # a document name no page has: the tree with no branch marked


def _spliced(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end, replacement) made, from the last to the first (the edits do not overlap)."""
    for start, end, new in sorted(edits, key=lambda e: e[0], reverse=True):
        text = text[:start] + new + text[end:]
    return text


def marked(tree: str, href: str) -> str:
    """Sphinx's tree with the page whose link is ``href`` marked as it marks the current page: its
    link ``class="current reference internal" href="#"``, and ``current`` on every list and list
    item that holds it. The tree unchanged when no link is ``href``."""
    link = _CURRENT_LINK.format(href=html.escape(href, quote=True))
    at = tree.find(link)
    if at < 0:
        return tree
    opened: list[re.Match] = []  # the <ul> and <li> start tags still open at the link
    for match in _TAG.finditer(tree, 0, at):
        closing, name = match.group(1), match.group(2)
        if name in ("ul", "li"):
            if closing:
                opened.pop()
            else:
                opened.append(match)
    edits = [(at, at + len(link), '<a class="current reference internal" href="#">')]
    for match in opened:
        found = _CLASS.search(match.group(3))
        classes = (found.group(1) + " current") if found else "current"
        edits.append((match.start(), match.end(), f'<{match.group(2)} class="{classes}">'))
    return _spliced(tree, edits)


def install() -> bool:
    """Furo's sidebar made by ``navigation_tree``, from a tree Sphinx resolves once per folder:
    False (furo's and Sphinx's own kept) for another furo release."""
    import furo
    from sphinx.builders.html import StandaloneHTMLBuilder

    if getattr(furo, "__version__", None) != FURO_VERSION or not hasattr(furo, "get_navigation_tree"):
        return False
    furo.get_navigation_tree = navigation_tree
    own = StandaloneHTMLBuilder._get_local_toctree
    if getattr(own, "__wrapped__", None) is None:

        def _get_local_toctree(self, docname: str, collapse: bool = True, **kwargs) -> str:
            # furo's one question; any other goes to Sphinx as asked
            if collapse or kwargs != {"titles_only": True, "maxdepth": -1, "includehidden": True}:
                return own(self, docname, collapse, **kwargs)
            trees = self.__dict__.setdefault("_pitfalls_trees", {})
            folder = posixpath.dirname(docname)
            if folder not in trees:
                trees[folder] = own(self, posixpath.join(folder, _NO_PAGE), collapse, **kwargs)
            return marked(trees[folder], self.get_relative_uri(posixpath.join(folder, _NO_PAGE), docname))

        _get_local_toctree.__wrapped__ = own
        StandaloneHTMLBuilder._get_local_toctree = _get_local_toctree
    return True
