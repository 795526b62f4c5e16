"""The zh build's translated paragraphs, each parsed once per build instead of once per use.

Sphinx's ``Locale`` transform parses every translation it puts on a page with the page's parser
(``sphinx.transforms.i18n._publish_msgstr``: a fresh document, a MyST parse): ~21,000 parses for
~4,600 distinct translations, a tenth of the zh build. Within one build the parse depends on the
text alone, except where it can name another page (a link, an autolink or a role: ``[``, ``<``,
``{``), which MyST resolves against the page being read; those are remembered per page. ``Locale``
moves the parsed nodes into the page, so each use gets a copy of what was parsed.

Each copy also belongs to the page rather than to the throwaway document it was parsed in: the
nodes Sphinx's own parse leaves on a page still name that document (``node.document``), with its
settings and the whole build environment, and the pickle Sphinx writes of each page (which the zh
build throws away) dragged ~3.3 MB of them into every page, 650 MB in all.

The function wrapped is Sphinx's (pinned at 9.0.4 in pyproject.toml); ``install`` leaves Sphinx
alone if its signature is not the one read here.
"""

from __future__ import annotations

import inspect
import weakref

from docutils import nodes
from sphinx.transforms import i18n

_PARAMETERS = ("source", "source_path", "source_line", "config", "env", "registry", "settings")
_NAMES_A_PAGE = ("[", "<", "{")  # a link, an autolink or HTML, a role: MyST resolves them against the page


def install() -> bool:
    """``Locale`` parses each distinct translation once per build (once per page where it can name
    one); False, and Sphinx left as it is, if ``_publish_msgstr`` is not the function read here."""
    publish = i18n._publish_msgstr
    if getattr(publish, "_pitfalls_remembering", False):
        return True
    if tuple(inspect.signature(publish).parameters) != _PARAMETERS:
        return False
    builds = weakref.WeakKeyDictionary()  # a build's environment -> what it parsed

    def _publish_msgstr(source, source_path, source_line, *, config, env, registry, settings):
        parsed = builds.setdefault(env, {})
        page = env.current_document.docname if any(c in source for c in _NAMES_A_PAGE) else None
        key = (source, page, source_path.rpartition(".")[2])  # the parser is the file type's
        if key not in parsed:
            patch = publish(
                source, source_path, source_line, config=config, env=env, registry=registry, settings=settings
            )
            if isinstance(patch, nodes.document):  # nothing parsed: nothing to remember
                return patch
            parsed[key] = homeless_copy(patch)
        return parsed[key].deepcopy()  # (a copy of a node in no document is in none)

    _publish_msgstr._pitfalls_remembering = True
    _publish_msgstr.__wrapped__ = publish
    i18n._publish_msgstr = _publish_msgstr
    return True


def homeless_copy(node: nodes.Element) -> nodes.Element:
    """A deep copy of ``node`` in no document: once placed, each node's document is its page's."""
    copy = node.deepcopy()
    for each in copy.findall():
        each.document = None
    return copy
