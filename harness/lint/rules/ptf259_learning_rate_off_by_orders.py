"""What: an optimizer built with a literal learning rate orders of magnitude outside its working range.
Why: Adam, AdamW and RMSprop move every weight by about lr per step: lr >= 0.3 throws a network's
weights around and the loss explodes or stalls; plain SGD at lr <= 1e-6 moves weights by a millionth of
the gradient and nothing learns. No error, no warning: only a number is wrong.
Fix: start from the usual range (1e-4..1e-2 for Adam-like optimizers, 1e-3..1 for SGD), overfit one batch.
"""

from __future__ import annotations

import ast
import builtins

from torch_pitfalls.lint.bindings import parameter_defaults
from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _arg, _called_name, _method
from torch_pitfalls.lint.rules.shared.options import _number, _numbers
from torch_pitfalls.lint.testcode import in_test_code
from torch_pitfalls.lint.walking import kept_on, walk

# optimizers whose step is about lr per weight whatever the gradient's scale (Adagrad, Adadelta, LBFGS and
# Rprop are left out: their usual rates are 0.01..1)
_ADAPTIVE = frozenset(("Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop"))
_NAMES = _ADAPTIVE | {"SGD"}
# Adam-like: 0.3 and above is sure; 0.1..0.3 is reported only with --preview (SGC's logistic regression
# trains with Adam at 0.2 on purpose, tensor-parallel demos use 0.25 on random data)
_ADAPTIVE_TOO_LARGE, _ADAPTIVE_LARGE = 0.3, 0.1
_SGD_TOO_SMALL = 1e-6
_SGD_LARGE = 10.0  # MoCo's linear probe trains with SGD at lr=30 on purpose: reported only with --preview
# schedulers and tools that set the rate themselves, so the constructor's lr is not what steps use
_OVERRIDES = ("OneCycleLR", "CyclicLR", "LambdaLR", "MultiplicativeLR")
_FINDER_WORDS = ("lr_find", "lrfinder", "find_lr", "lr_range")


def _file_sets_rates(tree) -> list[bool]:
    """The file sets the rate elsewhere (a scheduler that overrides it, an LR finder, ``group["lr"] = ...``)
    or sums its loss (``reduction="sum"``, ``size_average=False``: a loss, and gradients, scaled by the
    batch, for which a tiny SGD rate is the matching one, FCN's 1e-10)."""
    for n in walk(tree):
        if isinstance(n, ast.Call):
            name = _called_name(n)
            if name in _OVERRIDES or any(w in name.lower() for w in _FINDER_WORDS):
                return [True]
            if any(
                (k.arg == "reduction" and isinstance(k.value, ast.Constant) and k.value.value == "sum")
                or (k.arg == "size_average" and isinstance(k.value, ast.Constant) and k.value.value is False)
                for k in n.keywords
            ):
                return [True]
        elif isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and t.slice.value == "lr"
            for t in n.targets
        ):
            return [True]
    return [False]


def _squared(node) -> bool:
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and _number(node.right) == 2.0) or (
        _method(node, "pow") and bool(node.args) and _number(node.args[0]) == 2.0
    )


def _summed_squares(tree) -> list[bool]:
    """A loss summed over the batch by hand, ``(y_pred - y).pow(2).sum()``: the tutorial's two-layer net,
    whose gradient grows with the batch and whose matching SGD rate is 1e-6."""
    return [any(_method(n, "sum") and any(_squared(m) for m in walk(n.func.value)) for n in walk(tree))]


def _optimised(node, ctx) -> list[str]:
    """The names of the tensors handed to the optimizer as a list (``Adam([image], ...)``); where it is
    built by a factory (``lambda params: Adam(params, lr=0.5)``, stored as ``optimizer_factory``), the
    tensors the module hands that factory (``self.optimizer_factory([model.input_image])``)."""
    given = _arg(node, 0, "params")
    lists = [given]
    up = ctx.parent(node)
    if isinstance(given, ast.Name) and isinstance(up, ast.Lambda) and given.id in {a.arg for a in up.args.args}:
        holder = _holder_name(up, ctx)
        lists = [
            a
            for c in walk(ctx.module)
            if isinstance(c, ast.Call) and holder and _called_name(c) == holder
            for a in c.args
        ]
    names = []
    for arg in lists:
        for sub in walk(arg) if arg is not None else ():
            if isinstance(sub, (ast.List, ast.Tuple)):
                names += [
                    e.id if isinstance(e, ast.Name) else e.attr
                    for e in sub.elts
                    if isinstance(e, (ast.Name, ast.Attribute))
                ]
    return names


def _holder_name(fn, ctx) -> str | None:
    """The name a factory lambda is given: the parameter it is the default of, or the name assigned it."""
    up = ctx.parent(fn)
    if isinstance(up, ast.arguments):
        defaults = parameter_defaults(ctx.parent(up))
        return next((name for name, default in defaults.items() if default is fn), None)
    if isinstance(up, ast.Assign) and len(up.targets) == 1:
        target = up.targets[0]
        return target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
    return None


def _fits_inputs(node, ctx) -> bool:
    """The optimizer fits tensors the module feeds to a model (an image optimised to excite a class, an
    adversarial or style-transfer input): a step of lr moves pixels of an input, not a network's weights,
    and rates of 0.05..1 are the usual ones there. A tensor counts as an input when the module passes it
    (through transforms: ``model(t(x.sigmoid()))``) to a call that is neither torch's nor a method of a
    tensor, as weights written by hand are used (``x @ w``, ``x.mm(w)``, ``F.linear(x, w)``)."""
    names = set(_optimised(node, ctx))
    if not names:
        return False
    for call in walk(ctx.module):
        if not isinstance(call, ast.Call) or call is node or not _model_like(call.func, ctx):
            continue
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            if any(
                (isinstance(n, ast.Name) and n.id in names) or (isinstance(n, ast.Attribute) and n.attr in names)
                for n in walk(arg)
            ):
                return True
    return False


def _model_like(func, ctx) -> bool:
    """``model(...)``, ``self.net(...)``: a callee named by itself or held by ``self``, not torch's nor a builtin."""
    if ctx.qualified(func) or isinstance(func, ast.Lambda):
        return False
    if isinstance(func, ast.Name):
        return not hasattr(builtins, func.id)  # print(x), len(x), list(x) feed nothing
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"


def _off_by_orders(node, ctx):
    name = _called_name(node)
    if name not in _NAMES or ctx.qualified(node.func) not in (
        f"torch.optim.{name}",
        f"torch.optim.{name.lower()}.{name}",
    ):
        return False
    lr = _arg(node, 1, "lr")
    values = _numbers(lr, ctx, node.lineno) if lr is not None else None
    if not values or not all(v > 0 for v in values):
        return False
    if kept_on(ctx.module, "_ptf259_sets_rates", _file_sets_rates)[0]:
        return False
    if in_test_code(ctx.path):
        return False  # a test's toy problem: a rate picked to make a step visible
    found = _outside_range(name, values, ctx)
    # read only for a rate out of range: the module is walked for the inputs the optimizer fits
    return False if found and _fits_inputs(node, ctx) else found


def _outside_range(name, values, ctx):
    if name in _ADAPTIVE:
        return True if max(values) >= _ADAPTIVE_TOO_LARGE else UNSURE if max(values) >= _ADAPTIVE_LARGE else False
    if min(values) <= _SGD_TOO_SMALL:
        return not kept_on(ctx.module, "_ptf259_summed_squares", _summed_squares)[0]
    return UNSURE if max(values) >= _SGD_LARGE else False


RULE = Rule(
    "PTF259",
    ("learning-rate-off-by-orders",),
    "this learning rate is orders of magnitude outside the optimizer's working range (Adam-like: lr >= 0.3; "
    "SGD: lr <= 1e-6): the loss explodes or never moves; start from 1e-4..1e-2 (Adam), 1e-3..1 (SGD) and "
    "overfit one batch first",
    _off_by_orders,
    nodes=CALL,
    calls=tuple(sorted(_NAMES)),
    needs=("optim",),
)
