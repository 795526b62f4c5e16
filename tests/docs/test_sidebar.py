"""docs.site.sidebar makes furo's sidebar tree: for every page of a small site, and for titles
that need escaping, the markup parses to what furo's own BeautifulSoup pass makes; and
docs.site.search_words's remembering stemmer gives the stemmer's own stems."""

from __future__ import annotations

import io

import pytest

pytest.importorskip("furo")

from bs4 import BeautifulSoup  # noqa: E402
from furo import navigation as furo_navigation  # noqa: E402
from sphinx.application import Sphinx  # noqa: E402
from sphinx.util.docutils import docutils_namespace, patch_docutils  # noqa: E402

from docs.site import sidebar  # noqa: E402

PAGES = {
    "index": "# Home\n\n```{toctree}\n:caption: Topics\n:titlesonly:\n\ntopics/topic\nother\n```\n\n"
    "```{toctree}\n:hidden:\n\nloose\n```\n",
    "topics/topic": "# A topic & its <cases>\n\n## Part\n\n```{toctree}\n:hidden:\n\n../cases/case\n../cases/case2\n```\n",
    "other": '# Another "page" @ home\n\n## Its section\n',
    "loose": "# Loose\n",
    "cases/case": "# A case\n\n## Broken\n\n```{toctree}\n:hidden:\n\ndeep\n```\n",
    "cases/case2": "# Второй случай, 第二个\n",
    "cases/deep": "# Deep\n",
}
FURO_ASKS = {"collapse": False, "titles_only": True, "maxdepth": -1, "includehidden": True}


def parsed(markup: str):
    return BeautifulSoup(markup, "html.parser")


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """Each page's toctree HTML as furo asks Sphinx for it."""
    src = tmp_path_factory.mktemp("sidebar")
    (src / "conf.py").write_text('extensions = ["myst_nb"]\nhtml_theme = "furo"\n', encoding="utf-8")
    for folder in ("topics", "cases"):
        (src / folder).mkdir()
    for name, text in PAGES.items():
        (src / f"{name}.md").write_text(text, encoding="utf-8")
    seen = {}
    assert sidebar.install()

    def grab(app, pagename, templatename, context, doctree):
        if "toctree" in context:  # (Sphinx's own tree for the page, the one marked in the folder's tree)
            sphinx_own = type(app.builder)._get_local_toctree.__wrapped__(app.builder, pagename, **FURO_ASKS)
            seen[pagename] = sphinx_own, context["toctree"](**FURO_ASKS)

    with patch_docutils(src), docutils_namespace():
        app = Sphinx(src, src, src / "_build", src / "_doctrees", "html", status=io.StringIO(), warning=io.StringIO())
        app.connect("html-page-context", grab, priority=100)
        app.build(force_all=True)
    assert set(seen) >= set(PAGES)
    return seen


@pytest.mark.parametrize("page", list(PAGES))
def test_the_tree_is_furos(trees, page):
    sphinx_own, marked = trees[page]
    assert parsed(marked) == parsed(sphinx_own), (marked, sphinx_own)
    ours, theirs = sidebar.navigation_tree(marked), furo_navigation.get_navigation_tree.__wrapped__(sphinx_own)
    assert parsed(ours) == parsed(theirs), (ours, theirs)
    assert "toctree-checkbox" in ours and ("current-page" in ours) == (page != "index")


def test_an_empty_tree_stays_empty():
    assert sidebar.navigation_tree("") == ""


def test_a_remembering_stemmer_gives_the_stemmers_stems():
    import snowballstemmer

    from docs.site import search_words

    search_words.install()
    remembering, plain = snowballstemmer.stemmer("english"), snowballstemmer.stemmer.__wrapped__("english")
    words = ["running", "gradients", "accumulated", "running", "zeroing", "softmax", "Ran"]
    assert [remembering.stemWord(w) for w in words] == [plain.stemWord(w) for w in words]
    assert remembering.stemWord.cache_info().hits == 1
