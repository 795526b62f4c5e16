"""What: torch.load without weights_only.
Why: It warns in torch 2.4-2.5; since 2.6 weights_only=True is the default and refuses anything but
tensors, primitives and their containers. On 2.6 and later only, a load visibly of tensors is left
alone.
Fix: pass weights_only= explicitly (False only for a file you trust).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.fixes import Fix, _add_keyword
from torch_pitfalls.lint.rules.base import CALL, Rule, _has_kw, _is_call_to, _method
from torch_pitfalls.lint.walking import walk

# torch.load without weights_only (PTF126). On 2.4-2.5 every such load warns (FutureWarning,
# torch-load-weights-only-warning); from 2.6 the default is weights_only=True, which refuses only
# what is not tensors, primitives and their containers (torch-load-weights-only-default). So where
# the code runs only on >= 2.6 (--torch, the installed torch, or the package's declared range), a
# load that visibly reads tensors is right as written: its result goes to ``load_state_dict``, or
# the same file was written in the same function from a ``.state_dict()`` or a tensor. A load given
# its own pickle_module changes on no release.
WEIGHTS_ONLY_WARNS = ">=2.4,<2.6"  # the range of torch-load-weights-only-warning (the FutureWarning)


def _load_without_weights_only(node, ctx) -> bool:
    if not (_is_call_to(node, ctx, "torch.load", "torch.serialization.load") and not _has_kw(node, "weights_only")):
        return False
    if "TypeError" in ctx.caught:  # the fallback for a torch without weights_only (before 1.13)
        return False
    if _names_pickle_module(node):
        return False
    return ctx.releases.meets((WEIGHTS_ONLY_WARNS,)) or not _loads_tensors(node, ctx)


def _names_pickle_module(load: ast.Call) -> bool:
    """A ``pickle_module`` of its own (``dill``): torch 2.4-2.5 warn only when it is left out, and from
    2.6 a load given one defaults to ``weights_only=False`` (``_default_to_weights_only``), as before."""
    given = [k.value for k in load.keywords if k.arg == "pickle_module"] + load.args[2:3]
    return any(not (isinstance(v, ast.Constant) and v.value is None) for v in given)


def _loads_tensors(load: ast.Call, ctx) -> bool:
    parent = ctx.parent(load)
    if _method(parent, "load_state_dict") and load in parent.args:
        return True
    calls = [n for n in walk(ctx.function) if isinstance(n, ast.Call)] if ctx.function is not None else []
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id  # sd = torch.load(f); ...; model.load_state_dict(sd)
        if any(
            _method(c, "load_state_dict")
            and c.lineno >= load.lineno
            and c.args
            and isinstance(c.args[0], ast.Name)
            and c.args[0].id == name
            for c in calls
        ):
            return True
    if not load.args:
        return False
    source = _file_of(load.args[0])
    return any(
        _is_call_to(c, ctx, "torch.save")
        and len(c.args) >= 2
        and c.lineno <= load.lineno
        and _file_of(c.args[1]) == source
        and _holds_tensors(c.args[0], ctx)
        for c in calls
    )


def _file_of(node) -> str:
    """What names the file: ``f`` for ``f`` and ``f.name`` (a temporary file's path), else the code."""
    if isinstance(node, ast.Attribute) and node.attr == "name" and isinstance(node.value, ast.Name):
        node = node.value
    return ast.dump(node)


def _holds_tensors(node, ctx) -> bool:
    return _method(node, "state_dict") or ctx.kind(node, node.lineno) == "tensor"


RULE = Rule(
    "PTF126",
    ("torch-load-weights-only-default", "torch-load-weights-only-warning", "weights-only-numpy-in-checkpoint"),
    "torch.load without weights_only warns in torch 2.4-2.5 and, since 2.6, refuses any non-tensor object "
    "(weights_only=True by default); pass weights_only= explicitly",
    _load_without_weights_only,
    nodes=CALL,
    upgrade=True,
    fix=Fix(
        "torch.load(f) -> torch.load(f, weights_only=False) (what it did before torch 2.6)",
        _add_keyword(("load",), "weights_only=False", lambda c: not any(k.arg == "weights_only" for k in c.keywords)),
        caution="weights_only=False unpickles whatever the file holds: pass it only for files you trust, "
        "else weights_only=True (with torch.serialization.safe_globals for what the file needs)",
    ),
    needs=("load",),
)
