"""The symptom index: every case under what a learner sees first (NaN, a wrong shape, an error...),
with one line in plain words per case, from the case's own facts (``symptom_category`` and
``symptom_line`` in its ``CASE``)."""

from __future__ import annotations

from dataclasses import dataclass

from docs.site.text import md, raw_html
from torch_pitfalls.case import SYMPTOM_CATEGORIES
from torch_pitfalls.loader import LoadedCase

# The categories in the order a learner meets them: key, heading, what it covers.
CATEGORIES = {
    "nan-inf": ("NaN or inf", "A loss, an output or a gradient holds nan or inf, or a value no correct formula gives."),
    "wrong-shape": (
        "A wrong shape",
        "A tensor comes out with a shape you did not ask for, or the shapes refuse to line up.",
    ),
    "wrong-values": (
        "Silently wrong values",
        "Nothing fails and nothing warns, but the numbers or the training are wrong.",
    ),
    "slow-or-memory": (
        "Slow, or out of memory",
        "The answer is right, but the program is needlessly slow or holds memory it does not need.",
    ),
    "error": (
        "An error message",
        "The program stops with an exception. The search box finds a case by a few words of its message.",
    ),
    "warning": (
        "A warning, often after an upgrade",
        "The program runs, but torch prints a warning, usually one that a newer release added.",
    ),
}


assert tuple(CATEGORIES) == SYMPTOM_CATEGORIES, "the index's headings are the case model's categories"


class SymptomError(ValueError):
    """The symptom file does not match the cases; the message names the file and the case."""


@dataclass(frozen=True)
class Symptom:
    category: str
    line: str


def load_symptoms(cases: list[LoadedCase]) -> dict[str, Symptom]:
    """case id -> its symptom. The index covers every case or none (a planted corpus declares
    none): a corpus where some cases declare a line and others do not is refused, by name."""
    found = {
        lc.id: Symptom(lc.case.symptom_category, lc.case.symptom_line.strip()) for lc in cases if lc.case.symptom_line
    }
    missing = sorted(lc.id for lc in cases if lc.id not in found)
    if found and missing:
        raise SymptomError(
            f"no symptom line for case {', '.join(missing)} (symptom_category and symptom_line in its CASE)"
        )
    return found


def symptom_page(cases: list[LoadedCase], symptoms: dict[str, Symptom]) -> str:
    titles = {lc.id: lc.case.title for lc in cases}
    out = [
        "# Find a pitfall by its symptom\n",
        "Start from what you see. Each case is listed once, under its first visible symptom, "
        "with that symptom in one line; the link opens the case, with the broken code, what it prints, why, and the fix.\n",
    ]
    out.append(" · ".join(f"{{ref}}`{CATEGORIES[key][0]} <symptom-{key}>`" for key in CATEGORIES) + "\n")
    for key, (heading, meaning) in CATEGORIES.items():
        mine = sorted((cid for cid, s in symptoms.items() if s.category == key), key=lambda cid: titles[cid].lower())
        out.append(f"(symptom-{key})=\n## {heading}\n")
        out.append(f"{meaning}\n")
        out.append(
            raw_html(
                f'<p class="symptom-filter-link"><a href="index.html?symptom={key}#cases">'
                f"Show these {len(mine)} cases in the table of cases</a></p>"
            )
        )
        out.extend(f"- [{md(titles[cid])}](cases/{cid}.ipynb): {md(symptoms[cid].line)}" for cid in mine)
        out.append("")
    return "\n".join(out) + "\n"
