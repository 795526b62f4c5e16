"""Each ``--fix`` proven by running it, in this interpreter, on this torch.

For every fix (a rule's, in the rule's module: harness/lint/rules/) and every case of its rule: the
linter lints the case module's broken program (the ``broken`` function and the definitions it uses,
and the program strings it compiles), applies the rule's fix there, and the modified module is
loaded from a temp folder with ``broken`` standing in as the fix. It is then held to the standard of
the case's own fix (torch_pitfalls.run.runner.fixed_step): it raises nothing and warns nothing, the
case's ``symptom`` says no, and the case's ``check`` accepts its result. The rule must also no
longer flag it.

tests/lint/test_fix.py asserts it on the local torch; ``python -m torch_pitfalls.lint.fix_proofs --json
PATH`` records it for another release (the matrix build's ``--fix-proofs``, into
``reports/lint-fix-proofs.json``), which is what makes a fix safe (harness/lint/fixes.py). Each
fix's record keeps the hash of its rule's module (``sha256``: fixes.fix_sha256), so a record stays
valid until that rule's own text changes.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import tempfile
from pathlib import Path

from torch_pitfalls.casefile import CaseFile
from torch_pitfalls.lint import RULES_BY_ID, lint_text
from torch_pitfalls.lint.fixes import fix_file_text, fix_sha256
from torch_pitfalls.lint.rules import FIXES
from torch_pitfalls.lint.walking import walk
from torch_pitfalls.loader import case_id_of, default_cases_dir, find_case_files, load_case


def _strings(tree: ast.Module, kept) -> dict[str, ast.Assign]:
    """The module-level program strings of the variant (``SOURCE = "...cuda(async=True)..."``)."""
    return {
        n.targets[0].id: n
        for n in kept
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and isinstance(n.value, ast.Constant)
        and isinstance(n.value.value, str)
    }


def _broken_program(text: str) -> tuple[list[ast.AST], dict[str, ast.Assign]]:
    """The broken variant's definitions (imports aside), and among them its program strings."""
    case = CaseFile("case.py", text)
    kept = [n for n in case.variant_nodes("broken") if not isinstance(n, (ast.Import, ast.ImportFrom))]
    return kept, _strings(case.tree, kept)


def fixed_broken_program(text: str, rule) -> tuple[str, int, list[str]]:
    """The case module's text with the rule's fix applied to its broken program: (text, how many
    findings were fixed, why others were not)."""
    from torch_pitfalls.lint.fixes import Source

    _, strings = _broken_program(text)

    def in_broken(now: str) -> list:
        spans = _spans(now)  # once per pass, not once per finding
        return [f for f in lint_text(now, "case.py", [rule]) if any(a <= f.line <= b for a, b in spans)]

    done = fix_file_text(text, in_broken)
    count, refused = len(done.fixed), [why for _, why in done.refused]
    text = done.text
    for name in strings:  # the program strings, each fixed as a file of its own
        src = Source(text)
        node = _strings(src.tree, src.tree.body)[name]
        program = node.value.value
        inner = fix_file_text(program, lambda now: lint_text(now, f"{name}.py", [rule], report_parse_errors=False))  # noqa: B023 - called in this iteration
        refused += [why for _, why in inner.refused]
        if inner.changed:
            count += len(inner.fixed)
            text = text[: src.start(node.value)] + repr(inner.text) + text[src.end(node.value) :]
    return text, count, refused


def prove(rule_id: str, case_path: Path) -> dict:
    """Whether the rule's fix, applied to the case's broken program, makes it a proven fix."""
    from torch_pitfalls.run.runner import VariantFailure, fixed_step, missing_requirement

    rule = RULES_BY_ID[rule_id]
    text, count, refused = fixed_broken_program(case_path.read_text(encoding="utf-8"), rule)
    if not count:
        return {"proven": False, "why": "nothing fixed in the broken program" + (f": {refused[0]}" if refused else "")}
    still = [f for f in lint_text(text, "case.py", [rule]) if f.rule == rule_id]
    with tempfile.TemporaryDirectory(prefix="pitfalls-fix-proof-") as tmp:
        path = Path(tmp) / case_path.parent.name / case_path.name
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
        name = f"pitfall_cases.{case_path.parent.name}.{case_path.stem}"
        saved = sys.modules.get(name)  # the loader files a case under its name: the real one comes back after
        try:
            lc = load_case(path)
            missing = missing_requirement(lc)
            if missing:
                return {"proven": False, "why": missing, "fixed": count}
            if FIXES[rule_id].proof == "compile":
                return _compiles(lc, text, rule_id, count)
            lc.module.fixed = lc.module.broken  # the linter's fix, judged as the case's own fix is
            try:
                result = fixed_step(lc, "cpu")
            except VariantFailure as exc:
                return {"proven": False, "why": str(exc), "fixed": count}
        except Exception as exc:  # noqa: BLE001 - a fix that breaks the module is a failed proof, said why
            return {
                "proven": False,
                "why": f"the fixed module does not load: {type(exc).__name__}: {exc}"[:300],
                "fixed": count,
            }
        finally:
            if saved is not None:
                sys.modules[name] = saved
            else:
                sys.modules.pop(name, None)
    if not result.ok:
        why = result.problem.replace("the fixed variant", "the linter-fixed program")
        return {"proven": False, "why": f"{why}: {result.summary}"[:300], "fixed": count}
    if any(a <= f.line <= b for f in still for a, b in _spans(text)):
        return {"proven": False, "why": f"{rule_id} still flags the linter-fixed program", "fixed": count}
    return {"proven": True, "why": "", "fixed": count}


def _compiles(lc, text: str, rule_id: str, count: int) -> dict:
    """A fix to a program that does not parse (``.cuda(async=True)``): the case's broken program now
    compiles (its symptom, the SyntaxError, is gone), and running each fixed program with its free
    names bound to a small tensor reaches torch with its arguments accepted: it succeeds, or fails
    only for want of a GPU (a TypeError for the keyword would refute it). The call's own run on CUDA
    is not observed here."""
    import torch

    from torch_pitfalls.observation import observe

    run = observe(lc.module.broken, "cpu")
    if run.error is not None or lc.module.symptom(run):
        return {
            "proven": False,
            "why": f"the linter-fixed program still fails to compile: {run.error!r}"[:300],
            "fixed": count,
        }
    for name, node in _broken_program(text)[1].items():
        program = node.value.value
        free = {n.id for n in walk(ast.parse(program)) if isinstance(n, ast.Name)}
        namespace = {n: torch.tensor([3, 1, 2]) for n in free}
        try:
            exec(compile(program, f"{name}.py", "exec"), namespace)
        except Exception as exc:  # noqa: BLE001 - a refuted fix, said why
            # a CPU build refuses the call itself ("Torch not compiled with CUDA enabled"), after its arguments
            no_gpu = isinstance(exc, (AssertionError, RuntimeError)) and any(
                word in str(exc).lower() for word in ("cuda", "nvidia")
            )
            if not no_gpu:
                return {
                    "proven": False,
                    "why": f"the fixed program fails: {type(exc).__name__}: {exc}"[:300],
                    "fixed": count,
                }
    return {
        "proven": True,
        "why": "",
        "fixed": count,
        "how": "compiles, the symptom is gone and torch accepts the call's arguments; the run on CUDA not observed",
    }


def _spans(text: str) -> list[tuple[int, int]]:
    """The lines of the broken program's definitions (not its program strings)."""
    kept, strings = _broken_program(text)
    programs = strings.values()
    return [(n.lineno, n.end_lineno) for n in kept if n not in programs]


def prove_all(cases_dir: Path | None = None, rules=None) -> dict:
    import torch

    files = {case_id_of(p): p for p in find_case_files(Path(cases_dir or default_cases_dir()))}
    fixes = {}
    for rule_id in sorted(rules or FIXES):
        key = fix_sha256(rule_id)  # the text of the rule's module that this proof is of
        cases = {case: prove(rule_id, files[case]) for case in RULES_BY_ID[rule_id].cases}
        failed = [f"{case}: {r['why']}" for case, r in cases.items() if not r["proven"]]
        fixes[rule_id] = {"sha256": key, "proven": not failed, "why": "; ".join(failed), "cases": cases}
    return {
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "fixes": fixes,
        "proven": sum(f["proven"] for f in fixes.values()),
        "total": len(fixes),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m torch_pitfalls.lint.fix_proofs", description=__doc__.split("\n")[0])
    p.add_argument("--json", metavar="PATH", help="also write the record here")
    p.add_argument("--cases", metavar="DIR", help="the cases folder (default: ./cases or the installed corpus)")
    args = p.parse_args(argv)
    record = prove_all(args.cases)
    for rule_id, proof in record["fixes"].items():
        print(f"{rule_id}  {'proven' if proof['proven'] else 'NOT proven: ' + proof['why']}")
    print(f"torch {record['torch']}: {record['proven']} of {record['total']} fixes proven")
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return 0 if record["proven"] == record["total"] else 1


if __name__ == "__main__":
    sys.exit(main())
