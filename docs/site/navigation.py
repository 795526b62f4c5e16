"""The sidebar's tree of pages, without copying every page's sections for every page.

Furo asks Sphinx, on each of the ~270 pages, for the whole tree of documents with titles only
(``titles_only=True, maxdepth=-1``). Sphinx 9 first deep-copies each listed document's table of
contents, every section of it, and only then throws away all but the document's title and its
sub-toctrees: 137 pages x 137 entries x a dozen sections each, over a third of an English or
Chinese build. Cutting each table of contents down the same way *before* the copy gives the same
tree (the cut is Sphinx's own, applied to a copy made once per document), in a fraction of the
time. Where the cut could differ (a document with a ``tocdepth``, a collapsed tree) Sphinx's own
path runs unchanged.

The two functions wrapped are Sphinx's (``sphinx.environment.adapters.toctree``, pinned at 9.0.4 in
pyproject.toml); ``install`` leaves Sphinx alone if their signatures are not the ones read here.
"""

from __future__ import annotations

import contextvars
import inspect

from docutils import nodes
from sphinx import addnodes
from sphinx.environment.adapters import toctree as adapter

_titles_only = contextvars.ContextVar("pitfalls_titles_only", default=False)
_ENTRIES = ("env", "prune", "titles_only")
_STANDARD = ("title", "ref", "maxdepth", "toc", "toctree_ancestors", "prune", "collapse")


def titles_of(toc: nodes.bullet_list) -> nodes.bullet_list:
    """A copy of a document's table of contents cut as Sphinx cuts it for ``titles_only``: each
    top-level entry keeps its title and the toctrees below it, nothing else."""
    cut = toc.deepcopy()
    for top_level in cut.children:
        if len(top_level) > 1:
            if subtrees := list(top_level.findall(addnodes.toctree)):
                top_level[1][:] = subtrees
            else:
                top_level.pop(1)
    return cut


def install() -> bool:
    """Wrap Sphinx's two functions once (a second call does nothing); False where they are not the
    functions this module was written against."""
    entries, standard = adapter._entries_from_toctree, adapter._toctree_standard_entry
    if getattr(standard, "_pitfalls_cut", False):
        return True
    if (
        tuple(inspect.signature(entries).parameters)[:3] != _ENTRIES
        or tuple(inspect.signature(standard).parameters)[:7] != _STANDARD
    ):
        return False
    cut: dict[int, tuple[nodes.bullet_list, nodes.bullet_list]] = {}  # id(toc) -> (toc, its cut)

    def _entries_from_toctree(env, prune, titles_only, *args, **kwargs):
        token = _titles_only.set(bool(titles_only))
        try:
            return entries(env, prune, titles_only, *args, **kwargs)
        finally:
            _titles_only.reset(token)

    def _toctree_standard_entry(title, ref, maxdepth, toc, toctree_ancestors, prune, collapse, *args, **kwargs):
        if _titles_only.get() and maxdepth <= 0 and not collapse:
            held = cut.get(id(toc))
            if held is None or held[0] is not toc:  # the document was read again: cut it again
                held = cut[id(toc)] = (toc, titles_of(toc))
            toc = held[1]
        return standard(title, ref, maxdepth, toc, toctree_ancestors, prune, collapse, *args, **kwargs)

    _toctree_standard_entry._pitfalls_cut = True
    _entries_from_toctree.__wrapped__, _toctree_standard_entry.__wrapped__ = entries, standard  # Sphinx's own
    adapter._entries_from_toctree = _entries_from_toctree
    adapter._toctree_standard_entry = _toctree_standard_entry
    return True
