"""The corpus as a bench for linters: each case's broken and fixed programs (harness/casefile.py)
checked by `pitfalls lint` and by TorchFix, and which rule ids fire on which.

A linter *catches* a case when it reports on the broken program a rule it does not report on the
fixed one (it tells them apart); it *fires on correct code* when it reports anything on the
fixed program. `pitfalls lint-bench` prints the table (`--json`, `--write reports/lint-bench.json`);
the site's linters page and each case page read the committed file; tests/lint/test_lint_bench.py
recomputes it and requires it to match.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from torch_pitfalls.casefile import read_case
from torch_pitfalls.lint import active_rules, lint_text
from torch_pitfalls.loader import case_id_of, find_case_files

VARIANTS = ("broken", "fixed")  # the two programs a linter is held to

LINTERS = ("pitfalls-lint", "torchfix")
TORCHFIX_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<rule>TOR\d+)\b")


def write_programs(cases_dir: Path, out: Path) -> dict[str, tuple[str, str, str]]:
    """Every variant program as a file under ``out``; file name -> (case id, variant, sha256)."""
    owner = {}
    for path in find_case_files(cases_dir):
        case = case_id_of(path)
        for variant in VARIANTS:
            for label, text in read_case(path).variant_programs(variant):
                (out / label).write_text(text, encoding="utf-8")
                owner[label] = (case, variant, hashlib.sha256(text.encode()).hexdigest())
    return owner


def run_pitfalls(folder: Path, files) -> dict[str, list[str]]:
    """The rules each program gets from `pitfalls lint`, read again only for a text (or a rule set) not
    seen before in this process: the bench and its staleness checks lint the same programs."""
    rules = active_rules(None)
    seen = _PITFALLS_SEEN.setdefault(tuple(rules), {})  # the rules themselves: no stale answer for new ones
    found = {}
    for name in files:
        text = (folder / name).read_text()
        if text not in seen:
            seen[text] = sorted({f.rule for f in lint_text(text, name, rules)})
        found[name] = seen[text]
    return found


_PITFALLS_SEEN: dict[tuple, dict[str, list[str]]] = {}


def run_torchfix(folder: Path, files=None) -> dict[str, list[str]]:
    """TorchFix on the folder (or on some of its files), every rule selected."""
    targets = [str(folder / f) for f in files] if files is not None else [str(folder)]
    if not targets:
        return {}
    from torch_pitfalls.helpers import stretched  # (imports torch: only when TorchFix is run)

    done = subprocess.run(
        [sys.executable, "-m", "torchfix", "--select", "ALL", "-j", "1", *targets],
        capture_output=True,
        text=True,
        timeout=stretched(600),
    )
    found: dict[str, set[str]] = {}
    for line in done.stdout.splitlines():
        m = TORCHFIX_LINE.match(line)
        if m:
            found.setdefault(Path(m["path"]).name, set()).add(m["rule"])
    if done.returncode not in (0, 1) or "Finished checking" not in done.stderr + done.stdout:
        raise RuntimeError(f"torchfix did not finish (exit {done.returncode}): {done.stderr[-500:]}")
    return {name: sorted(rules) for name, rules in found.items()}


# TorchFix is pinned, so its findings on a text never change: a process that checks the bench
# twice (the suite: the record as it is and a tampered copy) runs it once per text.
_TORCHFIX_SEEN: dict[str, list[str]] = {}


def _torchfix_by_text(folder: Path, names: list[str], digests: dict[str, str]) -> dict[str, list[str]]:
    new = [n for n in names if digests[n] not in _TORCHFIX_SEEN]
    found = run_torchfix(folder, new)
    _TORCHFIX_SEEN.update({digests[n]: found.get(n, []) for n in new})
    return {n: _TORCHFIX_SEEN[digests[n]] for n in names if _TORCHFIX_SEEN[digests[n]]}


def bench(cases_dir: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="pitfalls-lint-bench-") as tmp:
        folder = Path(tmp)
        owner = write_programs(cases_dir, folder)
        results = {"pitfalls-lint": run_pitfalls(folder, owner), "torchfix": run_torchfix(folder)}
    return tabulate(owner, results)


def stale_rows(recorded: dict, cases_dir: Path, sample: int = 16, seed: int = 0) -> list[str]:
    """How the recorded bench differs from the corpus as it is: every program's text (by hash)
    and its `pitfalls lint` result, and TorchFix's result on every program where it was recorded
    reporting something plus ``sample`` others drawn with ``seed`` (TorchFix is pinned and its
    input is hashed, so a full re-run is `pitfalls lint-bench --write`). [] when current."""
    import random

    recorded_programs = {name: p for e in recorded["table"] for name, p in e["programs"].items()}
    with tempfile.TemporaryDirectory(prefix="pitfalls-lint-bench-") as tmp:
        folder = Path(tmp)
        owner = write_programs(cases_dir, folder)
        problems = [f"{name}: not in the recorded bench" for name in sorted(owner.keys() - recorded_programs.keys())]
        problems += [
            f"{name}: recorded, but no such program now" for name in sorted(recorded_programs.keys() - owner.keys())
        ]
        common = sorted(owner.keys() & recorded_programs.keys())
        problems += [
            f"{name}: its text changed since it was recorded"
            for name in common
            if owner[name][2] != recorded_programs[name]["sha256"]
        ]
        ours = run_pitfalls(folder, common)
        problems += [
            f"{name}: pitfalls lint reports {ours[name]}, recorded {recorded_programs[name]['pitfalls-lint']}"
            for name in common
            if ours[name] != recorded_programs[name]["pitfalls-lint"]
        ]
        flagged = [n for n in common if recorded_programs[n]["torchfix"]]
        rest = [n for n in common if n not in flagged]
        chosen = flagged + random.Random(seed).sample(rest, min(sample, len(rest)))
        theirs = _torchfix_by_text(folder, chosen, {n: owner[n][2] for n in chosen})
        problems += [
            f"{name}: torchfix reports {theirs.get(name, [])}, recorded {recorded_programs[name]['torchfix']}"
            for name in chosen
            if theirs.get(name, []) != recorded_programs[name]["torchfix"]
        ]
    fresh = tabulate(
        {n: owner[n] for n in common},
        {"pitfalls-lint": ours, "torchfix": {n: recorded_programs[n]["torchfix"] for n in common}},
    )
    if not problems and (fresh["totals"], fresh["cases"]) != (recorded["totals"], recorded["cases"]):
        problems.append(f"the recorded totals {recorded['totals']} are not those of its rows {fresh['totals']}")
    return problems


def tabulate(owner: dict, results: dict) -> dict:
    cases: dict[str, dict] = {}
    programs: dict[str, dict] = {}
    for name, (case, variant, digest) in owner.items():
        row = cases.setdefault(case, {linter: {v: set() for v in VARIANTS} for linter in LINTERS})
        programs.setdefault(case, {})[name] = {
            "sha256": digest,
            **{linter: results[linter].get(name, []) for linter in LINTERS},
        }
        for linter in LINTERS:
            row[linter][variant].update(results[linter].get(name, []))
    table = []
    for case in sorted(cases):
        entry = {"case": case, "programs": programs[case]}
        for linter in LINTERS:
            broken, fixed = sorted(cases[case][linter]["broken"]), sorted(cases[case][linter]["fixed"])
            entry[linter] = {
                "broken": broken,
                "fixed": fixed,
                "catches": bool(set(broken) - set(fixed)),
                "fires_on_fixed": bool(fixed),
            }
        table.append(entry)
    totals = {
        linter: {
            "catches": sum(e[linter]["catches"] for e in table),
            "fires_on_fixed": sum(e[linter]["fires_on_fixed"] for e in table),
        }
        for linter in LINTERS
    }
    return {
        "linters": {"pitfalls-lint": metadata.version("torch-pitfalls"), "torchfix": metadata.version("torchfix")},
        "cases": len(table),
        "totals": totals,
        "table": table,
    }


def text_table(result: dict) -> str:
    width = max(len(e["case"]) for e in result["table"])
    lines = [f"{'case'.ljust(width)}  {'pitfalls lint':<28}  torchfix", "-" * (width + 50)]
    for e in result["table"]:
        cells = []
        for linter in LINTERS:
            r = e[linter]
            text = ",".join(r["broken"]) or "-"
            if r["fixed"]:
                text += f" (fixed: {','.join(r['fixed'])})"
            cells.append(text)
        lines.append(f"{e['case'].ljust(width)}  {cells[0]:<28}  {cells[1]}")
    t = result["totals"]
    lines.append(
        f"{result['cases']} cases: pitfalls lint catches {t['pitfalls-lint']['catches']}, fires on "
        f"{t['pitfalls-lint']['fires_on_fixed']} fixed programs; torchfix {result['linters']['torchfix']} catches "
        f"{t['torchfix']['catches']}, fires on {t['torchfix']['fires_on_fixed']} fixed programs"
    )
    return "\n".join(lines)


def run_bench_command(args, usage_error) -> int:
    try:
        metadata.version("torchfix")
    except metadata.PackageNotFoundError:
        raise usage_error("torchfix is not installed (pip install torchfix==0.7.0, the test extra has it)") from None
    result = bench(Path(args.cases))
    if args.write:
        from torch_pitfalls.run.report import write_report  # the same atomic write as reports

        write_report(result, args.write)
    print(json.dumps(result, indent=1) if args.json else text_table(result))
    return 0
