"""docs.site.navigation: the sidebar tree cut before it is copied is Sphinx's own tree."""

from __future__ import annotations

import contextlib
import io

import pytest

pytest.importorskip("sphinx")

from sphinx.application import Sphinx  # noqa: E402
from sphinx.environment.adapters import toctree as adapter  # noqa: E402
from sphinx.util.docutils import docutils_namespace, patch_docutils  # noqa: E402

from docs.site import navigation  # noqa: E402

PAGES = {
    "index": "# Home\n\n## Intro\n\n```{toctree}\n:caption: Topics\n:titlesonly:\n\ntopic\nother\n```\n",
    "topic": "# A topic\n\n## Part one\n\n### Deeper\n\n```{toctree}\n:hidden:\n\ncase\n```\n\n## Part two\n",
    "other": "# Another page\n\n## Its section\n",
    "case": "# A case\n\n## Broken\n\n### Output\n\n## Fixed\n\n## Why\n",
}


@contextlib.contextmanager
def sphinx_own():
    """Sphinx's functions for the duration (the cut installed again after)."""
    cut = adapter._entries_from_toctree, adapter._toctree_standard_entry
    adapter._entries_from_toctree, adapter._toctree_standard_entry = (f.__wrapped__ for f in cut)
    try:
        yield
    finally:
        adapter._entries_from_toctree, adapter._toctree_standard_entry = cut


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    src = tmp_path_factory.mktemp("nav")
    (src / "conf.py").write_text('extensions = ["myst_nb"]\n', encoding="utf-8")
    for name, text in PAGES.items():
        (src / f"{name}.md").write_text(text, encoding="utf-8")
    assert navigation.install()
    with patch_docutils(src), docutils_namespace():  # docutils' registries as they were, after (as Sphinx's CLI does)
        app = Sphinx(
            src,
            src,
            src / "_build",
            src / "_doctrees",
            "html",
            status=io.StringIO(),
            warning=io.StringIO(),
            freshenv=True,
        )
        app.build(force_all=True)
        yield app


@pytest.mark.parametrize("docname", list(PAGES))
@pytest.mark.parametrize("collapse", [False, True])
def test_the_titles_only_tree_is_sphinxs_own(app, docname, collapse):
    def tree():
        node = adapter.global_toctree_for_doc(
            app.env,
            docname,
            app.builder,
            tags=app.builder.tags,
            collapse=collapse,
            includehidden=True,
            maxdepth=-1,
            titles_only=True,
        )
        return node.pformat()

    ours = tree()
    with sphinx_own():
        theirs = tree()
    assert ours == theirs
    assert "Part one" not in ours  # titles only
    if not collapse:
        assert "A case" in ours  # the nested document is there


def test_the_cut_keeps_titles_and_nested_toctrees_only(app):
    cut = navigation.titles_of(app.env.tocs["topic"])
    text = cut.pformat()
    assert "A topic" in text and "toctree" in text
    assert "Part one" not in text and "Deeper" not in text
    assert "Part one" in app.env.tocs["topic"].pformat()  # the document's own table is left as it was
