"""A case's broken and fixed programs as a linter reads them: the variant function and what it
uses, nothing else.

A case module holds both variants, the symptom, the check and demo cells; a linter run on the
whole file would see the broken code's API inside the fixed program's file. The view of a variant
is the module's imports, the variant function, and the module-level definitions it refers to,
transitively (a helper class, a constant): the program that variant is.
"""
from __future__ import annotations

import ast
from pathlib import Path

VARIANTS = ("broken", "fixed")


def _defined(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def variant_nodes(tree: ast.Module, variant: str, path: Path | str = "<module>") -> list[ast.stmt]:
    """The module-level statements of one variant's program: the imports, the variant function
    and the definitions it refers to, transitively, in source order."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    defs = {name: node for node in tree.body for name in _defined(node)}
    if variant not in defs:
        raise ValueError(f"{path}: no function {variant}()")
    keep, todo = set(), [variant]
    while todo:
        name = todo.pop()
        node = defs.get(name)
        if node is None or id(node) in keep:
            continue
        keep.add(id(node))
        todo.extend(_used(node) - {variant})
    return [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) or id(n) in keep]


def variant_source(path: Path, variant: str) -> str:
    """The source text of one variant's program (see the module's docstring)."""
    text = Path(path).read_text(encoding="utf-8")
    body = variant_nodes(ast.parse(text), variant, path)
    return "\n\n".join(ast.get_source_segment(text, n, padded=False) for n in body) + "\n"


RUNNERS = ("compile", "exec", "eval", "run_python")


def variant_programs(path: Path, variant: str) -> list[tuple[str, str]]:
    """(label, source) of every program a variant is: its view, and each module-level string it
    hands to compile/exec/eval/run_python (a case about code that cannot be imported keeps it in
    a string: ``.cuda(async=True)``)."""
    view = variant_source(path, variant)
    tree = ast.parse(view)
    strings = {n.targets[0].id: n.value.value for n in tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}
    programs = [(f"{Path(path).stem}.{variant}.py", view)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in RUNNERS and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Name) and arg.id in strings:
                programs.append((f"{Path(path).stem}.{variant}.{arg.id}.py", strings[arg.id]))
    return programs
