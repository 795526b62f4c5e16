"""Score `pitfalls lint` and `pitfalls watch` on the fresh probe material (benchmarks/fresh/README.md).

    .venv/bin/python benchmarks/fresh/score.py tuning      # the half rules and detectors may be tuned on
    .venv/bin/python benchmarks/fresh/score.py held_out --json reports/fresh-heldout.json
    .venv/bin/python benchmarks/fresh/score.py held_out --only lint --lint-set lint2   # the second set
    .venv/bin/python benchmarks/fresh/score.py tuning --only lint --lint-set lint4     # the fourth set
    .venv/bin/python benchmarks/fresh/score.py tuning --only lint --lint-set lint5     # the fifth set
    .venv/bin/python benchmarks/fresh/score.py tuning --only lint --lint-set lint6     # the sixth set
    .venv/bin/python benchmarks/fresh/score.py tuning --only lint --lint-set lint7     # the seventh set
    .venv/bin/python benchmarks/fresh/score.py tuning --only lint --lint-set lint8     # the eighth set

watch: each pair's broken and fixed program run under `pitfalls watch --format json` (sound
detectors), then again with `--pedantic`. A broken program counts as reported when a finding of
any case lies at its key's ``cause_line`` or ``bites_line``; every finding on a fixed twin is a
false alarm. lint: `pitfalls lint --format json` on each script; a planted pitfall is found when
a finding lies at its ``line`` or one of its ``alt_lines``; every other finding is listed for
reading (a correct script's findings are false unless reading says otherwise).

Standard library only; the tools run as subprocesses of this interpreter, one at a time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
SPLIT = tomllib.loads((HERE / "split.toml").read_text(encoding="utf-8"))


def _tool(args: list[str], cwd: Path) -> list[dict]:
    """The findings of one `pitfalls lint` (JSON on stdout) or `pitfalls watch` (JSON to a file: the
    program's own output stays on stdout) run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        command = [sys.executable, "-m", "torch_pitfalls", args[0], "--format", "json"]
        if args[0] == "watch":
            command += ["--output", str(out)]
        proc = subprocess.run(command + args[1:], cwd=cwd, capture_output=True, text=True, timeout=600)
        text = out.read_text(encoding="utf-8") if args[0] == "watch" and out.exists() else proc.stdout
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            raise SystemExit(f"no report from {' '.join(args)}: {proc.stderr[-300:]}") from None
    return data.get("findings", []) if isinstance(data, dict) else data


def _line(finding: dict) -> int:
    return int(finding.get("line") or finding.get("location", {}).get("line") or 0)


def score_watch(half: str) -> dict:
    key = {p["id"]: p for p in tomllib.loads((HERE / "watch" / "key.toml").read_text(encoding="utf-8"))["pair"]}
    rows = []
    for pid in SPLIT["watch"][half]:
        pair = key[pid]
        wanted = {pair["cause_line"], pair.get("bites_line", pair["cause_line"])}
        row = {"id": pid, "pitfall": pair["pitfall"], "corpus_case": pair["corpus_case"]}
        for mode, flags in (("sound", []), ("pedantic", ["--pedantic"])):
            broken = _tool(["watch", *flags, pair["broken"]], HERE / "watch")
            fixed = _tool(["watch", *flags, pair["fixed"]], HERE / "watch")
            at = [f for f in broken if Path(f["path"]).name == pair["broken"] and _line(f) in wanted]
            row[mode] = {
                "reported": bool(at),
                "cases_at_the_line": sorted({f["case"] for f in at}),
                "broken_findings": [f"{f['case']}@{_line(f)}" for f in broken],
                "false_alarms_on_fixed": [f"{f['case']}@{_line(f)}" for f in fixed],
            }
        rows.append(row)
    summary = {
        mode: {
            "reported": sum(r[mode]["reported"] for r in rows),
            "pairs": len(rows),
            "false_alarms_on_fixed": sum(len(r[mode]["false_alarms_on_fixed"]) for r in rows),
        }
        for mode in ("sound", "pedantic")
    }
    return {"summary": summary, "pairs": rows}


def score_lint(half: str, folder: str = "lint") -> dict:
    """``folder``: lint (the first set, split in split.toml), lint2 ... lint20 (each split in its own split.toml)."""
    split = SPLIT if folder == "lint" else tomllib.loads((HERE / folder / "split.toml").read_text(encoding="utf-8"))
    key = {s["file"]: s for s in tomllib.loads((HERE / folder / "key.toml").read_text(encoding="utf-8"))["script"]}
    rows = []
    for name in split["lint"][half]:
        findings = _tool(["lint", name], HERE / folder)
        planted = key[name]["planted"]
        matched, found = set(), []
        for p in planted:
            lines = {p["line"], *p.get("alt_lines", [])}
            hits = [f for f in findings if _line(f) in lines]
            found.append({"pitfall": p["pitfall"], "corpus_case": p["corpus_case"], "found": bool(hits)})
            matched |= {id(f) for f in hits}
        others = [
            f"{f.get('rule', f.get('code', '?'))}@{_line(f)}: {f.get('message', '')[:90]}"
            for f in findings
            if id(f) not in matched
        ]
        rows.append({"file": name, "planted": found, "other_findings": others})
    planted = [p for r in rows for p in r["planted"]]
    summary = {
        "planted": len(planted),
        "found": sum(p["found"] for p in planted),
        "findings_at_planted_lines": sum(1 for r in rows for p in r["planted"] if p["found"]),
        "other_findings": sum(len(r["other_findings"]) for r in rows),
        "correct_scripts": sum(1 for r in rows if not r["planted"]),
        "findings_on_correct_scripts": sum(len(r["other_findings"]) for r in rows if not r["planted"]),
    }
    return {"summary": summary, "scripts": rows}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("half", choices=("tuning", "held_out"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--only", choices=("lint", "watch"))
    parser.add_argument(
        "--lint-set",
        choices=(
            "lint",
            "lint2",
            "lint3",
            "lint4",
            "lint5",
            "lint6",
            "lint7",
            "lint8",
            "lint9",
            "lint10",
            "lint11",
            "lint12",
            "lint13",
            "lint14",
            "lint15",
            "lint16",
            "lint17",
            "lint18",
            "lint19",
            "lint20",
        ),
        default="lint",
        help="which set of lint scripts",
    )
    args = parser.parse_args(argv)
    result = {"half": args.half, "lint_set": args.lint_set}
    if args.only in (None, "watch"):
        result["watch"] = score_watch(args.half)
    if args.only in (None, "lint"):
        result["lint"] = score_lint(args.half, args.lint_set)
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
