"""The buttons at the top of a case page: the two downloads, and, where the docs workflow says
which repository the site is built from, "Open in Colab" and the case's source file there.

The workflow passes ``PITFALLS_REPO_URL`` (``https://github.com/OWNER/NAME``), ``PITFALLS_REPO_REF``
(the commit built) and ``PITFALLS_NOTEBOOKS_BRANCH`` (the branch it publishes the lesson notebooks
to: Colab opens a notebook only from a GitHub repository). Without them there is no such link:
a local build never shows a guessed address.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from docs.site.text import esc

GITHUB = re.compile(r"^https://github\.com/([A-Za-z0-9][\w.-]*/[\w.-]+?)/?$")


@dataclass(frozen=True)
class Repository:
    slug: str  # OWNER/NAME
    ref: str | None  # the commit or branch the site was built from
    notebooks_branch: str | None  # where the workflow publishes the lesson notebooks

    @classmethod
    def from_env(cls, env=os.environ) -> Repository | None:
        """The repository the workflow names, or None (a local build, or a URL that is not GitHub's)."""
        match = GITHUB.match(env.get("PITFALLS_REPO_URL", "").strip())
        if match is None:
            return None
        return cls(
            match.group(1),
            env.get("PITFALLS_REPO_REF", "").strip() or None,
            env.get("PITFALLS_NOTEBOOKS_BRANCH", "").strip() or None,
        )

    def source_url(self, relative: str) -> str | None:
        return f"https://github.com/{self.slug}/blob/{self.ref}/{relative}" if self.ref else None

    def colab_url(self, notebook: str) -> str | None:
        if not self.notebooks_branch:
            return None
        return f"https://colab.research.google.com/github/{self.slug}/blob/{self.notebooks_branch}/{notebook}"


def case_links(case_path: Path, downloads: tuple[str, str], repo: Repository | None = None) -> str:
    """The row of buttons, as HTML for the top of the case's page."""
    repo = repo if repo is not None else Repository.from_env()
    py, ipynb = downloads
    links = [
        f'<a class="case-button download-ipynb" href="../downloads/{esc(ipynb)}" download>Download the notebook (.ipynb)</a>',
        f'<a class="case-button download-py" href="../downloads/{esc(py)}" download>Download the case module (.py)</a>',
    ]
    if repo is not None:
        colab = repo.colab_url(ipynb)
        if colab:
            links.append(f'<a class="case-button open-colab" href="{esc(colab)}">Open in Colab</a>')
        relative = "/".join(case_path.parts[-3:])  # cases/<topic>/<file>.py
        source = repo.source_url(relative)
        if source:
            links.append(f'<a class="case-button view-source" href="{esc(source)}">View the source on GitHub</a>')
    return f'<div class="case-buttons">{"".join(links)}</div>'
