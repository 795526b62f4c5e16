"""What a name in a module refers to, from its imports: ``F.softmax`` is
``torch.nn.functional.softmax`` after ``import torch.nn.functional as F``.

Static and module-wide (the way linters such as TorchFix resolve names): an import anywhere in
the module, at the top or inside a function, binds its name for the whole module.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.walking import walk


def import_map(tree: ast.AST) -> dict[str, str]:
    """Local name -> qualified name, for every import in the module. A name imported twice keeps
    its first import in source order: in ``try: from torch.func import f`` / ``except ImportError:
    from functorch import f`` the fallback is not what the code means on a current torch."""
    names: dict[str, str] = {}
    imports = sorted(
        (n for n in walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))),
        key=lambda n: (n.lineno, n.col_offset),
    )
    for node in imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names.setdefault(alias.asname, alias.name)
                else:  # `import torch.nn` binds `torch`
                    top = alias.name.split(".")[0]
                    names.setdefault(top, top)
        elif node.module and node.level == 0:
            for alias in node.names:
                names.setdefault(alias.asname or alias.name, f"{node.module}.{alias.name}")
    return names


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` as written, or None for anything that is not a chain of names."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def qualified(node: ast.AST, imports: dict[str, str]) -> str | None:
    """The qualified name an expression refers to through the imports, or None."""
    text = dotted(node)
    if text is None:
        return None
    head, _, rest = text.partition(".")
    if head not in imports:
        return None
    return imports[head] + (f".{rest}" if rest else "")


def module_aliases(tree: ast.AST, imports: dict[str, str]) -> dict[str, str]:
    """The imports, plus module-level aliases made by assignment (``F = torch.nn.functional``,
    ``init = nn.init``): a name bound once, at the top level, to an imported dotted name."""
    names = dict(imports)
    assigned: dict[str, int] = {}
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                for n in walk(t):
                    if isinstance(n, ast.Name):
                        assigned[n.id] = assigned.get(n.id, 0) + 1
    for node in getattr(tree, "body", []):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and assigned.get(node.targets[0].id) == 1
            and node.targets[0].id not in names
        ):
            found = qualified(node.value, imports)
            if found and isinstance(node.value, (ast.Attribute, ast.Name)):
                names[node.targets[0].id] = found
    return names
