"""What: x.to(device) or x.cuda() on a tensor as a statement, its result thrown away.
Why: A tensor's .to()/.cuda() return a new tensor and leave the original where it was (a module's .to()
works in place, a tensor's does not).
Fix: assign the result: x = x.to(device).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.fixes import Edit, Fix, Refused, Source, _one
from torch_pitfalls.lint.rules.base import Rule, _method
from torch_pitfalls.lint.rules.shared.tensors import _CONVERSIONS
from torch_pitfalls.lint.walking import walk


def _tensor_to_discarded(node, ctx) -> bool:
    """``x.to(device)`` as a statement, where ``x`` holds a tensor (a factory's result, a batch from a
    loader, a model's output, a tensor parameter): the converted copy is thrown away. A module's
    ``.to()`` works in place and is not flagged; neither is anything whose kind is unknown, nor a tensor made
    in the statement itself (nothing holds it, so nothing is expected to have moved)."""
    if not (isinstance(node, ast.Expr) and _method(node.value, *_CONVERSIONS)):
        return False
    receiver = node.value.func.value
    if not isinstance(receiver, (ast.Name, ast.Attribute, ast.Subscript)):
        return False  # torch.zeros(1).cuda(): a tensor nothing holds, made for the call's effect (a CUDA context)
    return ctx.kind(receiver) == "tensor" and not _whole_batch(receiver, ctx, node.lineno)


def _whole_batch(name, ctx, line) -> bool:
    """``for batch in loader: batch.to(device)``: a loader's whole element may be a dict-like batch
    (a HF BatchEncoding, whose .to() moves its tensors in place), not known to be one tensor; an
    unpacked element (``for x, y in loader``) is, and so is each of a listed few (``for t in (x, y)``)
    or a value of such a batch (``for v in batch.values()``)."""
    if not isinstance(name, ast.Name):
        return False
    binding, _ = ctx.bindings.lookup(name.id, ctx.chain(), line)
    if binding is None or binding.how != "iter":
        return False
    return any(
        isinstance(n, (ast.For, ast.AsyncFor))
        and n.lineno == binding.line
        and not isinstance(n.iter, (ast.List, ast.Tuple, ast.ListComp))
        and not (isinstance(n.iter, ast.Call) and getattr(n.iter.func, "attr", None) in ("values", "items"))
        and (
            (isinstance(n.target, ast.Name) and n.target.id == name.id)
            or (
                isinstance(n.target, ast.Tuple)
                and any(getattr(e, "id", None) == name.id for e in n.target.elts)
                and isinstance(n.iter, ast.Call)
                and getattr(n.iter.func, "id", None) == "enumerate"
                and len(n.target.elts) == 2
                and getattr(n.target.elts[1], "id", None) == name.id
            )
        )
        for n in walk(ctx.function)
    )


def _assign_to(src: Source, finding) -> list[Edit]:
    """``x.to(device)`` as a statement -> ``x = x.to(device)``."""
    stmt = _one(
        [
            s
            for s in src.at(finding, ast.Expr)
            if isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute)
        ],
        "statement calling a method",
    )
    receiver = stmt.value.func.value
    if not isinstance(receiver, (ast.Name, ast.Attribute, ast.Subscript)):
        raise Refused("the converted value is not a name, attribute or item: assign the result by hand")
    at = src.start(stmt)
    return [Edit(at, at, f"{src.segment(receiver)} = ")]


RULE = Rule(
    "PTF013",
    ("tensor-to-is-not-inplace",),
    "Tensor.to()/.cuda() return a new tensor and leave the original where it was; assign the result",
    _tensor_to_discarded,
    nodes=ast.Expr,
    fix=Fix("x.to(...) -> x = x.to(...)", _assign_to),
)
