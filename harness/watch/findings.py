"""What the watcher reports: one finding per case and place in the user's code, with how often
that place fired; as text, JSON and SARIF."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Finding:
    case: str
    message: str  # what went wrong here and the fix, in one line
    path: str  # the user's file: the first frame outside torch and the watcher
    line: int
    function: str
    kind: str = "detected"  # "detected" by a detector, or "explained" (an error or warning torch raised)
    count: int = 1
    detail: str = ""  # what this firing saw (shapes, names, values), the first time
    pedantic: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def page(self) -> str:
        # the case's page on the site (relative to its root), where the pitfall is run and explained
        return f"cases/{self.case}.html"

    def as_text(self) -> str:
        times = f" ({self.count} times)" if self.count > 1 else ""
        head = f"{self.path}:{self.line}: [{self.case}] {self.message}{times}"
        more = f"\n    {self.detail}" if self.detail else ""
        return f"{head}{more}\n    the pitfall, run and explained: pitfalls show {self.case}"

    def to_json(self) -> dict:
        out = asdict(self)
        out["page"] = self.page
        return out


def text_report(findings: list[Finding], errors: list[str]) -> str:
    if not findings and not errors:
        return "pitfalls watch: nothing found"
    lines = [f"pitfalls watch: {len(findings)} finding{'s' * (len(findings) != 1)}"]
    lines += [f.as_text() for f in findings]
    lines += [f"pitfalls watch: watcher error (your program was not affected): {e}" for e in errors]
    return "\n".join(lines)


def json_report(findings: list[Finding], errors: list[str], torch_version: str | None, exit_status: int | None) -> dict:
    return {
        "tool": "pitfalls watch",
        "torch": torch_version,
        "exit_status": exit_status,
        "findings": [f.to_json() for f in findings],
        "errors": list(errors),
    }


def sarif_report(findings: list[Finding], version: str) -> dict:
    cases = sorted({f.case for f in findings})
    rules = [
        {
            "id": c,
            "name": c,
            "shortDescription": {"text": next(f.message for f in findings if f.case == c)},
            "help": {"text": f"The pitfall, run and explained: pitfalls show {c} (the site's cases/{c}.html)"},
        }
        for c in cases
    ]
    results = [
        {
            "ruleId": f.case,
            "ruleIndex": cases.index(f.case),
            "level": "warning",
            "message": {"text": f"{f.message}{f' ({f.detail})' if f.detail else ''}"},
            "occurrenceCount": f.count,
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": f.path}, "region": {"startLine": f.line}}}],
        }
        for f in findings
    ]
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {"tool": {"driver": {"name": "pitfalls-watch", "version": version, "rules": rules}}, "results": results}
        ],
    }
