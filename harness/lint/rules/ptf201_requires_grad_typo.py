"""What: p.require_grad = False (or requires_grads / require_grads) on a tensor, a parameter or a module.
Why: Python stores a new attribute that autograd never reads: nothing is frozen (or unfrozen).
Fix: write requires_grad, or call requires_grad_(False) (a misspelt method raises).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import TENSOR_FUNCTIONS
from torch_pitfalls.lint.rules.base import Rule, _called_name, _const, _kw, _method
from torch_pitfalls.lint.walking import walk

_TYPOS = ("require_grad", "requires_grads", "require_grads")


_PARAMETER_ITERATORS = ("parameters", "buffers")


_NAMED_ITERATORS = ("named_parameters", "named_buffers")


def _iterates_parameters(name: ast.Name, ctx) -> bool:
    """``p`` is the loop variable of ``for p in m.parameters()`` (or ``for n, p in m.named_parameters()``,
    through ``enumerate``/``list``/``filter``/``itertools.chain``): a module's tensors."""
    binding, _ = ctx.bindings.lookup(name.id, ctx.chain(), name.lineno)
    if binding is None or binding.how != "iter" or not isinstance(binding.value, ast.Call):
        return False
    loop = next(
        (
            n
            for n in walk(ctx.function)
            if isinstance(n, (ast.For, ast.AsyncFor)) and n.lineno == binding.line and _binds(n.target, name.id)
        ),
        None,
    )
    if loop is None:
        return False
    target = loop.target
    if isinstance(loop.iter, ast.Call) and getattr(loop.iter.func, "id", None) == "enumerate":
        target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else target
    calls = [binding.value]
    while calls and _called_name(calls[-1]) in ("list", "filter", "chain", "tuple", "sorted"):
        calls = [a for a in calls[-1].args if isinstance(a, ast.Call)]
    for call in calls:
        if _method(call, *_PARAMETER_ITERATORS) and isinstance(target, ast.Name):
            return True
        if _method(call, *_NAMED_ITERATORS) and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            return getattr(target.elts[1], "id", None) == name.id
    return False


def _binds(target, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in walk(target))


def _torch_object(node, ctx) -> bool:
    """A tensor or module as the bindings prove it, a module's ``.weight``/``.bias``, or a loop variable
    over a module's parameters."""
    if ctx.kind(node) in ("tensor", "module"):
        return True
    if isinstance(node, ast.Attribute) and node.attr in ("weight", "bias", "data"):
        return ctx.kind(node.value) in ("module", "tensor")
    return isinstance(node, ast.Name) and _iterates_parameters(node, ctx)


def _requires_grad_typo(node, ctx) -> bool:
    """``p.require_grad = False`` (or ``requires_grads``/``require_grads``) on a tensor, a parameter or a
    module: Python stores a new attribute that autograd never reads, so nothing is frozen (or unfrozen).
    Not ``self.require_grad`` (a class's own flag), and not in a file that reads the attribute back
    (its own attribute, then). The fix: ``requires_grad``, or the method ``requires_grad_(False)``."""
    targets = [t for t in node.targets if isinstance(t, ast.Attribute) and t.attr in _TYPOS]
    if not targets or ctx.function is None:
        return False
    receiver = targets[0].value
    if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
        return False
    if any(isinstance(n, ast.Attribute) and n.attr in _TYPOS and isinstance(n.ctx, ast.Load) for n in walk(ctx.module)):
        return False
    if _const(node.value, False) and _fresh_tensor(receiver, ctx, node.lineno):
        return False  # a fresh tensor (torch.zeros(...)) never required grad: nothing was to be frozen
    return _torch_object(receiver, ctx)


_KEEPS_FLAG = ("float", "double", "half", "long", "int", "to", "cuda", "cpu", "contiguous", "unsqueeze", "view")


def _fresh_tensor(receiver, ctx, line: int) -> bool:
    """``receiver`` was last assigned a torch factory's or op's result that does not require grad."""
    made = ctx.value_of(receiver, line)
    while _method(made, *_KEEPS_FLAG):  # torch.zeros(n).float(): still a fresh tensor
        made = made.func.value
    if not isinstance(made, ast.Call):
        return False
    q = (ctx.qualified(made.func) or "").split(".")
    return q[0] == "torch" and q[-1] in TENSOR_FUNCTIONS and not _const(_kw(made, "requires_grad"), True)


RULE = Rule(
    "PTF201",
    ("requires-grad-typo",),
    "require_grad (no s) is not an attribute autograd reads: assigning it creates a new attribute and "
    "freezes nothing; write requires_grad, or call requires_grad_(False) (a misspelled method raises)",
    _requires_grad_typo,
    nodes=ast.Assign,
)
