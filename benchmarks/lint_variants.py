"""Recall and precision of every lint rule on its variant set (tests/lint/lint_variants/).

    .venv/bin/python benchmarks/lint_variants.py [--json reports/lint-variants.json]

For each rule with a set: recall = pitfall programs in which the rule fires / pitfall programs;
precision = the rule's findings in pitfall programs / all its findings over both sets (pitfall and
near-miss programs). Rules run as with ``--all-versions`` (active_rules(None)). Rules without a set
are listed as missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from torch_pitfalls.lint import RULES, active_rules, lint_text  # noqa: E402


def _variants():
    spec = importlib.util.spec_from_file_location("lint_variants", ROOT / "tests/lint/lint_variants/__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure() -> dict:
    variants, every = _variants(), active_rules(None)
    rules, missing = {}, []
    for rule in RULES:
        found = variants.load(rule.id)
        if found is None:
            missing.append(rule.id)
            continue
        hits_in = {
            name: sum(f.rule == rule.id for f in lint_text(text, f"{name}.py", every))
            for name, text in found.PITFALL.items()
        }
        hits_out = {
            name: sum(f.rule == rule.id for f in lint_text(text, f"{name}.py", every))
            for name, text in found.NEAR_MISS.items()
        }
        caught = sorted(n for n, k in hits_in.items() if k)
        total = sum(hits_in.values()) + sum(hits_out.values())
        rules[rule.id] = {
            "pitfalls": len(found.PITFALL),
            "near_misses": len(found.NEAR_MISS),
            "recall": round(len(caught) / len(found.PITFALL), 3),
            "precision": round(sum(hits_in.values()) / total, 3) if total else None,
            "missed": sorted(set(found.PITFALL) - set(caught)),
            "near_misses_flagged": sorted(n for n, k in hits_out.items() if k),
        }
    return {"rules": rules, "missing": missing}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    result = measure()
    print(f"{'rule':8} {'recall':>7} {'precision':>9}  pitfalls/near-misses  missed")
    for rule, r in result["rules"].items():
        precision = "-" if r["precision"] is None else f"{r['precision']:.0%}"
        print(
            f"{rule:8} {r['recall']:>7.0%} {precision:>9}  {r['pitfalls']:>8}/{r['near_misses']:<11}  "
            f"{', '.join(r['missed']) or '-'}"
        )
    if result["missing"]:
        print(f"no variant set: {', '.join(result['missing'])}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
