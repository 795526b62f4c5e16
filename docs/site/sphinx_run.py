"""A fresh Sphinx build with the site's conf.py, warnings as errors: the English site, the Chinese
edition's second process and the translators' templates run it. It imports no torch and none of
the case machinery, so the second process starts in Sphinx's own import time.
"""

from __future__ import annotations

import io
from pathlib import Path

from docs.site.text import ANSI

CONF_DIR = Path(__file__).resolve().parent


class BuildError(Exception):
    """The site cannot be built; the message says why, naming the case or file."""


def run_sphinx_builder(builder: str, src: Path, outdir: Path, doctrees: Path, overrides: dict, jobs: int = 1) -> None:
    """A fresh Sphinx build of ``src`` with this folder's conf.py and ``overrides`` (the zh edition and
    the translators' templates use it too)."""
    from sphinx.application import Sphinx
    from sphinx.errors import SphinxError
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    warnings = _Uncoloured()
    try:
        with patch_docutils(CONF_DIR), docutils_namespace():
            app = Sphinx(
                src,
                CONF_DIR,
                outdir,
                doctrees,
                builder,
                confoverrides=overrides,
                status=None,
                warning=warnings,
                freshenv=True,
                warningiserror=True,
                parallel=jobs,
            )
            app.build(force_all=True)
    except SphinxError as exc:
        raise BuildError(f"sphinx: {exc}\n{warnings.getvalue().strip()}") from None
    if app.statuscode:
        raise BuildError(f"sphinx: the build had warnings:\n{warnings.getvalue().strip()}")


class _Uncoloured(io.StringIO):
    """Sphinx's warning stream without its terminal colour codes, for a readable error."""

    def write(self, text):
        return super().write(ANSI.sub("", text))
