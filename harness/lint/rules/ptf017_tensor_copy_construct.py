"""What: torch.tensor(t) where t is already a tensor.
Why: It copies t and cuts the copy from the graph, with a UserWarning.
Fix: write t.clone().detach() (or t.detach() where no copy is needed).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.guards import _always_leaves
from torch_pitfalls.lint.rules.base import CALL, Rule, _called_name, _is_call_to
from torch_pitfalls.lint.rules.shared.flow import branch_side, climb
from torch_pitfalls.lint.walking import walk


def _tensor_copy_construct(node, ctx) -> bool:
    """``torch.tensor(t)`` where ``t`` already holds a tensor: a copy detached from the graph, with a warning."""
    return (
        _is_call_to(node, ctx, "torch.tensor")
        and len(node.args) >= 1
        and ctx.kind(node.args[0]) == "tensor"
        and not _type_tested(node, node.args[0], ctx)
        and not _from_own_collate(node.args[0], node.lineno, ctx)
        and not _converts_its_parameter(node.args[0], node.lineno, ctx)
    )


def _converts_its_parameter(value, line: int, ctx) -> bool:
    """``torch.tensor(p)`` on a parameter that is still as the caller passed it: the function converts what
    it is given (efficientvit's ``postprocess_masks(masks: torch.Tensor, ...)`` gets onnxruntime's NumPy
    arrays and a ``shape[:2]`` tuple). Only the annotation says tensor, and the conversion says otherwise."""
    if not isinstance(value, ast.Name):
        return False
    binding, _ = ctx.bindings.lookup(value.id, ctx.chain(), line)
    return binding is not None and binding.how == "param"


def _from_own_collate(value, line: int, ctx) -> bool:
    """``value`` is (an entry of) a batch of a DataLoader built with a ``collate_fn`` of its own, which
    hands back whatever it builds: F5-TTS's collator returns the target lengths as a list of ints,
    which ``torch.tensor`` is right to convert."""
    expr = ctx.resolve(value, line)
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return False
    binding, where = ctx.bindings.lookup(expr.id, ctx.chain(), line)
    if binding is None or binding.how not in ("iter", "item") or binding.value is None:
        return False
    for n in walk(binding.value):
        loader = ctx.bindings.value_of(n.id, where, binding.line) if isinstance(n, ast.Name) else n
        if (
            isinstance(loader, ast.Call)
            and (ctx.qualified(loader.func) or "").endswith("DataLoader")
            and any(k.arg == "collate_fn" for k in loader.keywords)
        ):
            return True
    return False


def _type_tested(node, value, ctx) -> bool:
    """``node`` runs under an ``if`` that tests the type of ``value`` (``isinstance(x, (list, tuple))``,
    ``not torch.is_tensor(x)``, ``type(x) == list``): the code knows what it holds there."""
    name = getattr(value, "id", None)

    def tests_type(test) -> bool:
        return any(
            isinstance(n, ast.Call)
            and _called_name(n) in ("isinstance", "is_tensor", "type")  # type(x) == list: jepa's normalize
            and n.args
            and getattr(n.args[0], "id", None) == name
            for n in walk(test)
        )

    for up, child in climb(node, ctx):
        if branch_side(up, child) is not None and tests_type(up.test):
            return True
        # ``if isinstance(x, Tensor): return x`` earlier in the same block: what follows sees the rest
        for field in ("body", "orelse"):
            block = getattr(up, field, None)
            if isinstance(block, list) and child in block:
                earlier = block[: block.index(child)]
                if any(
                    isinstance(s, ast.If) and not s.orelse and tests_type(s.test) and _always_leaves(s.body)
                    for s in earlier
                ):
                    return True
    return False


RULE = Rule(
    "PTF017",
    ("tensor-copy-construct",),
    "torch.tensor(t) on a tensor copies it and cuts it from the graph, with a UserWarning; write "
    "t.clone().detach() (or t.detach() where no copy is needed)",
    _tensor_copy_construct,
    nodes=CALL,
    calls=("tensor",),
)
