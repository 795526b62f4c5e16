"""The linters page and each case page's linter line, from the recorded bench
(reports/lint-bench.json, written by `pitfalls lint-bench --write`; tests keep it current)."""

from __future__ import annotations

import json
from pathlib import Path

from docs.site.text import case_link, code, esc
from torch_pitfalls.lint import RULES, rule_ranges

NOT_RECORDED = "not in the recorded lint bench"


def load_bench(reports_dir: Path) -> dict | None:
    path = Path(reports_dir) / "lint-bench.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _row(bench: dict | None, case_id: str) -> dict | None:
    return next((e for e in (bench or {}).get("table", []) if e["case"] == case_id), None)


def _ids(ids: list[str]) -> str:
    return ", ".join(code(i) for i in ids) or "nothing"


def case_linter_line(bench: dict | None, case_id: str) -> str:
    row = _row(bench, case_id)
    if row is None:
        return f"Linters: {NOT_RECORDED}."
    parts = []
    for linter, name in (("pitfalls-lint", "pitfalls lint"), ("torchfix", f"TorchFix {bench['linters']['torchfix']}")):
        r = row[linter]
        parts.append(
            f"{name} reports {_ids(r['broken'])} on the broken code"
            + (f" and {_ids(r['fixed'])} on the fixed code" if r["fixed"] else "")
        )
    line = "Linters ([bench](../linters.md)): " + "; ".join(parts) + "."
    at_preview = [r for r in RULES if r.case_at_preview and case_id in r.cases]
    if at_preview and not row["pitfalls-lint"]["broken"]:
        # the rule reports only what its file shows; this case's code hides it (Rule.case_at_preview says what)
        line += "".join(
            f" With `--preview`, `pitfalls lint` reports {_ids([r.id])} on it: {r.case_at_preview}." for r in at_preview
        )
    return line


def linters_page(bench: dict | None, cases_dir: Path, case_ids) -> str:
    """The page; ``case_ids``: the cases this build has pages for. The bench and the rules name cases of
    the corpus they were recorded from: only the built ones are linked, the others are named."""
    built = frozenset(case_ids)
    out = [
        "# Linters\n",
        "Which pitfalls a static checker finds, measured on the corpus itself: every case's broken program "
        "and fixed program (the variant function and what it uses) checked by `pitfalls lint` and by "
        "TorchFix. A linter *catches* a case when it reports on the broken program something it does not "
        "report on the fixed one; reporting anything on a fixed program is firing on correct code. "
        "`pitfalls lint-bench` recomputes this table; `tests/lint/test_lint_bench.py` keeps it current.\n",
    ]
    if bench is None:
        out.append(f"The bench is {NOT_RECORDED.replace('not in ', 'not ')} (`reports/lint-bench.json`).\n")
        return "\n".join(out)
    t = bench["totals"]
    out.append(
        f"Of {bench['cases']} cases, `pitfalls lint` {bench['linters']['pitfalls-lint']} catches "
        f"**{t['pitfalls-lint']['catches']}** and fires on {t['pitfalls-lint']['fires_on_fixed']} fixed programs; "
        f"TorchFix {bench['linters']['torchfix']} catches **{t['torchfix']['catches']}** and fires on "
        f"{t['torchfix']['fires_on_fixed']} fixed programs.\n"
    )
    out += ["| case | pitfalls lint: broken | fixed | TorchFix: broken | fixed |", "|---|---|---|---|---|"]
    for e in bench["table"]:
        p, f = e["pitfalls-lint"], e["torchfix"]
        if p["broken"] or p["fixed"] or f["broken"] or f["fixed"]:
            out.append(
                f"| {case_link(e['case'], built)} | {_ids(p['broken'])} | {_ids(p['fixed'])} | "
                f"{_ids(f['broken'])} | {_ids(f['fixed'])} |"
            )
    quiet = [
        e["case"]
        for e in bench["table"]
        if not any(e[tool]["broken"] or e[tool]["fixed"] for tool in ("pitfalls-lint", "torchfix"))
    ]
    # cases a rule proves only with --preview (Rule.case_at_preview, each case page says why): quiet here
    at_preview = {case: r.id for r in RULES if r.case_at_preview for case in r.cases if case in quiet}
    out.append(
        f"\nNeither linter reports anything on {len(quiet)} cases. On {len(at_preview)} of them "
        f"`pitfalls lint --preview` does ({code(', '.join(sorted(at_preview.values())))}): what "
        "decides their harm is not in the code the rule reads (a size, what the run does next, a class defined "
        f"elsewhere); each case page says which. The other {len(quiet) - len(at_preview)} depend on values, shapes, "
        "devices or run-time state that no static checker sees.\n"
    )
    out += [
        "## The rules of `pitfalls lint`\n",
        "Each rule fires only where its case's `affects` holds for the torch checked (the installed one, "
        "`--torch X.Y`, or `--all-versions`).\n",
        "| rule | case | torch | what goes wrong, and the fix |",
        "|---|---|---|---|",
    ]
    for r in RULES:
        try:
            ranges = "; ".join(dict.fromkeys(rule_ranges(r, cases_dir)))  # where the rule fires: any of its cases'
        except LookupError:
            ranges = "?"
        message = esc(r.message).replace("__", "\\_\\_")  # __init__ as written, not bold "init"
        out.append(f"| {code(r.id)} | {case_link(r.case, built)} | {code(ranges)} | {message} |")
    return "\n".join(out) + "\n"
