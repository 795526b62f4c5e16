"""Findings as SARIF 2.1.0 (what GitHub code scanning uploads): one run, one tool, its rules
(id, what goes wrong and the fix, the case that proves it) and a result per finding; a finding's
``properties`` say whether ``pitfalls lint --fix`` has a fix for it and whether that fix is safe."""

from __future__ import annotations

from pathlib import Path

from torch_pitfalls import __version__
from torch_pitfalls.lint import PARSE_ERROR

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def sarif(findings, rules, fix_of=lambda finding: None, extra=lambda finding: {}) -> dict:
    """``fix_of(finding)``: its fix (harness/lint/cli.py's FixInfo.of) or None; ``extra(finding)``:
    more of its properties (``--upgrade``: the changes)."""
    ids = [r.id for r in rules] + [PARSE_ERROR]
    described = [
        {
            "id": r.id,
            "name": r.case,
            "shortDescription": {"text": r.message.split(";")[0]},
            "fullDescription": {"text": r.message},
            "help": {
                "text": f"{r.message}. The pitfall, run and "
                f"explained: pitfalls show {r.case} "
                f"(the site's cases/{r.case}.html)"
            },
            "properties": {"cases": list(r.cases)},
        }
        for r in rules
    ]
    described.append(
        {
            "id": PARSE_ERROR,
            "name": "does-not-parse",
            "shortDescription": {"text": "the file does not parse"},
            "fullDescription": {"text": "a file that does not parse is not checked further"},
        }
    )
    results = []
    for f in findings:
        properties = {
            **({"fix": fix_of(f)} if fix_of(f) else {}),
            **({"preview": True} if f.preview else {}),
            **extra(f),
        }
        results.append(
            {
                "ruleId": f.rule,
                "ruleIndex": ids.index(f.rule) if f.rule in ids else 0,
                "level": "error" if f.rule == PARSE_ERROR else ("note" if f.preview else "warning"),
                "message": {"text": f.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": Path(f.path).as_posix(), "uriBaseId": "%SRCROOT%"},
                            "region": {"startLine": f.line, "startColumn": f.col},
                        }
                    }
                ],
                **({"properties": properties} if properties else {}),
            }
        )
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "pitfalls-lint", "version": __version__, "rules": described}},
                "results": results,
            }
        ],
    }
