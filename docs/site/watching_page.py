"""The "Watching a run" page and each case page's "Caught by" line: which cases `pitfalls lint`
finds (the recorded lint bench), which the watcher's detectors find (and on which releases their
proofs passed: reports/watch-proofs.json), which the explainer names from torch's own error or
warning, and which none of them can see."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from docs.site.text import case_link, code, esc


@dataclass(frozen=True)
class Detection:
    """What the site knows about how each case is caught."""

    lint: dict  # case id -> rule ids reported on its broken program (recorded lint bench)
    watch: dict  # case id -> the detector class (sound or heuristic)
    explained: frozenset  # case ids the explainer names on this build's torch
    proofs: dict  # release -> {case id: proven?} (reports/watch-proofs.json)
    false_positives: dict | None  # reports/watch-false-positives.json
    fresh: dict | None = None  # reports/fresh-heldout.json: programs written outside, scored once
    peers: dict | None = None  # reports/watch-peers.json: the same programs under the other tools
    # case id -> the rules that report its broken program only with --preview (Rule.case_at_preview: the
    # case's code hides how often it runs), for the cases the recorded bench has nothing on
    lint_preview: dict | None = None


def _json(path: Path):
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def load_detection(reports_dir: Path, lint_bench: dict | None, cases_dir: Path | None = None, matrix=None) -> Detection:
    from torch_pitfalls.watch.detectors import all_detectors
    from torch_pitfalls.watch.explain import Explainer

    lint = {
        row["case"]: row["pitfalls-lint"]["broken"]
        for row in (lint_bench or {}).get("table", [])
        if row["pitfalls-lint"]["broken"]
    }
    watch = {d.case: d for d in all_detectors()}
    import torch

    # this build's reports and cases: a site of a planted corpus names what its own records hold
    release = torch.__version__.split("+")[0]
    explained = (
        frozenset(Explainer(release, reports_dir, cases_dir, matrix).explained_cases())
        if cases_dir
        else frozenset(Explainer.for_installed_torch().explained_cases())
    )
    record = _json(Path(reports_dir) / "watch-proofs.json") or {"releases": {}}
    proofs = {release: {p["case"]: p["proven"] for p in r["detectors"]} for release, r in record["releases"].items()}
    from torch_pitfalls.lint import RULES

    lint_preview = {}
    for rule in RULES:
        for case in rule.cases if rule.case_at_preview else ():
            if case not in lint:
                lint_preview.setdefault(case, []).append(rule.id)
    return Detection(
        lint,
        watch,
        explained,
        proofs,
        _json(Path(reports_dir) / "watch-false-positives.json"),
        _json(Path(reports_dir) / "fresh-heldout.json"),
        _json(Path(reports_dir) / "watch-peers.json"),
        lint_preview,
    )


def _releases(det: Detection, case_id: str) -> str:
    seen = [rel for rel, cases in det.proofs.items() if case_id in cases]
    if not seen:
        return "releases not observed"
    proven = [rel for rel in seen if det.proofs[rel][case_id]]
    if len(proven) == len(seen):
        return f"proven on all {len(seen)} releases run ({seen[0]} to {seen[-1]})"
    return f"proven on {len(proven)} of {len(seen)} releases run ({', '.join(proven) or 'none'})"


def caught_by(det: Detection, case_id: str) -> list[str]:
    out = []
    if case_id in det.lint:
        out.append(f"`pitfalls lint` ({', '.join(det.lint[case_id])})")
    elif case_id in (det.lint_preview or {}):
        out.append(f"`pitfalls lint --preview` ({', '.join(det.lint_preview[case_id])})")
    if case_id in det.watch:
        kind = "heuristic, with `--pedantic`" if det.watch[case_id].pedantic else "a detector"
        out.append(f"`pitfalls watch` ({kind}; {_releases(det, case_id)})")
    if case_id in det.explained:
        out.append("the watcher's explainer (torch's own error or warning names this case)")
    return out


def case_detection_line(det: Detection | None, case_id: str) -> str:
    if det is None:
        return ""
    found = caught_by(det, case_id)
    body = "; ".join(found) if found else "not detectable by the linter or the watcher"
    return f"Caught by ([how](../watching.md)): {body}."


def watching_page(det: Detection, case_ids: list[str]) -> str:
    built = set(case_ids)  # a site of part of the corpus links only to the pages it has
    sound = [d for d in det.watch.values() if not d.pedantic]
    heuristic = [d for d in det.watch.values() if d.pedantic]
    out = [
        "# Watching a run\n",
        "A linter reads spelling; most pitfalls live in shapes, dtypes, values and modes, which only a run "
        "shows. `pitfalls watch train.py ARGS…` runs a program as `python train.py ARGS…` would, with the "
        "detectors below switched on, and reports at exit each pitfall it met, once per line of your code, "
        "with how often that line met it and the case that explains it. "
        "`--format json` or `sarif` for tools, `--fail` to exit 1 when something was found, `--pedantic` for "
        "the heuristic detectors too. In Python, `with torch_pitfalls.watch.watch() as w: train()`; around your own "
        "test suite, `pytest --pitfalls-watch`; in a notebook, `%load_ext torch_pitfalls.watch`, then `%%watch` "
        "on a cell, or `%watch on` and `%watch off` around several.\n",
        "Each detector belongs to one case and is proven by it: run under the watcher, the case's broken code "
        "is reported with that case's id, its fixed code and its near miss are not. The watcher never changes "
        "what your program computes, and a detector that fails is switched off with one line in the report.\n",
        f"## The detectors ({len(sound)} sound, {len(heuristic)} heuristic)\n",
        "| case | kind | what it reports, and the fix | proofs |",
        "|---|---|---|---|",
    ]
    for d in [*sound, *heuristic]:
        kind = "heuristic (`--pedantic`)" if d.pedantic else "sound"
        out.append(f"| {case_link(d.case, built)} | {kind} | {esc(d.message)} | {_releases(det, d.case)} |")
    out.append(
        "\n*Proofs* are `python -m torch_pitfalls.watch.proofs` run with each torch of the version matrix "
        "(`make watch-versions`, recorded in `reports/watch-proofs.json`); a release with no record is "
        "not observed.\n"
    )
    out.append("## The explainer\n")
    out.append(
        "When your program raises or warns something a case's broken code recorded (the version matrix "
        "keeps each broken run's exception and warnings for every release), the report names the case and "
        "its fix, matched against the wording of your torch's release. On this build's torch it names "
        f"{len(det.explained)} cases: "
        + (", ".join(case_link(c, built) for c in sorted(det.explained)) or "none")
        + ".\n"
    )
    if det.false_positives:
        out += _false_positive_section(det.false_positives, built)
    if det.fresh and det.fresh.get("watch"):
        out += _fresh_section(det.fresh["watch"], built)
    if det.peers and det.peers.get("rows"):
        out += _peers_section(det.peers, built)
    out += [
        "## How each case is caught\n",
        "| case | `pitfalls lint` | `pitfalls watch` | explained |",
        "|---|---|---|---|",
    ]
    none = 0
    for case_id in case_ids:
        lint = ", ".join(det.lint.get(case_id, [])) or ""
        if not lint and case_id in (det.lint_preview or {}):
            lint = "with `--preview`: " + ", ".join(det.lint_preview[case_id])
        watch = ("heuristic" if det.watch[case_id].pedantic else "yes") if case_id in det.watch else ""
        explained = "yes" if case_id in det.explained else ""
        none += not (lint or watch or explained)
        out.append(f"| [{esc(case_id)}](cases/{case_id}.ipynb) | {lint} | {watch} | {explained} |")
    out.append(
        f"\nNeither tool sees {none} of the {len(case_ids)} cases: their pitfalls show only in values "
        "no check can judge without knowing what the program meant.\n"
    )
    return "\n".join(out)


def _false_positive_section(record: dict, built: set[str]) -> list[str]:
    t = record.get("totals", {})
    out = [
        "## On real training code\n",
        f"{len(record.get('programs', []))} real training programs (from pytorch/examples and others, datasets "
        f"replaced by random tensors of the same shapes) ran a few steps each under `pitfalls watch --pedantic` "
        f"(`benchmarks/watch_false_positives.py`, on torch {esc(record.get('torch', '?'))}). Every report was "
        f"judged by hand: {t.get('findings', 0)} reports, {t.get('right', 0)} right, {t.get('wrong', 0)} wrong.\n",
        "| program | steps | reported | where | times | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for prog in record.get("programs", []):
        steps = esc(prog.get("steps", ""))
        if not prog.get("findings"):
            out.append(f"| {esc(prog['program'])} | {steps} | nothing | | | |")
        for f in prog.get("findings", []):
            out.append(
                f"| {esc(prog['program'])} | {steps} | {case_link(f['case'], built)} | "
                f"{code(f.get('where', ''))} | {f.get('count', '')} | "
                f"**{esc(f.get('verdict', ''))}**: {esc(f.get('why', ''))} |"
            )
    return out + [""]


def _fresh_section(record: dict, built: set[str]) -> list[str]:
    """The held-out half of training programs written by someone who had not read the detectors
    (benchmarks/fresh/), each broken program beside its correct twin, scored once after all tuning."""
    pairs = record.get("pairs", [])
    sound = record.get("summary", {}).get("sound", {})
    any_report = sum(1 for p in pairs if p["sound"]["broken_findings"])
    out = [
        "## On programs written outside the project\n",
        f"{len(pairs)} training programs, each with one silent failure and a correct twin, written by "
        "someone who had not read the detectors or their tests (`benchmarks/fresh/`: the held-out half of a "
        "random split, scored once, after all tuning, nothing changed since). Broken programs reported at the "
        f"line of the mistake or where it bites, as the key names them: {sound.get('reported', 0)} of "
        f"{sound.get('pairs', len(pairs))}; with a report anywhere in the program: {any_report}; reports on the "
        f"correct twins: {sound.get('false_alarms_on_fixed', 0)}.\n",
        "| program | the failure | closest case | reported (case@line) | on the twin |",
        "|---|---|---|---|---|",
    ]
    for p in pairs:
        found = ", ".join(p["sound"]["broken_findings"]) or "nothing"
        twin = ", ".join(p["sound"]["false_alarms_on_fixed"]) or "nothing"
        out.append(
            f"| {esc(p['id'])} | {esc(p['pitfall'])} | {case_link(p['corpus_case'], built) if p['corpus_case'] else ''} "
            f"| {code(found)} | {esc(twin)} |"
        )
    return out + [""]


def _cell(text: object) -> str:
    """Text for a table cell: escaped, on one line, its pipes kept from splitting the cell."""
    return esc(" ".join(str(text).split())).replace("|", "\\|")


def _peer_result(row: dict | None, variant: str) -> str:
    """What a tool did with one program, in a word or two: on a broken program, whether it found
    the pitfall; on a fixed one, whether it stayed quiet."""
    if row is None:
        return ""
    if row.get("unjudged"):
        return "unjudged"
    if not row["reported"]:
        return "failed" if row.get("tool_errors") else ("nothing" if variant == "broken" else "quiet")
    if row["on_target"]:
        return "found" if variant == "broken" else "false alarm"
    return "other"


def _peers_section(record: dict, built: set[str]) -> list[str]:
    """The watcher beside the other run-time tools, on the same broken and fixed programs
    (benchmarks/watch_peers.py): which reported what, each report judged by hand, and what each
    costs a training loop. Every figure is the record's."""
    tools = record.get("tools", {})
    order = list(tools)
    rows = record.get("rows", [])
    by = {(r["case"], r["variant"], r["tool"]): r for r in rows}
    cases = [c for c in record.get("cases", []) if any(r["case"] == c for r in rows)]
    summary = record.get("summary", {})

    def name(tool: str) -> str:
        return tools.get(tool, {}).get("name") or tool

    out = [
        "## Side by side with other tools\n",
        f"The broken and the fixed programs of {len(cases)} cases whose silent training failures the "
        "watcher's detectors report ran under `pitfalls watch` and under the other tools that look for such "
        f"failures at run time (`benchmarks/watch_peers.py`, on torch {esc(record.get('torch', '?'))}, on the "
        "CPU, each program in a fresh interpreter). Each tool was applied as its own documentation says; a tool "
        "that sits in the training loop was attached to the model, the optimizer and the first batch that the "
        "program builds. Every report was read and judged by hand: *found* when it is about the case's pitfall, "
        "*other* when it is about something else. On a fixed program, a report of the pitfall is a "
        "*false alarm*.\n",
        "| tool | version | how it was applied | broken programs with a report | of them, about the pitfall "
        "| fixed programs with a report |",
        "|---|---|---|---|---|---|",
    ]
    for tool in order:
        t, s = tools[tool], summary.get(tool, {})
        if t.get("status") != "ran":
            out.append(
                f"| {_cell(name(tool))} | {_cell(t.get('version') or '')} | not run: {_cell(t.get('why_not'))} | | | |"
            )
            continue
        out.append(
            f"| {_cell(name(tool))} | {_cell(t.get('version') or '')} | {_cell(t.get('applied', ''))} | "
            f"{s.get('broken_reported', 0)} of {s.get('cases', 0)} | {s.get('broken_on_target', 0)} | "
            f"{s.get('fixed_reported', 0)} of {s.get('cases', 0)} |"
        )
    out += [
        "",
        "Each cell is the broken program, then the fixed one: *found*, *other* or *nothing* on the broken "
        "program; *quiet*, *false alarm* or *other* on the fixed one (*failed*: the tool could not run it).\n",
        "| case | " + " | ".join(_cell(name(t)) for t in order) + " |",
        "|---|" + "---|" * len(order),
    ]
    for case in cases:
        cells = [
            f"{_peer_result(by.get((case, 'broken', t)), 'broken')} / {_peer_result(by.get((case, 'fixed', t)), 'fixed')}"
            for t in order
        ]
        out.append(f"| {case_link(case, built)} | " + " | ".join(cells) + " |")
    judged = sum(1 for r in rows if r["reported"] or r.get("tool_errors"))
    out += [
        "",
        f"Every report ({judged} in all), its first lines and the verdict on it, with the line it rests on, is in "
        "`reports/watch-peers.json`.\n",
    ]
    overhead = record.get("overhead")
    if overhead and overhead.get("ratios"):
        sides = overhead.get("sides", {})
        out += [
            "",
            "### What each costs a training loop\n",
            f"One training loop ({_cell(overhead.get('workload', ''))}), {overhead.get('steps', '?')} steps, ran "
            "plain and under each tool as it was applied above, in interleaved rounds: "
            f"{overhead.get('rounds', '?')} rounds in one interpreter"
            + (
                f", and {overhead['traincheck_rounds']} for TrainCheck, which runs the loop in its own "
                "instrumented interpreter (the loop timed from inside the program)"
                if overhead.get("traincheck_rounds")
                else ""
            )
            + ". A ratio is the median over the rounds of the loop's time under the tool over the plain loop's "
            "time in the same round, CPU time of the process, wall-clock time beside; a one-off check on the first "
            "batch counts in its side's time.\n",
            "| around the loop | CPU time, times the plain loop | wall time, times the plain loop |",
            "|---|---|---|",
        ]
        for side, ratio in overhead["ratios"].items():
            wall = overhead.get("wall_ratios", {}).get(side, "")
            out.append(f"| {_cell(sides.get(side, side))} | {ratio} | {wall} |")
        for side, error in overhead.get("errors", {}).items():
            out.append(f"| {_cell(sides.get(side, side))} | could not run: {_cell(error)} | |")
    return out + [""]
