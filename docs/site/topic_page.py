"""A topic's page: its cases in a table, and for the upgrade topic each case's observed boundary."""

from __future__ import annotations

from docs.site.matrix_page import newest_symptom
from docs.site.text import code, esc, md
from torch_pitfalls.loader import LoadedCase
from torch_pitfalls.matrix import NOT_OBSERVED, Matrix
from torch_pitfalls.matrix.claims import observed_bounds


def topic_page(topic: str, cases: list[LoadedCase], m: Matrix) -> str:
    mine = sorted((lc for lc in cases if lc.topic == topic), key=lambda lc: lc.id)
    out = [
        f"# {topic}\n",
        f"{len(mine)} case{'s' if len(mine) != 1 else ''} about {md(topic)}.\n",
        "| case | kind | devices | symptom expected on torch | newest observed |",
        "|---|---|---|---|---|",
    ]
    for lc in mine:
        c = lc.case
        out.append(
            f"| [{md(c.title)}](../cases/{c.id}.ipynb) | {c.kind} | {', '.join(c.devices)} | "
            f"{code(c.affects_text)} | {md(newest_symptom(m, c.id))} |"
        )
    if topic == "upgrade":
        out.extend(upgrade_boundaries(mine, m))
    out.append(
        "\n```{toctree}\n:hidden:\n:titlesonly:\n:maxdepth: 1\n\n"
        + "\n".join(f"../cases/{lc.id}" for lc in mine)
        + "\n```\n"
    )
    return "\n".join(out)


UPGRADE_INTRO = (
    "Code that worked on an older torch and, on a newer one, raises, warns or computes something else. "
    "Each case's broken code is the spelling that was right before; its fixed code is the spelling that "
    "passes on every release of the matrix. The release where each change starts is observed on CPU by "
    "the version matrix, not copied from release notes: `tests/matrix/test_upgrade_boundaries.py` requires it to "
    "be the release the case's range names, with the release before it absent. The leads came from "
    "`make upgrade-scan`, which diffs the warnings, signatures and native messages of consecutive releases."
)


def upgrade_boundaries(mine: list[LoadedCase], m: Matrix) -> list[str]:
    """Each upgrade case's boundary as declared and as the matrix saw it (cpu)."""
    out = [
        "",
        UPGRADE_INTRO,
        "",
        "| case | declared range | first seen by the matrix | the release before | fix passes on every release |",
        "|---|---|---|---|---|",
    ]

    def start(lc):  # by the release the change starts in, as declared; the minor ones last
        first = next((i for i, v in enumerate(m.versions) if lc.case.expected(v, "cpu")), len(m.versions))
        return "minor" in lc.case.tags, first, lc.id

    def shown(cell):  # a form where the symptom changed category, else the outcome
        return (cell.form or cell.status) if cell.observed else cell.status

    for lc in sorted(mine, key=start):
        bounds = [(now, before) for _, now, before in observed_bounds(lc.case, m, "cpu") if now is not None]
        seen = "; ".join(f"{now.version} ({shown(now)})" for now, _ in bounds) or NOT_OBSERVED
        prior = "; ".join(f"{before.version}: {shown(before)}" for _, before in bounds) or NOT_OBSERVED
        fix = {True: "yes", False: "no", None: NOT_OBSERVED}[m.portable_fix(lc.id, "cpu", m.versions)]
        minor = " (minor)" if "minor" in lc.case.tags else ""
        out.append(
            f"| [{esc(lc.id)}](../cases/{lc.id}.ipynb){minor} | {code(lc.case.affects_text)} | {seen} | {prior} | {fix} |"
        )
    out += ["", MINOR_NOTE]
    return out


MINOR_NOTE = (
    "*Minor*: the only change is the warning's category (`UserWarning` to `FutureWarning` in 2.4), and the "
    "broken code has no warning filter it would get past: a user sees a deprecation warning before and "
    "after. The cases whose code does filter (`clip-grad-norm-without-underscore`: a `UserWarning` filter "
    "stops silencing it; `concat-dataset-cummulative-sizes`: a `DeprecationWarning` hidden by Python's "
    "defaults becomes a shown `FutureWarning`) teach a real break and stand on their own."
)
