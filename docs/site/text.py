"""Small helpers for writing Markdown and HTML safely: escaping, raw blocks, page links."""

from __future__ import annotations

import html
import re

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # a terminal colour or cursor code
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|{}$~])")


def md(text: str) -> str:
    """Text shown as written inside Markdown (a title may hold ``[``, ``*`` or ``_``)."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def code(text: str) -> str:
    """Inline code, with a fence long enough for backticks inside."""
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def raw_html(markup: str) -> str:
    """A MyST block whose HTML goes to the page as it is."""
    return f"```{{raw}} html\n{markup}\n```\n"


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def status_class(status: str) -> str:
    return "st-" + status.replace(" ", "-")


def case_link(case_id: str, built: set[str] | frozenset[str], prefix: str = "") -> str:
    """A Markdown link to a case's page where the corpus being built has that case, else its id as
    code: a page read from another record (the lint bench, the watcher's proofs) may name a case
    that this build has no page for (a site of part of the corpus, or a case since removed)."""
    return f"[{esc(case_id)}]({prefix}cases/{case_id}.ipynb)" if case_id in built else code(case_id)


def case_href(case_id: str, prefix: str = "") -> str:
    """The HTML page of a case, relative to a page ``prefix`` levels deep ("" or "../")."""
    return f"{prefix}cases/{case_id}.html"
