"""What: a tensor made under torch.inference_mode() is used later, outside it, where autograd records.
Why: Inference tensors have no version counter: autograd cannot save one for backward ("Inference
tensors cannot be saved for backward" when a trainable layer or a loss takes it), and an in-place
update or requires_grad_() on one outside the mode raises too; torch.no_grad()'s tensors have no such limit.
Fix: make them under torch.no_grad() when they meet autograd again, or .clone() them outside inference_mode.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import NON_TENSOR_METHODS
from torch_pitfalls.lint.rules.base import UNSURE, Rule, _const
from torch_pitfalls.lint.rules.shared.flow import GRAD_OFF_QUALIFIED
from torch_pitfalls.lint.walking import kept_on, walk

INFERENCE = ("torch.inference_mode", "torch.autograd.grad_mode.inference_mode")
# torch.nn.functional calls that save an input for backward (a layer's input, a loss's target)
SAVING_FUNCTIONS = frozenset(
    f"torch.nn.functional.{n}"
    for n in """linear bilinear conv1d conv2d conv3d conv_transpose1d conv_transpose2d embedding mse_loss l1_loss
smooth_l1_loss huber_loss cross_entropy nll_loss kl_div binary_cross_entropy binary_cross_entropy_with_logits
cosine_similarity cosine_embedding_loss triplet_margin_loss""".split()
)
_NOT_TENSORS = frozenset(("float", "int", "len", "bool", "str", "list", "dict", "tuple", "set", "range"))


def _inference_on(call, ctx) -> bool:
    """``torch.inference_mode()`` (or ``inference_mode(True)``), not ``inference_mode(False)``."""
    if not (isinstance(call, ast.Call) and ctx.qualified(call.func) in INFERENCE):
        return False
    mode = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return mode is None or _const(mode, True)


def _blocks(scope, ctx) -> tuple[list, list]:
    """(lines of the scope's ``with torch.inference_mode():`` blocks, lines of all its grad-off blocks)."""

    def make(fn):
        inference, off = [], []
        for n in walk(fn):
            if isinstance(n, (ast.With, ast.AsyncWith)) and n.body:
                lines = (n.body[0].lineno, n.body[-1].end_lineno)
                if any(_inference_on(i.context_expr, ctx) for i in n.items):
                    inference.append(lines)
                    off.append(lines)
                elif any(
                    isinstance(i.context_expr, ast.Call) and ctx.qualified(i.context_expr.func) in GRAD_OFF_QUALIFIED
                    for i in n.items
                ):
                    off.append(lines)
        return inference, off

    return kept_on(scope, "_ptf272_blocks", make)


def _decorated(fn, ctx, names) -> bool:
    for d in getattr(fn, "decorator_list", ()):
        q = ctx.qualified(d.func if isinstance(d, ast.Call) else d)
        if q in names and (q not in INFERENCE or not isinstance(d, ast.Call) or _inference_on(d, ctx)):
            return True
    return False


def _inside(line: int, blocks) -> bool:
    return any(lo <= line <= hi for lo, hi in blocks)


def _trains(fn) -> bool:
    """The function runs a backward pass (``loss.backward()``, ``accelerator.backward(loss)``,
    ``torch.autograd.grad``)."""

    def make(f):
        return any(
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and (
                n.func.attr == "backward" or (n.func.attr == "grad" and getattr(n.func.value, "attr", "") == "autograd")
            )
            for n in walk(f)
        )

    return kept_on(fn, "_ptf272_trains", make)


def _tensor_value(value) -> bool:
    """What a name was assigned may be a tensor: not ``.item()``, ``len(...)``, a number."""
    if isinstance(value, ast.Call):
        f = value.func
        if isinstance(f, ast.Attribute) and f.attr in NON_TENSOR_METHODS:
            return False
        return not (isinstance(f, ast.Name) and f.id in _NOT_TENSORS)
    return isinstance(value, (ast.Subscript, ast.BinOp, ast.Name, ast.Attribute))


def _made_by_inference_function(value, chain, line, ctx) -> bool:
    """``cached = embed_all(x)`` where ``embed_all`` (a function of this module, or a method of the
    class through ``self.``) is decorated ``@torch.inference_mode()``."""
    if not isinstance(value, ast.Call):
        return False
    fn = None
    if isinstance(value.func, ast.Name):
        binding, _ = ctx.bindings.lookup(value.func.id, chain, line)
        fn = binding.value if binding is not None else ctx.bindings.module_function(value.func.id)
    elif isinstance(value.func, ast.Attribute) and getattr(value.func.value, "id", None) == "self" and ctx.klass:
        fn = next((m for m in ctx.klass.body if isinstance(m, ast.FunctionDef) and m.name == value.func.attr), None)
    return isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and _decorated(fn, ctx, INFERENCE)


def _inference_tensor(name: str, chain, line: int, ctx, depth: int = 0) -> bool:
    """``name`` holds, at ``line``, a tensor made under inference mode: bound in a ``with
    torch.inference_mode():`` block (the use being outside it) or by a function decorated with it,
    or a parameter some call site of this module passes such a tensor for."""
    binding, where = ctx.bindings.lookup(name, chain, line)
    if binding is None or depth > 4:
        return False
    if binding.how == "param":
        for value, caller, at, _ in ctx.bindings.passed(where[0], name) or ():
            if isinstance(value, ast.Name) and _inference_tensor(value.id, caller, at, ctx, depth + 1):
                return True
        return False
    if binding.how not in ("assign", "item") or not _tensor_value(binding.value):
        return False
    inference, _ = _blocks(where[0], ctx)
    if _inside(binding.line, inference):
        return where[0] is not chain[0] or not _inside(line, inference)
    return _made_by_inference_function(binding.value, where, binding.line, ctx)


def _records_here(node, ctx) -> bool:
    """Autograd records at this call: not in a grad-off block or function."""
    fn = ctx.function
    if _decorated(fn, ctx, GRAD_OFF_QUALIFIED):
        return False
    return not _inside(node.lineno, _blocks(fn, ctx)[1])


def _saved_for_backward(node, ctx) -> bool:
    """A layer, loss or functional layer/loss call, in a function that runs backward, given an
    inference tensor: autograd must save it and cannot."""
    fn = ctx.function
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    args = [a for a in (*node.args, *(k.value for k in node.keywords)) if isinstance(a, ast.Name)]
    if not args or not _trains(fn):
        return False
    q = ctx.qualified(node.func)
    if q in SAVING_FUNCTIONS:
        found = True
    elif q is not None:
        return False
    else:
        kind = ctx.kind(node.func)
        if kind is None and _held_callable(node.func, ctx):
            found = UNSURE  # ``self.policy(x)``: an attribute called, of a type the file does not show
        elif kind in ("module", "loss"):
            found = True
        else:
            return False
    if not (_records_here(node, ctx) and any(_inference_tensor(a.id, ctx.chain(), node.lineno, ctx) for a in args)):
        return False
    return found


def _held_callable(func, ctx) -> bool:
    """``self.policy``: an attribute of ``self`` that is not a method of the class (an object it holds)."""
    return (
        isinstance(func, ast.Attribute)
        and getattr(func.value, "id", None) == "self"
        and ctx.klass is not None
        and not any(
            isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == func.attr for m in ctx.klass.body
        )
    )


def _updated_in_place(node, ctx) -> bool:
    """``cached.add_(...)``, ``cached.requires_grad_()``, ``cached += ...`` on an inference tensor
    outside inference mode."""
    if isinstance(node, ast.AugAssign):
        target = node.target
        if not isinstance(target, ast.Name) or ctx.kind(target) != "tensor":
            return False
    else:
        attr = node.func.attr
        if attr == "requires_grad_" and (node.args and not _const(node.args[0], True)):
            return False
        target = node.func.value
        if not isinstance(target, ast.Name):
            return False
    return _inference_tensor(target.id, ctx.chain(), node.lineno, ctx) and not _inside(
        node.lineno, _blocks(ctx.function, ctx)[0]
    )


def _inference_tensor_in_autograd(node, ctx) -> bool:
    if isinstance(node, ast.AugAssign):
        return _updated_in_place(node, ctx)
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_") and not node.func.attr.endswith("__"):
        return _updated_in_place(node, ctx)
    return _saved_for_backward(node, ctx)


RULE = Rule(
    "PTF272",
    ("inference-mode-tensor-in-autograd",),
    "this tensor was made under torch.inference_mode(): autograd cannot save it for backward, nor may it "
    "be updated in place outside that mode (RuntimeError: Inference tensors cannot be saved for backward); "
    "make it under torch.no_grad(), or .clone() it outside inference_mode first",
    _inference_tensor_in_autograd,
    nodes=(ast.Call, ast.AugAssign),
    needs=("inference_mode",),
)
