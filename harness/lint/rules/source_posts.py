"""The source posts' pitfalls that show in code: rules PTF001-PTF099, each proven by its case."""
from __future__ import annotations

import ast

from harness.lint.rules.base import (
    Rule, _kw, _has_kw, _is_call_to, _method, _const,
    _called_name, _in_function_calls, TORCH_INIT_OLD, LEGACY_TYPES, INTERP, DROPOUTS,
    SOFTMAXES, CALL, LOOPS,
)


# --- the rules with more than a name to match ---------------------------------------------
def _softmax_into_cross_entropy(node, ctx) -> bool:
    if not isinstance(node, ast.Call) or not node.args:
        return False
    f = node.func
    is_ce = ctx.qualified(f) == "torch.nn.functional.cross_entropy" or (
        isinstance(f, ast.Call) and ctx.qualified(f.func) == "torch.nn.CrossEntropyLoss")
    return is_ce and _called_name(ctx.resolve(node.args[0], node.lineno)) in SOFTMAXES


def _kl_div_on_probabilities(node, ctx) -> bool:
    if not isinstance(node, ast.Call) or not node.args or _const(_kw(node, "log_target"), True):
        return False
    f = node.func
    is_kl = ctx.qualified(f) == "torch.nn.functional.kl_div" or (
        isinstance(f, ast.Call) and ctx.qualified(f.func) == "torch.nn.KLDivLoss")
    if not is_kl:
        return False
    first = ctx.resolve(node.args[0], node.lineno)
    return isinstance(first, ast.Call) and "log" not in _called_name(first).lower()


def _dropout_without_training(node, ctx) -> bool:
    in_forward = isinstance(ctx.function, (ast.FunctionDef, ast.AsyncFunctionDef)) and ctx.function.name == "forward"
    return (in_forward and _is_call_to(node, ctx, *DROPOUTS) and len(node.args) < 3 and not _has_kw(node, "training"))


def _int_expr(node) -> bool:
    """An expression that is an int: ``3``, ``n * 2`` of int literals, ``len(x)``, ``int(x)``."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.UnaryOp):
        return _int_expr(node.operand)
    if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.Div):
        return _int_expr(node.left) and _int_expr(node.right)
    return isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("len", "int")


def _bool_data(node) -> bool:
    """Data that is boolean: True/False literals, comparisons, ``np.array(..., dtype=bool)``,
    ``x.astype(bool)`` (``[int(a == b), ...]`` is ints: not looked into)."""
    if isinstance(node, ast.Constant):
        return type(node.value) is bool
    if isinstance(node, (ast.Compare, ast.BoolOp)) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return True
    if isinstance(node, (ast.List, ast.Tuple)):
        return any(_bool_data(e) for e in node.elts)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return _bool_data(node.elt)
    if isinstance(node, ast.Call):
        dtype = _kw(node, "dtype") or (node.args[0] if _method(node, "astype") and node.args else None)
        if dtype is not None and (getattr(dtype, "id", None) == "bool" or _const(dtype, "bool")
                                  or getattr(dtype, "attr", None) in ("bool", "bool_")):
            return True
        return _called_name(node) in ("array", "asarray") and bool(node.args) and _bool_data(node.args[0])
    return False


def _legacy_constructor_misread(node, ctx) -> bool:
    """``torch.FloatTensor(3)``: one int read as a size (uninitialised memory, not ``[3.]``), or bool data
    to a non-bool type (garbage before 0.4, a TypeError until 1.2). Several ints (``FloatTensor(2, 3)``)
    are a size on purpose, and float or int data converts the same way torch.tensor does: not flagged."""
    if not (_is_call_to(node, ctx, *LEGACY_TYPES) and len(node.args) == 1):
        return False
    data = ctx.resolve(node.args[0], node.lineno)
    if _int_expr(data):
        return True
    return ctx.qualified(node.func) != "torch.BoolTensor" and _bool_data(data)


def _interpolate_without_align_corners(node, ctx) -> bool:
    """A linear-mode resize left at the default beside one with ``align_corners=True`` in the same
    function: the two disagree. A resize at the default on its own is the default on purpose (most
    models were trained with it)."""
    mode = _kw(node, "mode") if isinstance(node, ast.Call) else None
    if not (_is_call_to(node, ctx, *INTERP) and isinstance(mode, ast.Constant)
            and mode.value in ("linear", "bilinear", "bicubic", "trilinear") and not _has_kw(node, "align_corners")):
        return False
    return any(_is_call_to(n, ctx, *INTERP) and _const(_kw(n, "align_corners"), True) for n in ast.walk(ctx.function))


def _strict_false_unchecked(node, ctx) -> bool:
    if not (_method(node, "load_state_dict") and _const(_kw(node, "strict"), False)):
        return False
    # the result's fields, or the same check made by hand (names computed from the keys)
    looked = {n.attr if isinstance(n, ast.Attribute) else n.id
              for n in ast.walk(ctx.function) if isinstance(n, (ast.Attribute, ast.Name))}
    return not looked & {"missing_keys", "unexpected_keys"}


def _loop_without_zero_grad(node, ctx) -> bool:
    if not isinstance(node, (ast.For, ast.While)):
        return False
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    names = {c.func.attr for c in calls}
    return "backward" in names and "step" in names and not names & {"zero_grad", "clear_grad"} \
        and not any(isinstance(n, ast.Assign) and any(getattr(t, "attr", None) == "grad" for t in n.targets)
                    for n in ast.walk(node))


def _backward_twice(node, ctx) -> bool:
    """The second ``x.backward()`` on a graph whose first backward did not retain it."""
    if not (_method(node, "backward") and isinstance(ctx.function, (ast.FunctionDef, ast.AsyncFunctionDef))):
        return False
    first = [c for c in _in_function_calls(ctx, "backward") if c.lineno < node.lineno
             and not _const(_kw(c, "retain_graph"), True) and _shared_leaf(c, node, ctx)
             and not _exclusive(c, node, ctx.function)]
    in_loop = any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(ctx.function))
    return bool(first) and not in_loop


def _exclusive(a: ast.AST, b: ast.AST, function: ast.AST) -> bool:
    """``a`` and ``b`` sit in different branches of one ``if``: at most one of them runs."""
    for n in ast.walk(function):
        if isinstance(n, (ast.If, ast.IfExp)):
            body = n.body if isinstance(n.body, list) else [n.body]
            orelse = n.orelse if isinstance(n.orelse, list) else [n.orelse]
            inside = [{id(x) for s in branch for x in ast.walk(s)} for branch in (body, orelse)]
            if (id(a) in inside[0] and id(b) in inside[1]) or (id(a) in inside[1] and id(b) in inside[0]):
                return True
    return False


def _shared_leaf(a: ast.Call, b: ast.Call, ctx) -> bool:
    """Both backward calls start from values computed from one common intermediate name."""
    def sources(call):
        root = ctx.resolve(call.func.value, call.lineno)
        return {n.id for n in ast.walk(root) if isinstance(n, ast.Name)} - {"self", "cls"}  # not evidence of a graph
    return bool(sources(a) & sources(b))


def _tensor_to_discarded(node, ctx) -> bool:
    if not (isinstance(node, ast.Expr) and _method(node.value, "to", "cuda", "cpu", "double", "float", "half", "long")):
        return False
    receiver = ctx.resolve(node.value.func.value, node.lineno)
    return isinstance(receiver, ast.Call) and (ctx.qualified(receiver.func) or "").startswith("torch.") \
        and ctx.qualified(receiver.func).split(".")[-1] in ("tensor", "zeros", "ones", "empty", "arange", "rand",
                                                             "randn", "randint", "full", "as_tensor", "from_numpy")


def _gradcheck_single_precision(node, ctx) -> bool:
    if not _is_call_to(node, ctx, "torch.autograd.gradcheck", "torch.autograd.gradcheck.gradcheck",
                       "torch.autograd.gradgradcheck"):
        return False
    text = ast.unparse(ctx.function) if ctx.function is not None else ""
    return "float32" in text and "float64" not in text and "double" not in text



SOURCE_POST_RULES: tuple[Rule, ...] = (
    Rule("PTF001", ("deprecated-init-without-underscore",),
         "nn.init's names without the trailing underscore are deprecated aliases that warn on every call; "
         "call the in-place name (xavier_uniform_, kaiming_normal_, ...)",
         lambda n, c: _is_call_to(n, c, *TORCH_INIT_OLD),
         nodes=CALL),
    Rule("PTF002", ("variable-tensor-merge",),
         "Variable(t) is a no-op since 0.4 (it returns a Tensor); create the tensor with requires_grad=True "
         "or call t.requires_grad_()",
         lambda n, c: _is_call_to(n, c, "torch.autograd.Variable", "torch.autograd.variable.Variable"),
         nodes=CALL),
    Rule("PTF003", ("cuda-async-keyword",),
         "async is a reserved word since Python 3.7: .cuda(async=True) is a SyntaxError; write non_blocking=True",
         lambda n, c: False,
         nodes=()),  # found in the tokens of a file that does not parse (engine.keyword_async_positions)
    Rule("PTF004", ("backward-hook-non-full",),
         "register_backward_hook reports the gradients of the module's last operation, not of its inputs, "
         "and is deprecated; use register_full_backward_hook",
         lambda n, c: _method(n, "register_backward_hook"),
         nodes=CALL),
    Rule("PTF005", ("cross-entropy-after-softmax",),
         "cross_entropy applies log-softmax itself: feeding it softmax outputs squashes the loss and its "
         "gradients; pass the raw logits",
         _softmax_into_cross_entropy,
         nodes=CALL),
    Rule("PTF006", ("kldiv-expects-log-input",),
         "kl_div/KLDivLoss expect log-probabilities as input; pass log_softmax (or .log()) of the prediction",
         _kl_div_on_probabilities,
         nodes=CALL),
    Rule("PTF007", ("functional-dropout-training-flag",),
         "F.dropout in forward() without training=self.training keeps dropping in eval mode; pass "
         "training=self.training or use nn.Dropout",
         _dropout_without_training,
         nodes=CALL),
    Rule("PTF008", ("legacy-constructor-bool-ndarray",),
         "legacy constructors read one int as a size (torch.FloatTensor(3) is 3 uninitialised floats, not [3.]) "
         "and mishandled bool arrays before 1.2; use torch.tensor(data, dtype=..., device=...) or torch.zeros(size)",
         _legacy_constructor_misread,
         nodes=CALL),
    Rule("PTF009", ("align-corners-mismatch",),
         "interpolate with a linear mode and no align_corners uses align_corners=False, where the same function "
         "resizes with align_corners=True: resize the same way in training and inference (pass it explicitly)",
         _interpolate_without_align_corners,
         nodes=CALL),
    Rule("PTF010", ("load-state-dict-strict-false",),
         "load_state_dict(strict=False) loads nothing when every key differs (a 'module.' prefix), silently; "
         "check the returned missing_keys/unexpected_keys",
         _strict_false_unchecked,
         nodes=CALL),
    Rule("PTF011", ("missing-zero-grad",),
         "a training loop calls backward() and step() but never zero_grad(): gradients add up across steps; "
         "call optimizer.zero_grad() each step",
         _loop_without_zero_grad,
         nodes=LOOPS),
    Rule("PTF012", ("backward-twice",),
         "a second backward() through a graph the first one freed raises; pass retain_graph=True to the "
         "first, or sum the losses and call backward once",
         _backward_twice,
         nodes=CALL),
    Rule("PTF013", ("tensor-to-is-not-inplace",),
         "Tensor.to()/.cuda() return a new tensor and leave the original where it was; assign the result",
         _tensor_to_discarded,
         nodes=ast.Expr),
    Rule("PTF014", ("gradcheck-float32",),
         "gradcheck in float32 fails on correct gradients (finite differences need float64); use "
         "dtype=torch.float64 inputs and module",
         _gradcheck_single_precision,
         nodes=CALL),
)
