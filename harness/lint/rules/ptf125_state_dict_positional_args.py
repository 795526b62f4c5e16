"""What: module.state_dict(destination, prefix) with positional arguments.
Why: Deprecated (FutureWarning since torch 2.4).
Fix: pass destination=, prefix=, keep_vars= by keyword.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _method


def _state_dict_positional(node, ctx) -> bool:
    """``x.state_dict(dest, prefix)``, except in a class with a ``state_dict`` of its own that is not a
    Module's (other parameters, or a class with no bases): there the call is most likely that API."""
    kind = ctx.kind(node.func.value)
    if not (_method(node, "state_dict") and node.args) or kind not in (None, "module", "loss"):
        return False  # an optimizer's, a scheduler's or a tensor's is not Module.state_dict
    args = node.args
    if isinstance(args[0], ast.Name) and args[0].id == "self":
        args = args[1:]  # Base.state_dict(self, ...): the instance, not an argument
    if all(isinstance(a, ast.Starred) for a in args):
        return False  # super().state_dict(*args, **kwargs): passes on what its own caller passed
    klass = ctx.klass
    own = (
        next(
            (
                s
                for s in klass.body
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "state_dict"
            ),
            None,
        )
        if klass is not None
        else None
    )
    if own is not None:
        params = [a.arg for a in [*own.args.posonlyargs, *own.args.args]][1:]
        if not (klass.bases and params[:1] == ["destination"]):
            return False
    return True if kind is not None or _inside_a_module(node, ctx) else UNSURE  # a dataset's, an accountant's...


def _inside_a_module(call, ctx) -> bool:
    """In an nn.Module subclass of this file: ``super().state_dict(...)``, ``self.state_dict(...)``, or
    any call in the class's own ``state_dict(self, destination, prefix, keep_vars)``, which forwards
    Module.state_dict's arguments to its parts (``self.module.state_dict(destination, prefix, ...)``)."""
    if ctx.klass is None or not ctx.bindings.is_module_class(ctx.klass):
        return False
    receiver = call.func.value
    if (isinstance(receiver, ast.Call) and getattr(receiver.func, "id", None) == "super") or (
        isinstance(receiver, ast.Name) and receiver.id == "self"
    ):
        return True
    fn = ctx.function
    return getattr(fn, "name", None) == "state_dict" and [a.arg for a in fn.args.args][1:2] == ["destination"]


RULE = Rule(
    "PTF125",
    ("state-dict-positional-args",),
    "state_dict's positional arguments are deprecated (FutureWarning since torch 2.4); pass "
    "destination=, prefix=, keep_vars= by keyword",
    _state_dict_positional,
    nodes=CALL,
    upgrade=True,
    deliberate_warning=True,
    needs=("state_dict",),
    calls=("state_dict",),
)
