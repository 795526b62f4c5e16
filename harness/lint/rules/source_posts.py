"""The source posts' pitfalls that show in code: rules PTF001-PTF099, each proven by its case."""

from __future__ import annotations

import ast
import builtins

from torch_pitfalls.lint.bindings import LOADER_NAME, NON_TENSOR_METHODS, TENSOR_FUNCTIONS, arguments
from torch_pitfalls.lint.guards import _always_leaves
from torch_pitfalls.lint.rules.base import (
    CALL,
    DROPOUTS,
    INTERP,
    LEGACY_TYPES,
    SOFTMAXES,
    TORCH_INIT_OLD,
    Rule,
    _called_name,
    _const,
    _in_function_calls,
    _is_call_to,
    _kw,
    _method,
    receiver_holds,
)


# --- what the rules share -------------------------------------------------------------------
def _arg(call: ast.Call, index: int, name: str):
    """An argument passed by position or by keyword."""
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    return _kw(call, name)


def _loss_call(node, ctx, functional: str, *classes: str) -> bool:
    """A call of this loss: ``F.<functional>(...)``, ``nn.<Class>()(...)``, or a name or ``self.``
    attribute bound to an instance of the class (``criterion = nn.CrossEntropyLoss()``)."""
    if not isinstance(node, ast.Call):
        return False
    if ctx.qualified(node.func) == f"torch.nn.functional.{functional}":
        return True
    if isinstance(node.func, ast.Call):
        return ctx.qualified(node.func.func) in classes
    if not _bound_name(node.func):
        return False
    held = ctx.held(node.func)
    return held is not None and held.kind == "loss" and held.what in classes


def _bound_name(node) -> bool:
    """A name or a ``self.`` attribute: what bindings can tell the value of."""
    return isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "self")


def _probabilities(node, ctx) -> str | None:
    """``softmax``/``sigmoid`` where the expression holds an activation's probabilities (through
    names, ``self.`` modules, ``nn.Softmax()(x)``, ``x.softmax(1)``, a Sequential ending in one)."""
    if node is None:
        return None
    name = _called_name(node)
    if isinstance(node, ast.Call) and name in SOFTMAXES:  # F.softmax(x), x.softmax(1), nn.Softmax(1)(x)
        return name.lower()
    held = ctx.held(node)
    if held is not None and held.kind == "tensor" and held.what in ("softmax", "sigmoid"):
        return held.what
    value = ctx.value_of(node, getattr(node, "lineno", 1 << 30))  # p = s.div(t).softmax(1): the receiver's kind unknown
    if (
        isinstance(value, ast.Call)
        and _called_name(value) in SOFTMAXES
        and isinstance(value.func, (ast.Attribute, ast.Name))
    ):
        return _called_name(value).lower()
    return None


# --- the rules with more than a name to match ---------------------------------------------
def _softmax_into_cross_entropy(node, ctx) -> bool:
    if not _loss_call(node, ctx, "cross_entropy", "torch.nn.CrossEntropyLoss"):
        return False
    return _probabilities(_arg(node, 0, "input"), ctx) is not None


_RAW_DATA = ("tensor", "as_tensor", "from_numpy", "rand", "randn", "zeros", "ones", "full", "softmax", "sigmoid")


def _kl_div_on_probabilities(node, ctx) -> bool:
    """kl_div's input is probabilities or raw data (softmax, sigmoid, torch.tensor(...)), not log-probs."""
    if not _loss_call(node, ctx, "kl_div", "torch.nn.KLDivLoss") or _const(_kw(node, "log_target"), True):
        return False
    first = _arg(node, 0, "input")
    if _probabilities(first, ctx):
        return True
    held = ctx.held(first) if first is not None else None
    return held is not None and held.kind == "tensor" and held.what in _RAW_DATA


def _module_method(ctx) -> bool:
    """The code is a method of an nn.Module subclass (``forward`` or a helper it calls)."""
    return (
        ctx.klass is not None
        and isinstance(ctx.function, (ast.FunctionDef, ast.AsyncFunctionDef))
        and ctx.function in ctx.klass.body
        and ctx.bindings.is_module_class(ctx.klass)
        and not any(getattr(d, "id", None) == "staticmethod" for d in ctx.function.decorator_list)
    )


_DROPOUT_MODULES = (
    "torch.nn.Dropout",
    "torch.nn.Dropout1d",
    "torch.nn.Dropout2d",
    "torch.nn.Dropout3d",
    "torch.nn.AlphaDropout",
)


def _dropout_without_training(node, ctx) -> bool:
    """F.dropout in a module's method without a training flag (``training`` defaults to True), or an
    nn.Dropout built and called there (``nn.Dropout(0.5)(x)``: a fresh module, always in training mode)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Call)
        and _is_call_to(node.func, ctx, *_DROPOUT_MODULES)
        and _module_method(ctx)
        and ctx.function.name != "__init__"
    ):
        return True
    if not _is_call_to(node, ctx, *DROPOUTS):
        return False
    if _arg(node, 2, "training") is not None:  # passed: self.training, or True written out on purpose (a prenet)
        return False
    if _under_training_test(node, ctx):
        return False
    if _module_method(ctx):
        return True
    fn = ctx.function
    return isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == "forward"


def _under_training_test(node, ctx) -> bool:
    """``node`` runs only where the module is training: in the body of ``if self.training ...:`` (or of
    ``if p > 0 and self.training:``, ``x if self.training else y``), or in the ``else`` of
    ``if not self.training:``; the dropout then never runs in eval mode."""
    up, child = ctx.parent(node), node
    while up is not None and up is not ctx.function:
        if isinstance(up, (ast.If, ast.IfExp)) and child is not up.test:
            in_body = child in up.body if isinstance(up.body, list) else child is up.body
            test = up.test
            negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
            if (in_body and not negated and _reads_training(test)) or (
                not in_body and negated and _reads_training(test.operand)
            ):
                return True
        up, child = ctx.parent(up), up
    return False


def _reads_training(test) -> bool:
    """The test is ``self.training`` or a conjunction with it (``p > 0 and self.training``), or a
    disjunction of it with another deliberate switch (``self.training or self.apply_in_eval``)."""
    if isinstance(test, ast.BoolOp):
        return any(_reads_training(v) for v in test.values)
    return isinstance(test, ast.Attribute) and test.attr == "training" and getattr(test.value, "id", None) == "self"


_VARIABLE = ("torch.autograd.Variable", "torch.autograd.variable.Variable")


def _variable_relied_on(node, ctx) -> bool:
    """Code that relies on Variable being something other than a tensor: ``isinstance(x, Variable)``
    (true of every tensor), ``Variable(t, volatile=True)`` (ignored since 0.4: the graph is recorded),
    or a Variable wrapped again. ``Variable(t)`` alone returns the tensor and changes nothing."""
    if isinstance(node.func, ast.Name) and node.func.id == "isinstance" and len(node.args) == 2:
        kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        return any(ctx.qualified(k) in _VARIABLE for k in kinds)
    if not _is_call_to(node, ctx, *_VARIABLE):
        return False
    if _kw(node, "volatile") is not None:
        return True
    inner = ctx.resolve(node.args[0], node.lineno) if node.args else None
    return isinstance(inner, ast.Call) and _is_call_to(inner, ctx, *_VARIABLE)


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
    """Data that is boolean: True/False literals, comparisons, ``not x``, ``a and b`` of booleans,
    ``np.array(..., dtype=bool)``, ``x.astype(bool)``. ``x or [..]`` is one of its operands, not a bool,
    so a BoolOp is boolean only when each operand is."""
    if isinstance(node, ast.Constant):
        return type(node.value) is bool
    if isinstance(node, ast.Compare) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return True
    if isinstance(node, ast.BoolOp):
        return all(_bool_data(v) for v in node.values)
    if isinstance(node, (ast.List, ast.Tuple)):
        return any(_bool_data(e) for e in node.elts)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return _bool_data(node.elt)
    if isinstance(node, ast.Call):
        dtype = _kw(node, "dtype") or (node.args[0] if _method(node, "astype") and node.args else None)
        if dtype is not None and (
            getattr(dtype, "id", None) == "bool"
            or _const(dtype, "bool")
            or getattr(dtype, "attr", None) in ("bool", "bool_")
        ):
            return True
        return _called_name(node) in ("array", "asarray") and bool(node.args) and _bool_data(node.args[0])
    return False


_CUDA_TYPES = tuple(t.replace("torch.", "torch.cuda.", 1) for t in LEGACY_TYPES)


def _legacy_constructor_misread(node, ctx) -> bool:
    """``torch.FloatTensor(3)``: one int read as a size (uninitialised memory, not ``[3.]``), or bool data
    to a non-bool type (garbage before 0.4, a TypeError until 1.2). Several ints (``FloatTensor(2, 3)``)
    are a size on purpose, and float or int data converts the same way torch.tensor does: not flagged."""
    if not (_is_call_to(node, ctx, *LEGACY_TYPES, *_CUDA_TYPES) and len(node.args) == 1):
        return False
    data = ctx.resolve(node.args[0], node.lineno)
    if _int_expr(data):
        return not _filled_at_once(node, ctx)
    return ctx.qualified(node.func) not in ("torch.BoolTensor", "torch.cuda.BoolTensor") and _bool_data(data)


# the in-place methods that overwrite every element of a tensor
_FILLS = (
    "uniform_",
    "normal_",
    "random_",
    "fill_",
    "zero_",
    "bernoulli_",
    "exponential_",
    "geometric_",
    "cauchy_",
    "log_normal_",
    "copy_",
)


def _filled_at_once(node, ctx) -> bool:
    """``torch.FloatTensor(n).uniform_(-1, 1)`` (``torch.LongTensor(1).cuda().fill_(v)``): the int is
    a size on purpose and every element is written before anything reads it, so no uninitialised value
    is seen; or ``buf = torch.FloatTensor(n)`` whose next use fills it (``buf.fill_(0)``, ``buf[:] = x``)."""
    while True:
        up = ctx.parent(node)
        if isinstance(up, ast.Assign) and len(up.targets) == 1 and isinstance(up.targets[0], ast.Name):
            return _next_use_fills(up.targets[0].id, up, ctx)
        if not isinstance(up, ast.Attribute) or not _method(ctx.parent(up), *_FILLS, *_CONVERSIONS, "contiguous"):
            return False
        if up.attr in _FILLS:
            return True
        node = ctx.parent(up)  # a copy to another device or dtype: still uninitialised, look further


def _next_use_fills(name: str, assign, ctx) -> bool:
    """The first use of ``name`` after ``assign`` in this function writes every element: a fill method
    (``name.zero_()``), or a whole-slice store (``name[:] = x``, ``name[...] = x``)."""
    uses = sorted(
        (n for n in ast.walk(ctx.function) if isinstance(n, ast.Name) and n.id == name and n.lineno > assign.lineno),
        key=lambda n: (n.lineno, n.col_offset),
    )
    if not uses:
        return False
    up = ctx.parent(uses[0])
    if isinstance(up, ast.Attribute) and _method(ctx.parent(up), *_FILLS):
        return True
    return (
        isinstance(up, ast.Subscript)
        and isinstance(up.ctx, ast.Store)
        and (
            isinstance(up.slice, ast.Slice)
            and up.slice.lower is None
            and up.slice.upper is None
            or _const(up.slice, Ellipsis)
        )
    )


_LINEAR_MODES = ("linear", "bilinear", "bicubic", "trilinear")


def _resize_mode(call, ctx):
    """(mode, align_corners) of an interpolate/upsample call, by keyword or position."""
    q = ctx.qualified(call.func)
    mode_at = 2 if q == "torch.nn.Upsample" else 3
    return _arg(call, mode_at, "mode"), _arg(call, mode_at + 1, "align_corners")


def _interpolate_without_align_corners(node, ctx) -> bool:
    """A linear-mode resize left at the default beside one with ``align_corners=True`` in the same
    function, or in another function of the file in the same mode (training and prediction): the two
    disagree when they make the same resize (mode and size). A resize at the default on its own is the
    default on purpose (most models were trained with it)."""
    if not _is_call_to(node, ctx, *INTERP):
        return False
    mode, corners = _resize_mode(node, ctx)
    if not (
        isinstance(mode, ast.Constant)
        and mode.value in _LINEAR_MODES
        and corners is None
        and not any(k.arg is None for k in node.keywords)
    ):
        return False
    if any(_is_call_to(n, ctx, *INTERP) and _const(_resize_mode(n, ctx)[1], True) for n in ast.walk(ctx.function)):
        return True
    # another function of the file (train vs predict) makes the same resize (mode and target size or
    # scale) with align_corners=True
    here = _resize_target(node, ctx)
    return here is not None and any(
        _is_call_to(n, ctx, *INTERP)
        and _const(_resize_mode(n, ctx)[1], True)
        and _resize_target(n, ctx) == here
        and isinstance(_resize_mode(n, ctx)[0], ast.Constant)
        and _resize_mode(n, ctx)[0].value == mode.value
        for n in ast.walk(ctx.module)
    )


def _resize_target(call, ctx) -> str | None:
    """The size or scale a resize aims at, as written (``(224, 224)``), or None."""
    at = 0 if ctx.qualified(call.func) == "torch.nn.Upsample" else 1  # Upsample(size, scale_factor, ...)
    target = _arg(call, at, "size")
    if target is None:
        target = _arg(call, at + 1, "scale_factor")
    return ast.unparse(target) if target is not None else None


_REPORTERS = ("print", "warn", "warning", "info", "debug", "error", "log", "assert_", "write")


def _result_checked(call, ctx) -> bool:
    """The value of ``call`` is looked at: returned, indexed, unpacked, its fields read, tested,
    compared, printed or logged. Bound to a name: any such use of the name below it counts."""
    parent = ctx.parent(call)
    if isinstance(parent, ast.Expr):
        return False
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id
        uses = [
            n
            for n in ast.walk(ctx.function)
            if isinstance(n, ast.Name)
            and n.id == name
            and isinstance(n.ctx, ast.Load)
            and n.lineno >= parent.lineno
            and n is not call
        ]
        return any(_use_checks(u, ctx) for u in uses)
    if isinstance(parent, ast.Call) and call in parent.args:
        return _passed_to_a_check(parent, parent.args.index(call), ctx)
    return True  # returned, indexed, unpacked, compared, tested, assigned to an attribute ...


def _use_checks(use, ctx) -> bool:
    parent = ctx.parent(use)
    if isinstance(parent, ast.Call) and use in parent.args:
        return _passed_to_a_check(parent, parent.args.index(use), ctx)
    if isinstance(parent, (ast.keyword, ast.Expr)):
        return False
    return True  # res.missing_keys, res[0], return res, if res.missing_keys, assert not res..., f"{res}"


def _passed_to_a_check(call, index, ctx) -> bool:
    """The result handed to ``call`` as its ``index``-th argument is checked there: ``call`` prints or
    logs it, or is a function of this file that tests the keys (``if result.missing_keys``). A
    function of this file that only carries them on does not check; one we cannot see is trusted."""
    name = _called_name(call)
    if name in _REPORTERS or name in ("len", "bool", "any", "all"):
        return True
    callee = next(
        (n for n in ast.walk(ctx.module) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name),
        None,
    )
    if callee is None:
        return True
    params = [a.arg for a in callee.args.args]
    if params and params[0] in ("self", "cls") and isinstance(call.func, ast.Attribute):
        params = params[1:]
    if index >= len(params):
        return True
    param = params[index]
    tests = [n.test for n in ast.walk(callee) if isinstance(n, (ast.If, ast.Assert, ast.While, ast.IfExp))]
    tests += [n for n in ast.walk(callee) if isinstance(n, ast.Call) and _called_name(n) in _REPORTERS + ("len",)]
    return any(isinstance(n, ast.Name) and n.id == param for t in tests for n in ast.walk(t))


def _partial_by_design(state, ctx, line) -> bool:
    """A partial load is what the code means: the state dict is another live module's
    (``controlnet.blocks.load_state_dict(unet.blocks.state_dict(), strict=False)``, copying the parts
    that match), or was built against the model's own keys (``intersect_dicts(ckpt, self.state_dict())``),
    or was filtered in this function (a comprehension with an ``if``, keys popped or deleted), or is a
    dict literal naming each key it loads, or the function compares the keys itself."""
    value = ctx.resolve(state, line) if state is not None else None
    if value is not None:
        parts = [value] + [
            ctx.value_of(n, line) for n in ast.walk(value) if isinstance(n, ast.Name)
        ]  # own = m.state_dict()
        if any(_method(n, "state_dict") for p in parts if p is not None for n in ast.walk(p)):
            return True
    if isinstance(value, ast.DictComp) and any(g.ifs for g in value.generators):
        return True  # {k: v for k, v in sd.items() if k in own}: filtered; a renaming comprehension keeps every key
    if (
        isinstance(value, ast.Dict)
        and value.keys
        and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys)
    ):
        return True  # {"embedding.weight": w}: the code names each key it loads, the rest is left as it is on purpose
    if any(
        isinstance(n, ast.Name) and n.id in ("missing_keys", "unexpected_keys") and isinstance(n.ctx, ast.Store)
        for n in ast.walk(ctx.function)
    ):
        return True  # the keys are compared by hand in this function
    if isinstance(state, ast.Attribute) and _kept_snapshot(state.attr, ctx):
        return True
    if not isinstance(state, ast.Name):
        return False
    for n in ast.walk(ctx.function):
        if _method(n, "pop") and getattr(n.func.value, "id", None) == state.id:
            return True
        if isinstance(n, ast.Delete) and any(
            getattr(getattr(t, "value", None), "id", None) == state.id for t in n.targets
        ):
            return True
    return False


def _kept_snapshot(attr: str, ctx) -> bool:
    """``m.load_state_dict(m._saved, strict=False)``: a snapshot the code kept on an attribute, restored.
    Every value this module stores in ``._saved`` (other than None) is taken from a live module's
    ``state_dict()``, there or in the function of this module that computes it
    (``m._saved = self._swap_in(m, new)``, which returns the layers it overwrote): its keys are the
    module's own, so loading the subset it holds is partial by design. A checkpoint kept there
    (``self._ckpt = torch.load(path)``) is not a snapshot."""
    stored = [
        n.value
        for n in ast.walk(ctx.module)
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == attr for t in n.targets)
    ]
    stored = [v for v in stored if not (isinstance(v, ast.Constant) and v.value is None)]
    return bool(stored) and all(_reads_state_dict(v, ctx) for v in stored)


def _reads_state_dict(expr, ctx) -> bool:
    """``expr`` calls ``.state_dict()``, or calls a function of this module (``helper(...)``,
    ``self.helper(...)``) that does."""
    if any(_method(n, "state_dict") for n in ast.walk(expr)):
        return True
    called = {
        c.func.id if isinstance(c.func, ast.Name) else c.func.attr
        for c in ast.walk(expr)
        if isinstance(c, ast.Call)
        and (
            isinstance(c.func, ast.Name)
            or (isinstance(c.func, ast.Attribute) and getattr(c.func.value, "id", None) in ("self", "cls"))
        )
    }
    return any(
        isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        and f.name in called
        and any(_method(n, "state_dict") for n in ast.walk(f))
        for f in ast.walk(ctx.module)
    )


def _retry_after_check(call, ctx) -> bool:
    """The load sits under ``if result.missing_keys:``: a second try after the keys were looked at."""
    node = ctx.parent(call)
    while node is not None and node is not ctx.function:
        if isinstance(node, ast.If) and any(
            isinstance(n, ast.Attribute) and n.attr in ("missing_keys", "unexpected_keys") for n in ast.walk(node.test)
        ):
            return True
        node = ctx.parent(node)
    return False


def _strict_false_unchecked(node, ctx) -> bool:
    """``load_state_dict(sd, strict=False)`` (or ``strict`` as the 2nd positional) whose result,
    the missing and unexpected keys, nobody looks at, unless the load is partial by design
    (``_partial_by_design``: a subset of the keys, or another model's state dict)."""
    if not (_method(node, "load_state_dict") and _const(_arg(node, 1, "strict"), False)):
        return False
    if _result_checked(node, ctx) or _retry_after_check(node, ctx):
        return False
    # a module's key matching; UNSURE on other objects (TensorDict.load_state_dict restores a storage)
    return not _partial_by_design(_arg(node, 0, "state_dict"), ctx, node.lineno) and receiver_holds(node, ctx, "module")


_OPTIMIZER_NAME = ("optimizer", "optim", "opt", "optimiser")


def _optimizer_step(call, ctx) -> bool:
    """``optimizer.step()`` (not a scheduler's, a diffusion scheduler's or any other object's), or
    ``scaler.step(optimizer)``."""
    if not _method(call, "step"):
        return False
    receiver = call.func.value
    kind = ctx.kind(receiver)
    if kind == "optimizer":
        return True
    if kind is None and not call.args and _looks_like_optimizer(receiver):
        return True
    return len(call.args) == 1 and (ctx.kind(call.args[0]) == "optimizer" or _looks_like_optimizer(call.args[0]))


def _looks_like_optimizer(node) -> bool:
    name = getattr(node, "id", getattr(node, "attr", "")) or ""
    words = name.lower().split("_")
    return any(w in _OPTIMIZER_NAME for w in words) and not any("sched" in w or w == "lr" for w in words)


def _clears_grads(node) -> bool:
    for n in ast.walk(node):
        if _method(n, "zero_grad", "clear_grad"):
            return True
        if isinstance(n, ast.Assign) and any(getattr(t, "attr", None) == "grad" for t in n.targets):
            return True
        if _method(n, "zero_", "detach_") and getattr(n.func.value, "attr", None) in ("grad", "data"):
            return True
    return False


def _trains(loop, ctx) -> bool:
    calls = [n for n in ast.walk(loop) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    return any(c.func.attr == "backward" for c in calls) and any(_optimizer_step(c, ctx) for c in calls)


def _enclosing_loops(node, ctx):
    """The loops around ``node`` in its function, innermost first."""
    up = ctx.parent(node)
    while up is not None and up is not ctx.function:
        if isinstance(up, (ast.For, ast.While)):
            yield up
        up = ctx.parent(up)


def _first_backward(loop, node) -> bool:
    """``node`` is the loop's first backward() call in source order (a loop's finding is reported once)."""
    calls = [n for n in ast.walk(loop) if _method(n, "backward")]
    return bool(calls) and min(calls, key=lambda n: (n.lineno, n.col_offset)) is node


def _backward_without_zero_grad(node, ctx) -> bool:
    """Reported at the backward() of the innermost loop that trains without clearing gradients: the line
    above which zero_grad() belongs."""
    if not _method(node, "backward"):
        return False
    for loop in _enclosing_loops(node, ctx):
        if _trains(loop, ctx):
            return _loop_without_zero_grad(loop, ctx) and _first_backward(loop, node)
    return False


def _fresh_optimizer(loop, ctx) -> bool:
    """The optimizer stepped in the loop is built in it: a new one (over new tensors) each pass."""
    for call in ast.walk(loop):
        if isinstance(call, ast.Call) and _optimizer_step(call, ctx) and isinstance(call.func.value, ast.Name):
            ctor = ctx.value_of(call.func.value, call.lineno)
            if (
                isinstance(ctor, ast.Call)
                and (ctx.qualified(ctor.func) or "").startswith("torch.optim.")
                and loop.lineno <= ctor.lineno <= call.lineno
            ):
                return True
    return False


def _loop_without_zero_grad(node, ctx) -> bool:
    """The innermost loop that calls backward() and an optimizer's step() clears no gradients (an
    optimizer built afresh in each pass starts from tensors of that pass)."""
    if not isinstance(node, (ast.For, ast.While)) or not _trains(node, ctx) or _clears_grads(node):
        return False
    if _fresh_optimizer(node, ctx):
        return False
    inner = [n for n in ast.walk(node) if n is not node and isinstance(n, (ast.For, ast.While))]
    return not any(_trains(n, ctx) for n in inner)


def _backward_twice(node, ctx) -> bool:
    """The second ``x.backward()`` on a graph whose first backward did not retain it."""
    if not _method(node, "backward"):
        return False
    loop = next(_enclosing_loops(node, ctx), None)  # both in one pass of the same loop (or both outside any)
    first = [
        c
        for c in _in_function_calls(ctx, "backward")
        if c.lineno < node.lineno
        and _own_code(c, ctx)
        and next(_enclosing_loops(c, ctx), None) is loop
        and not _const(_kw(c, "retain_graph"), True)
        and _shared_graph(c, node, ctx)
        and not _exclusive(c, node, ctx.function)
    ]
    return bool(first)


def _own_code(node, ctx) -> bool:
    """``node`` belongs to the current function (or the module's own statements), not to a function
    or class nested in it."""
    up = ctx.parent(node)
    while up is not None and up is not ctx.function:
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False
        up = ctx.parent(up)
    return True


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


def _loss_of(call: ast.Call, ctx):
    """What a backward call differentiates: ``loss.backward()``'s receiver; ``fabric.backward(loss)``'s
    argument (a framework's backward takes the loss); None when neither is a tensor we can see."""
    receiver = call.func.value
    if call.args and ctx.kind(receiver) != "tensor":
        made = ctx.value_of(receiver, call.lineno)  # out = model(x); out.backward(grad): a tensor, grad its gradient
        if isinstance(made, ast.Call) and not _called_name(made)[:1].isupper():  # not Accelerator()/Fabric()
            return receiver
        return call.args[0]
    return receiver


def _computed_sources(expr, ctx, line, depth=0, seen=None) -> dict:
    """The computed tensors ``expr`` was derived from in this function: a name bound to an op's result
    (a graph node), keyed by that binding (the assigned expression), so a name assigned again between
    two backward calls (``output = model(batch)`` before each) is two sources, one graph each; the
    value is the name to read the graph from. Parameters, loader batches and leaves made by a factory
    are not sources."""
    seen = set() if seen is None else seen
    out = {}
    for n in _graph_names(expr, ctx):
        if not isinstance(n, ast.Name) or n.id in seen or n.id in ("self", "cls") or depth > 8:
            continue
        seen.add(n.id)
        if _callable_name(n, ctx, line):
            continue  # a model, a loss or a helper: shared by both losses, but not a node of either graph
        value = ctx.value_of(n, line)
        if value is None:
            out.update((id(call), call) for call in _unpacked_call(n, ctx, line))
            continue
        if isinstance(value, ast.Call) and (_leaf_factory(value, ctx) or _method(value, "requires_grad_")):
            continue  # ones_like(out), t.requires_grad_(): a new leaf, no node of a graph
        if isinstance(value, (ast.BinOp, ast.UnaryOp)) or (
            isinstance(value, ast.Call) and not _leaf_factory(value, ctx)
        ):
            out[id(value)] = n.id
        out.update(_computed_sources(value, ctx, line, depth + 1, seen))
    return out


_NOT_TENSORS = ("module", "loss", "optimizer", "scheduler", "loader")


def _callable_name(name: ast.Name, ctx, line) -> bool:
    """``name`` holds a module, a loss, an optimizer, a scheduler or a loader, or the function calls it
    (``model(*batch)``): a callable, not a tensor, so it is no node of a graph (what built it is not
    either)."""
    if ctx.kind(name, line) in _NOT_TENSORS:
        return True
    return any(
        isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == name.id
        for c in ast.walk(ctx.function or ctx.module)
    )


def _unpacked_call(name: ast.Name, ctx, line) -> set:
    """``logits, feats = model(x)``: the names unpacked from one call share that call's graph; the
    call itself (one node, the same for each of them) stands for it. A loader's batch (``x, y =
    batch``) is not a call."""
    binding, _ = ctx.bindings.lookup(name.id, ctx.chain(), line)
    if (
        binding is None
        or binding.how != "item"
        or not isinstance(binding.value, ast.Call)
        or not binding.value.args
        or not _forward_call(binding.value, ctx, line)
    ):
        return set()
    return {binding.value}


def _forward_call(call: ast.Call, ctx, line) -> bool:
    """A model run on its input: a ``self.`` attribute (``self.model(x)``) or a callable the function was
    handed or built (``net(x)``, ``gen(z)``); not a function of this module or a library's
    (``x, y = get_batch(i)``, ``ref, fp8 = build_pair(k, n)``: data or models, not one graph)."""
    func = call.func
    if isinstance(func, ast.Attribute):
        if getattr(func.value, "id", None) != "self" or ctx.kind(func, line) not in (None, "module"):
            return False
        # ``self._setup(model_id)`` in a test or trainer class: one of its own methods, a helper
        # that builds models and data, not a forward (which in an nn.Module it may be)
        return not _helper_method(func, ctx)
    if not isinstance(func, ast.Name) or ctx.qualified(func) is not None:
        return False
    binding, _ = ctx.bindings.lookup(func.id, ctx.chain(), line)
    return binding is not None and binding.how in ("param", "assign") and ctx.kind(func, line) in (None, "module")


def _helper_method(func, ctx) -> bool:
    """``self.name`` where the enclosing class, which is no nn.Module (a test case, a trainer), defines
    a method ``name``: a helper of that class, not a model (in an nn.Module, ``self.encode(x)`` runs
    the model's own layers)."""
    klass = ctx.klass
    return (
        isinstance(func, ast.Attribute)
        and getattr(func.value, "id", None) == "self"
        and klass is not None
        and any(isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == func.attr for f in klass.body)
        and not ctx.bindings.is_module_class(klass)
    )


def _graph_names(expr, ctx):
    """The names in ``expr`` that carry its graph: not those under ``.detach()``/``.item()`` or a
    factory (``torch.ones_like(out)``)."""
    todo = [expr]
    while todo:
        node = todo.pop()
        if (
            _method(node, "detach", "item", "numpy", "tolist")
            or (isinstance(node, ast.Call) and _leaf_factory(node, ctx))
            or isinstance(node, ast.Compare)  # x is not None, x > 0: a bool, no graph
        ):
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


_LEAVES = _RAW_DATA[:9] + (
    "arange",
    "empty",
    "parameter",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "randint",
    "randint_like",
    "randperm",
    "linspace",
    "eye",
)


def _leaf_factory(call, ctx) -> bool:
    """A tensor made from nothing (a factory, ``ones_like(out)`` included): it carries no graph."""
    held = ctx.held(call)
    if held is not None and held.kind == "tensor" and held.what in _LEAVES:
        return True
    return (ctx.qualified(call.func) or "").split(".")[-1] in _LEAVES and (ctx.qualified(call.func) or "").startswith(
        "torch."
    )


def _has_graph(expr, ctx, line, depth=0) -> bool:
    """The expression carries an autograd graph as far as the code shows: it comes out of a model (a
    callable the function was handed or built: ``G(z)``, ``self.encoder(x)``) or from a leaf made with
    requires_grad=True, through ops; a factory's tensor, a library function of grad-free data, or a
    ``.detach()`` does not."""
    if depth > 10 or expr is None:
        return False
    d = depth + 1
    if isinstance(expr, (ast.Name, str)):
        value = ctx.bindings.value_of(getattr(expr, "id", expr), ctx.chain(), line)
        if value is None or ctx.kind(value, line) in ("module", "loss", "optimizer", "scheduler", "loader", "ndarray"):
            return False  # unknown, or the model itself rather than a tensor out of it
        return _has_graph(value, ctx, line, d)
    if isinstance(expr, (ast.Attribute, ast.Subscript, ast.Starred)):
        return _has_graph(expr.value, ctx, line, d)
    if isinstance(expr, ast.BinOp):
        return _has_graph(expr.left, ctx, line, d) or _has_graph(expr.right, ctx, line, d)
    if isinstance(expr, ast.UnaryOp):
        return _has_graph(expr.operand, ctx, line, d)
    if not isinstance(expr, ast.Call):
        return False
    return _call_has_graph(expr, ctx, line, d)


def _call_has_graph(expr: ast.Call, ctx, line, d) -> bool:
    """``_has_graph`` of a call: a factory, a method, a library function, code of this module or a model."""
    if _leaf_factory(expr, ctx):
        return _const(_kw(expr, "requires_grad"), True)
    if _method(expr, "detach", "item", "numpy", "tolist", "detach_"):
        return False
    if _method(expr, "requires_grad_"):
        return True
    args = [*expr.args, *(k.value for k in expr.keywords)]
    from_args = any(_has_graph(a, ctx, line, d) for a in args)
    func = expr.func
    if ctx.qualified(func) is not None:  # a library function (torch.*, an import): its inputs' graph
        return from_args
    if (isinstance(func, ast.Name) and _plain_function(func, ctx, line)) or _helper_method(func, ctx):
        # int(opt.ngpu), tilt(x), self.make_inputs(n) in a test class: a builtin, a function of this
        # module or a method of a class that is no nn.Module, given only data, makes data; handed a
        # model (helper(model, x)) it may run it
        return from_args or any(isinstance(a, ast.Name) and _callable_name(a, ctx, line) for a in args)
    if isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self"):
        return True  # a model or a method of one: G(z), self.encoder(x)
    if isinstance(func, ast.Attribute):
        held = ctx.held(func.value)
        if held is not None and held.kind in ("module", "loss"):
            return True
        return from_args or _has_graph(func.value, ctx, line, d)
    return from_args


def _plain_function(func: ast.Name, ctx, line) -> bool:
    """``func`` names a Python builtin nobody rebound (``int``, ``len``, ``sum``) or a function defined
    with ``def`` in this module: code, not a model object."""
    binding, _ = ctx.bindings.lookup(func.id, ctx.chain(), line)
    if binding is None:
        return func.id in _BUILTINS
    return isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef))


_BUILTINS = frozenset(dir(builtins))


def _shared_graph(a: ast.Call, b: ast.Call, ctx) -> bool:
    """Both backward calls reach one computed intermediate that carries a graph (``y = x * x``,
    ``out = model(x)`` under both losses); sharing a leaf, a module, a target built by ``ones_like``,
    a grad-free input or a variable name is not sharing a graph."""
    la, lb = _loss_of(a, ctx), _loss_of(b, ctx)
    if la is None or lb is None:
        return False
    sources_a, sources_b = _computed_sources(la, ctx, a.lineno), _computed_sources(lb, ctx, b.lineno)
    return any(_has_graph(sources_a[key], ctx, a.lineno) for key in sources_a.keys() & sources_b.keys())


_CONVERSIONS = ("to", "cuda", "cpu", "double", "float", "half", "long", "int", "bfloat16", "bool", "type")


def _tensor_to_discarded(node, ctx) -> bool:
    """``x.to(device)`` as a statement, where ``x`` holds a tensor (a factory's result, a batch from a
    loader, a model's output, a tensor parameter): the converted copy is thrown away. A module's
    ``.to()`` works in place and is not flagged; neither is anything whose kind is unknown."""
    if not (isinstance(node, ast.Expr) and _method(node.value, *_CONVERSIONS)):
        return False
    receiver = node.value.func.value
    return ctx.kind(receiver) == "tensor" and not _whole_batch(receiver, ctx, node.lineno)


def _whole_batch(name, ctx, line) -> bool:
    """``for batch in loader: batch.to(device)``: a loader's whole element may be a dict-like batch
    (a HF BatchEncoding, whose .to() moves its tensors in place), not known to be one tensor; an
    unpacked element (``for x, y in loader``) is."""
    if not isinstance(name, ast.Name):
        return False
    binding, _ = ctx.bindings.lookup(name.id, ctx.chain(), line)
    if binding is None or binding.how != "iter":
        return False
    return any(
        isinstance(n, (ast.For, ast.AsyncFor))
        and n.lineno == binding.line
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
        for n in ast.walk(ctx.function)
    )


_DOUBLE = ("float64", "double")


def _single_precision(expr, ctx) -> bool | None:
    """True: the tensor is float32 (a factory's default dtype, or ``.float()``); False: float64;
    None: cannot tell."""
    value = ctx.resolve(expr, getattr(expr, "lineno", 1 << 30))
    while _method(value, "requires_grad_", "detach", "clone", "contiguous", "cuda", "cpu"):
        value = value.func.value  # these keep the dtype
    if _method(value, "double"):
        return False
    if _method(value, "float"):
        return True
    if _method(value, "to", "type"):
        text = ast.unparse(value)
        return False if any(d in text for d in _DOUBLE) else (True if "float32" in text else None)
    if (
        isinstance(value, ast.Call)
        and (ctx.qualified(value.func) or "").split(".")[-1] in ("rand", "randn", "zeros", "ones", "empty", "full")
        and (ctx.qualified(value.func) or "").count(".") == 1
    ):
        dtype = _kw(value, "dtype")
        if dtype is None:
            return True
        text = ast.unparse(dtype)
        return False if any(d in text for d in _DOUBLE) else (True if "float32" in text or "half" in text else None)
    return None


def _gradcheck_single_precision(node, ctx) -> bool:
    if not _is_call_to(
        node,
        ctx,
        "torch.autograd.gradcheck",
        "torch.autograd.gradcheck.gradcheck",
        "torch.autograd.gradgradcheck",
        "torch.autograd.gradcheck.gradgradcheck",
    ):
        return False
    inputs = _arg(node, 1, "inputs")
    elements = inputs.elts if isinstance(inputs, (ast.Tuple, ast.List)) else [inputs]
    verdicts = [_single_precision(e, ctx) for e in elements if e is not None]
    if any(v is True for v in verdicts):
        return "set_default_dtype" not in ast.unparse(ctx.module)
    if any(v is False for v in verdicts):
        return False
    # unknown inputs: the function hands the inputs float32 and never float64
    text = ast.unparse(ctx.function) if ctx.function is not None else ""
    return "float32" in text and not any(d in text for d in _DOUBLE)


_FACTORIES = (
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros",
    "ones",
    "empty",
    "full",
    "rand",
    "randn",
    "randint",
    "arange",
    "linspace",
    "eye",
    "zeros_like",
    "ones_like",
)


def _unregistered_tensor_attribute(node, ctx) -> bool:
    """``self.x = torch.zeros(...)`` in an nn.Module's ``__init__``, never registered as a buffer or
    wrapped in nn.Parameter: the tensor is left out of state_dict() and of .to()/.double()/.cuda()."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return False
    target = node.targets[0]
    fn = ctx.function
    if not (
        isinstance(target, ast.Attribute)
        and getattr(target.value, "id", None) == "self"
        and isinstance(fn, ast.FunctionDef)
        and fn.name == "__init__"
        and _module_method(ctx)
    ):
        return False
    if not _made_by_factory(node.value, ctx) or _scalar_or_placed(node.value, ctx):
        return False
    if _used_while_building_only(target.attr, node, ctx):  # a size or a mask read in __init__ alone
        return False
    registered = {
        c.args[0].value
        for c in ast.walk(ctx.klass)
        if _method(c, "register_buffer", "register_parameter") and c.args and isinstance(c.args[0], ast.Constant)
    }
    # an ``_apply`` override in the package reassigning it from ``fn(...)`` moves it with the model
    if target.attr in registered or target.attr in ctx.moved_by_package():
        return False
    return not _kept_by_the_class(target.attr, ctx)


_MOVES = ("to", "cuda", "type_as")


def _scalar_or_placed(expr, ctx) -> bool:
    """A 0-dim tensor (``torch.tensor(0.5)``: it combines with a tensor on any device), or one made
    with an explicit ``device=`` (placed where the module's author wants it); not one made to be
    learnt (``requires_grad=True``: left out of parameters(), no optimizer ever sees it)."""
    call = ctx.resolve(expr, getattr(expr, "lineno", 1 << 30))
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and ctx.qualified(call.func) is None:
        call = call.func.value  # torch.tensor(2.0).log(): the factory's call
    if not isinstance(call, ast.Call) or _const(_kw(call, "requires_grad"), True):
        return False
    if _kw(call, "device") is not None:
        return True
    name = (ctx.qualified(call.func) or "").rsplit(".", 1)[-1]
    if name in ("tensor", "as_tensor", "scalar_tensor") and call.args:
        return isinstance(call.args[0], ast.Constant) or (
            isinstance(call.args[0], ast.UnaryOp) and isinstance(call.args[0].operand, ast.Constant)
        )
    return name in ("zeros", "ones", "empty", "full", "randn", "rand") and (
        not call.args or (len(call.args) == 1 and isinstance(call.args[0], ast.Tuple) and not call.args[0].elts)
    )


def _used_while_building_only(attr: str, assign, ctx) -> bool:
    """``self.<attr>`` is read later in ``__init__`` (a layer size, a mask that picks parameters) and in
    no other method of the class: no forward ever meets it on another device."""

    def reads(fn):
        return [
            n
            for n in ast.walk(fn)
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and _self_attr(n, attr)
        ]

    methods = [fn for fn in ctx.klass.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))]
    in_init = [n for fn in methods if fn.name == "__init__" for n in reads(fn) if n.lineno > assign.lineno]
    return bool(in_init) and not any(reads(fn) for fn in methods if fn.name != "__init__")


def _kept_by_the_class(attr: str, ctx) -> bool:
    """The class's other methods take care of ``self.<attr>`` themselves: they move it where it is used
    (``self.bins.to(x.device)``, ``self.t = self.t.cuda()``) or replace it with a tensor computed at run
    time (a cache or a placeholder: ``self.cached = emb.cos()``), so ``.to()`` not moving it loses nothing."""
    for fn in ctx.klass.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name == "__init__":
            continue
        for n in ast.walk(fn):  # moved at use: self.bins.to(x.device), torch.as_tensor(self.m).to(x.device)
            if _method(n, *_MOVES) and any(_self_attr(x, attr) for x in ast.walk(n.func.value)):
                return True
            if (
                isinstance(n, ast.Assign)
                and any(_self_attr(t, attr) for t in n.targets)
                and not _factory_call(n.value, ctx)
            ):
                return True
    return False


def _factory_call(expr, ctx) -> bool:
    """``torch.zeros(n)`` (or a method chained on it, ``torch.ones(n).float()``) written out: a new
    tensor on the default device, whatever the method's inputs were."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and ctx.qualified(expr.func) is None:
        expr = expr.func.value
    if not isinstance(expr, ast.Call):
        return False
    q = ctx.qualified(expr.func) or ""
    return q.count(".") == 1 and q.startswith("torch.") and q.split(".")[1] in _FACTORIES


def _self_attr(node, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and getattr(node.value, "id", None) == "self"


def _made_by_factory(expr, ctx, depth=0) -> bool:
    """A tensor made here by a torch factory: ``torch.ones(d)``, and what arithmetic or a tensor method
    makes of one (``torch.ones(d) * d ** -0.5``, ``-torch.arange(n).float() / n``), directly or through
    a local name bound to one (``freq = torch.as_tensor(counts)``; ``(freq.sum() / freq).clamp(...)``)."""
    if depth > 8:
        return False
    if isinstance(expr, ast.Name):
        value = ctx.value_of(expr, expr.lineno)
        return value is not None and _made_by_factory(value, ctx, depth + 1)
    if isinstance(expr, ast.BinOp):
        return _made_by_factory(expr.left, ctx, depth + 1) or _made_by_factory(expr.right, ctx, depth + 1)
    if isinstance(expr, ast.UnaryOp):
        return _made_by_factory(expr.operand, ctx, depth + 1)
    if not isinstance(expr, ast.Call):
        return False
    if isinstance(expr.func, ast.Attribute) and ctx.qualified(expr.func) is None:  # a method of what it is called on
        return expr.func.attr not in NON_TENSOR_METHODS and _made_by_factory(expr.func.value, ctx, depth + 1)
    q = ctx.qualified(expr.func) or ""
    if not (q.count(".") == 1 and q.startswith("torch.")):
        return False
    if q.split(".")[1] in _FACTORIES:
        return True
    # torch.tril(t), torch.log(t): an op on a tensor made here is one too
    return q.split(".")[1] in TENSOR_FUNCTIONS and bool(expr.args) and _made_by_factory(expr.args[0], ctx, depth + 1)


_EVAL_NAME = ("valid", "evaluat")


def _is_eval_function(fn) -> bool:
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    name = fn.name.lower()
    # ``eval`` as a word of the name (eval_one_epoch, _run_eval, do_eval), not inside one (retrieval)
    return any(w in name for w in _EVAL_NAME) or "eval" in name.split("_")


_NO_GRAD = (
    "torch.no_grad",
    "torch.inference_mode",
    "torch.autograd.no_grad",
    "torch.autograd.grad_mode.no_grad",
    "torch.set_grad_enabled",
    "torch.enable_grad",
)


def _no_grad_decorated(fn, ctx) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if ctx.qualified(target) in _NO_GRAD or getattr(target, "attr", "") in ("no_grad", "inference_mode"):
            return True
    return False


def _no_grad_block(node, ctx) -> bool:
    return isinstance(node, (ast.With, ast.AsyncWith)) and any(
        isinstance(i.context_expr, ast.Call)
        and (
            ctx.qualified(i.context_expr.func) in _NO_GRAD
            or _called_name(i.context_expr) in ("no_grad", "inference_mode")
        )
        for i in node.items
    )


def _called_under_no_grad(fn, ctx) -> bool:
    """This file calls the function inside ``with torch.no_grad():`` or from a no_grad-decorated function:
    the caller turned autograd off."""
    for n in ast.walk(ctx.module):
        inside = _no_grad_block(n, ctx) or (
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not fn and _no_grad_decorated(n, ctx)
        )
        if inside and any(
            isinstance(c, ast.Call) and _called_name(c) == fn.name for stmt in n.body for c in ast.walk(stmt)
        ):
            return True
    return False


def _eval_forward(fn, ctx):
    """The first model forward of a validation/evaluation function that runs with autograd recording
    (no ``torch.no_grad()``/``inference_mode()`` in it, on it or around its calls, no backward in it),
    or None."""
    if not _is_eval_function(fn) or _no_grad_decorated(fn, ctx) or _lightning_eval_hook(fn, ctx):
        return None
    calls = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    if any(
        ctx.qualified(c.func) in _NO_GRAD
        or _called_name(c)
        in ("no_grad", "inference_mode", "set_grad_enabled", "enable_grad", "backward", "grad", "requires_grad_")
        for c in calls
    ) or any(isinstance(n, ast.Attribute) and n.attr == "grad_fn" for n in ast.walk(fn)):
        return None  # the function turns autograd off itself, or uses the graph (reads .grad_fn)
    chain = ctx.chain()
    # what the function puts in eval mode is a module, however it was bound (``self.model = model``)
    evaluated = {ast.dump(c.func.value) for c in calls if _method(c, "eval") and not c.args and not c.keywords}

    def is_model(expr, line):
        held = ctx.bindings.held(expr, chain, line, ctx.klass)
        return (held is not None and held.kind == "module") or (
            held is None and (_name_of_model(expr) or ast.dump(expr) in evaluated)
        )

    modes = [c for c in calls if _method(c, "train", "eval")]
    for c in calls:
        if _in_train_mode(c, modes):
            continue  # model.train() then model(x): a training forward, not an evaluation
        if is_model(c.func, c.lineno) or _helper_runs(c, lambda e: is_model(e, c.lineno), ctx):  # noqa: B023 - called here
            return None if _called_under_no_grad(fn, ctx) else c
    return None


def _in_train_mode(call, modes) -> bool:
    """The last ``.train()``/``.eval()`` the function called on ``call``'s model before it is ``.train()``
    (``.train(False)`` is eval)."""
    target = ast.dump(call.func)
    before = [
        m
        for m in modes
        if ast.dump(m.func.value) == target and (m.lineno, m.col_offset) < (call.lineno, call.col_offset)
    ]
    if not before:
        return False
    last = before[-1]
    return last.func.attr == "train" and not (last.args and _const(last.args[0], False))


# the hooks Lightning's evaluation loops call under torch.no_grad()/inference_mode(): the step
# methods of a LightningModule (whose signature carries ``batch_idx``) and the evaluation hooks of a
# LightningModule or a Callback
_LIGHTNING_STEPS = ("validation_step", "test_step", "predict_step")
_LIGHTNING_HOOKS = ("on_validation_", "on_test_", "on_predict_", "validation_epoch_end", "test_epoch_end")


def _lightning_eval_hook(fn, ctx) -> bool:
    klass = ctx.klass
    if klass is None or fn not in klass.body:
        return False
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    if fn.name in _LIGHTNING_STEPS and "batch_idx" in params:
        return True
    lightning = any(
        (q := ctx.qualified(b) or "").startswith(("lightning.", "pytorch_lightning."))
        and q.rsplit(".", 1)[-1] in ("LightningModule", "Callback")
        for b in klass.bases
    )
    return lightning and (fn.name in _LIGHTNING_STEPS or fn.name.startswith(_LIGHTNING_HOOKS))


def _helper_runs(call, is_model, ctx, depth=0) -> bool:
    """``compute_loss(model, batch)``: a function of this module handed the model calls it (directly, or
    through another such function), with no no_grad()/inference_mode() of its own, on it or in it.
    A helper that only reads ``model.training`` or its parameters does not run a forward."""
    if not isinstance(call.func, ast.Name) or depth > 3:
        return False
    helper = ctx.bindings.module_function(call.func.id)
    if helper is None or _no_grad_decorated(helper, ctx):
        return False
    handed = {
        param for param, arg in arguments(call, helper).items() if not isinstance(arg, ast.Starred) and is_model(arg)
    }
    if not handed:
        return False
    inner = [n for n in ast.walk(helper) if isinstance(n, ast.Call)]
    if any(
        ctx.qualified(c.func) in _NO_GRAD
        or _called_name(c) in ("no_grad", "inference_mode", "set_grad_enabled", "enable_grad", "backward", "grad")
        for c in inner
    ):
        return False
    by_param = lambda e: isinstance(e, ast.Name) and e.id in handed  # noqa: E731
    return any(by_param(c.func) or _helper_runs(c, by_param, ctx, depth + 1) for c in inner)


def _name_of_model(callee) -> bool:
    """``model``/``net``, or ``self.model``/``self.net``: the usual names of the model being validated
    (a parameter, or a trainer's attribute set from one)."""
    if isinstance(callee, ast.Attribute) and getattr(callee.value, "id", None) == "self":
        callee = ast.Name(callee.attr)
    return isinstance(callee, ast.Name) and callee.id in ("model", "net")


def _eval_without_no_grad(node, ctx) -> bool:
    """Reported at the forward call that records the graph (where no_grad() belongs)."""
    fn = ctx.function
    if not (
        isinstance(node, ast.Call)
        and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
        and isinstance(node.func, (ast.Name, ast.Attribute))
        and _is_eval_function(fn)
    ):
        return False
    found = ctx.__dict__.setdefault("_eval_forward", {})  # once per function, not per call in it
    if id(fn) not in found:
        found[id(fn)] = _eval_forward(fn, ctx)
    return found[id(fn)] is node


def _tensor_copy_construct(node, ctx) -> bool:
    """``torch.tensor(t)`` where ``t`` already holds a tensor: a copy detached from the graph, with a warning."""
    return (
        _is_call_to(node, ctx, "torch.tensor")
        and len(node.args) >= 1
        and ctx.kind(node.args[0]) == "tensor"
        and not _type_tested(node, node.args[0], ctx)
    )


def _type_tested(node, value, ctx) -> bool:
    """``node`` runs under an ``if`` that tests the type of ``value`` (``isinstance(x, (list, tuple))``,
    ``not torch.is_tensor(x)``): the code knows what it holds there."""
    name = getattr(value, "id", None)

    def tests_type(test) -> bool:
        return any(
            isinstance(n, ast.Call)
            and _called_name(n) in ("isinstance", "is_tensor")
            and n.args
            and getattr(n.args[0], "id", None) == name
            for n in ast.walk(test)
        )

    up, child = ctx.parent(node), node
    while up is not None:
        if isinstance(up, (ast.If, ast.IfExp)) and child is not up.test and tests_type(up.test):
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
        if up is ctx.function:
            break
        up, child = ctx.parent(up), up
    return False


def _iterator_next_method(node, ctx) -> bool:
    """``iter(loader).next()``: Python 3 iterators have no ``.next()`` (the builtin ``next(it)``)."""
    return _method(node, "next") and not node.args and not node.keywords and ctx.kind(node.func.value) == "loader"


def _negative_step(node, ctx) -> bool:
    """``t[::-1]`` on a tensor: torch refuses negative slice steps (ValueError)."""
    if not isinstance(node, ast.Subscript):
        return False
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    negative = any(
        isinstance(p, ast.Slice) and isinstance(p.step, ast.UnaryOp) and isinstance(p.step.op, ast.USub) for p in parts
    )
    held = ctx.held(node.value) if negative else None
    return held is not None and held.kind == "tensor" and held.what != "output"  # a module's output may be a tuple


_DETERMINISTIC_FACTORIES = ("zeros", "ones", "empty", "full", "arange", "eye", "linspace", "logspace")
_RANDOM_FACTORIES = ("rand", "randn", "randint", "randperm")
_DTYPE_WORDS = (
    "float",
    "double",
    "half",
    "int",
    "long",
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "bfloat16",
    "complex64",
    "complex128",
)


def _moves_device(call, ctx) -> bool:
    """``.cuda()``, or ``.to(x)`` whose first argument is a device, not a dtype."""
    if _method(call, "cuda"):
        return True
    if not _method(call, "to") or not (call.args or _kw(call, "device") is not None):
        return False
    if _kw(call, "device") is not None:
        return True
    first = call.args[0]
    q = ctx.qualified(first) or ""
    if q.startswith("torch.") and q.split(".")[-1] in _DTYPE_WORDS:
        return False
    text = ast.unparse(first).lower()
    return "device" in text or "cuda" in text or text in ("dev", "gpu")


def _cpu_factory_moved(node, ctx) -> bool:
    """``torch.zeros(...).to(device)``: made on the CPU, then copied; pass ``device=`` to the factory."""
    if not (_moves_device(node, ctx) and isinstance(node.func.value, ast.Call)):
        return False
    made = node.func.value
    q = ctx.qualified(made.func) or ""
    # a random factory made on the CPU on purpose draws from a CPU generator= it is handed
    factories = _DETERMINISTIC_FACTORIES + (() if _kw(made, "generator") is not None else _RANDOM_FACTORIES)
    return (
        q.count(".") == 1
        and q.startswith("torch.")
        and q.split(".")[1] in factories
        and _kw(made, "device") is None
        and not any(k.arg is None for k in made.keywords)
    )


# modules without parameters or buffers: the same instance twice shares nothing that matters
_STATELESS = frozenset(
    """ReLU ReLU6 GELU SiLU Tanh Sigmoid LeakyReLU ELU SELU CELU Mish Hardswish Hardsigmoid Hardtanh
Softplus Softsign Softmax LogSoftmax Identity Dropout Dropout1d Dropout2d Dropout3d AlphaDropout MaxPool1d MaxPool2d
MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d
AdaptiveMaxPool2d AdaptiveMaxPool3d Flatten Unflatten Upsample PixelShuffle PixelUnshuffle ZeroPad2d ReflectionPad2d
ReplicationPad2d ConstantPad2d Tanhshrink Softshrink Hardshrink GLU Threshold""".split()
)


_CONTAINERS = ("torch.nn.Sequential", "torch.nn.ModuleList")


def _stateful_module(elt, ctx) -> bool:
    held = ctx.held(elt)
    return held is not None and held.kind == "module" and (held.what or "").rsplit(".", 1)[-1] not in _STATELESS


def _module_listed_twice(node, ctx) -> bool:
    """``nn.Sequential(block, block)``: one module object (a name bound to one instance) placed twice."""
    if not _is_call_to(node, ctx, *_CONTAINERS):
        return False
    elts = node.args
    if len(elts) == 1 and isinstance(elts[0], (ast.List, ast.Tuple)):  # nn.ModuleList([block, block])
        elts = elts[0].elts
    names = [e.id for e in elts if isinstance(e, ast.Name)]
    twice = {n for n in names if names.count(n) > 1}
    return any(isinstance(e, ast.Name) and e.id in twice and _stateful_module(e, ctx) for e in elts)


def _sharing_chosen(node, ctx) -> bool:
    """The list sits in one branch of an if/else whose other branch builds the same target another way
    (``if config.share_head: head = [m] * n else: head = [M() for _ in range(n)]``): sharing is a choice."""
    stmt, up = node, ctx.parent(node)
    while up is not None and not isinstance(up, ast.stmt):
        up = ctx.parent(up)
    stmt = up
    if not isinstance(stmt, ast.Assign):
        return False
    target = ast.dump(stmt.targets[0])
    branch = ctx.parent(stmt)
    if not (isinstance(branch, ast.If) and branch.orelse):
        return False
    other = branch.orelse if stmt in branch.body else branch.body
    return any(
        isinstance(n, ast.Assign) and any(ast.dump(t) == target for t in n.targets) for s in other for n in ast.walk(s)
    )


def _module_list_multiplied(node, ctx) -> bool:
    """``[nn.Linear(4, 4)] * n`` or ``[block] * n``: one module object listed n times, so its weights
    are shared (unless the code chooses between sharing and not: ``_sharing_chosen``)."""
    if _sharing_chosen(node, ctx):
        return False
    if isinstance(node, ast.Call):
        return _module_listed_twice(node, ctx)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return _one_module_comprehended(node, ctx)
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return False
    for side in (node.left, node.right):
        if isinstance(side, (ast.List, ast.Tuple)):
            if any(isinstance(elt, (ast.Call, ast.Name)) and _stateful_module(elt, ctx) for elt in side.elts):
                return True
    return False


def _one_module_comprehended(node, ctx) -> bool:
    """``[layer for _ in range(n)]`` where ``layer`` names one module built before the comprehension
    (a name or ``self.`` attribute its loops do not bind): n references to one object, not n modules."""
    elt = node.elt
    if (
        not _bound_name(elt)
        or isinstance(elt, ast.Name)
        and elt.id in {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
    ):
        return False
    return _stateful_module(elt, ctx)


def _parameter_replaced_after_optimizer(node, ctx) -> bool:
    """``m.weight = nn.Parameter(...)`` after an optimizer was built over ``m``'s parameters: the
    optimizer keeps updating the old tensor and never sees the new one."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Attribute)
        and _is_call_to(node.value, ctx, "torch.nn.Parameter", "torch.nn.parameter.Parameter")
    ):
        return False
    roots = _model_roots(node.targets[0].value, ctx, node.lineno)
    return any(_optimized_before(root, node.lineno, ctx) for root in roots)


def _model_roots(expr, ctx, line, depth=0) -> list:
    """What the assigned-to object is a part of: a name (``net`` of ``net.fc``), or a ``self.``
    attribute (``self.model`` of ``self.model.module.fc``); through local aliases (``bn =
    net.layer4[-1].bn3``) and both arms of a conditional one (``head = m.module.fc if ... else m.fc``)."""
    if depth > 4:
        return []
    if isinstance(expr, ast.IfExp):
        return _model_roots(expr.body, ctx, line, depth + 1) + _model_roots(expr.orelse, ctx, line, depth + 1)
    root = expr
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        if isinstance(root, ast.Attribute) and getattr(root.value, "id", None) == "self":
            return [root]
        root = root.value
    if not isinstance(root, ast.Name) or root.id in ("self", "cls"):
        return []
    part = ctx.value_of(root, line)
    if isinstance(part, (ast.Attribute, ast.Subscript, ast.IfExp)):
        return _model_roots(part, ctx, line, depth + 1)
    return [root]


def _optimizer_calls(function, ctx):
    for n in ast.walk(function):
        if isinstance(n, ast.Call):
            q = ctx.qualified(n.func) or ""
            if q.startswith("torch.optim.") and q.split(".")[-1][:1].isupper() and "lr_scheduler" not in q:
                yield n


def _mentions(call: ast.Call, root) -> bool:
    return any(ast.dump(x) == ast.dump(root) for a in call.args for x in ast.walk(a))


def _optimized_before(root, line, ctx) -> bool:
    """An optimizer was built over ``root``'s parameters before ``line``: above it in this function, or,
    for ``self.model``, in the class's construction (``__init__`` runs before any other method), over
    ``self.model`` or over the local it was stored from (``opt = AdamW(model.parameters()); self.model
    = DDP(model)``)."""
    if any(c.lineno < line and _mentions(c, root) for c in _optimizer_calls(ctx.function, ctx)):
        return True
    if isinstance(root, ast.Name) or ctx.klass is None or getattr(ctx.function, "name", "") in _construction(ctx.klass):
        return False
    for method, value, _ in ctx.bindings.self_attributes(ctx.klass).get(root.attr, ()):
        if method.name not in _construction(ctx.klass):
            continue
        local = ctx.bindings.scope(method).names  # ``model`` of ``self.model = DDP(model)``, not ``self``/``nn``
        sources = [root] + [n for n in ast.walk(value) if isinstance(n, ast.Name) and n.id in local and n.id != "self"]
        if any(_mentions(c, src) for c in _optimizer_calls(method, ctx) for src in sources):
            return True
    return False


def _integer_tensor(value, ctx) -> bool:
    """A tensor known to hold integers: ``torch.tensor([0, 1])`` of int literals, ``torch.arange(n)``
    of ints, ``torch.randint``, ``.long()``/``.int()``, or an integer ``dtype=``."""
    if _method(value, "long", "int", "short", "byte"):
        return True
    if not isinstance(value, ast.Call):
        return False
    q = ctx.qualified(value.func) or ""
    dtype = _kw(value, "dtype")
    if dtype is not None:
        return (ctx.qualified(dtype) or "").split(".")[-1] in (
            "long",
            "int",
            "int64",
            "int32",
            "int16",
            "int8",
            "uint8",
            "short",
        )
    if q in ("torch.tensor", "torch.as_tensor") and value.args and isinstance(value.args[0], (ast.List, ast.Tuple)):
        elts = [e for e in ast.walk(value.args[0]) if isinstance(e, ast.Constant)]
        return bool(elts) and all(type(e.value) is int for e in elts)
    if q == "torch.arange":
        return all(_int_expr(a) for a in value.args) and bool(value.args)
    if q in ("torch.from_numpy", "torch.as_tensor", "torch.tensor") and value.args:  # they keep the array's dtype
        return _integer_array(ctx.resolve(value.args[0], value.lineno), ctx)
    return q in ("torch.randint", "torch.randperm")


_INT_DTYPES = (
    "int",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "intp",
    "long",
    "longlong",
    "short",
    "byte",
    "bool_",
)


def _int_dtype(dtype, ctx) -> bool:
    """``np.int64``, ``int``, ``"int32"``, ``np.dtype("int64")``: an integer dtype, as NumPy spells one."""
    if isinstance(dtype, ast.Call) and _called_name(dtype) == "dtype" and dtype.args:
        dtype = dtype.args[0]
    if isinstance(dtype, ast.Constant) and isinstance(dtype.value, str):
        return dtype.value.lstrip("<>=|") in _INT_DTYPES or dtype.value.lstrip("<>=|") in ("i8", "i4", "i2", "u1")
    if isinstance(dtype, ast.Name) and dtype.id == "int":
        return True
    q = ctx.qualified(dtype) or ""
    return q.startswith("numpy.") and q.split(".")[-1] in _INT_DTYPES


def _integer_array(value, ctx) -> bool:
    """A NumPy array whose integer dtype the code states: ``a.astype(np.int64)``, ``np.zeros(n, dtype=int)``,
    ``np.arange(10)`` of ints, ``np.random.randint(...)``."""
    if not isinstance(value, ast.Call):
        return False
    if _method(value, "astype") and value.args:
        return _int_dtype(value.args[0], ctx)
    q = ctx.qualified(value.func) or ""
    if not q.startswith("numpy."):
        return False
    dtype = _kw(value, "dtype")
    if dtype is not None:
        return _int_dtype(dtype, ctx)
    last = q.split(".")[-1]
    if last == "arange":
        return bool(value.args) and all(_int_expr(a) for a in value.args)
    return q in ("numpy.random.randint", "numpy.random.permutation") and bool(value.args) and _int_expr(value.args[0])


def _inplace_float_into_int(node, ctx) -> bool:
    """``labels *= 0.9`` on an integer tensor: an in-place op cannot change the dtype (RuntimeError)."""
    if not (
        isinstance(node, ast.AugAssign)
        and isinstance(node.target, ast.Name)
        and isinstance(node.op, (ast.Mult, ast.Add, ast.Sub, ast.Div))
    ):
        return False
    floaty = isinstance(node.op, ast.Div) or (isinstance(node.value, ast.Constant) and type(node.value.value) is float)
    return floaty and _integer_tensor(ctx.value_of(node.target, node.lineno), ctx)


_FLOAT_LEGACY = ("torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor", "torch.cuda.FloatTensor")


def _float_class_target(node, ctx) -> bool:
    """cross_entropy whose target is built by a float legacy constructor (``torch.Tensor([1, 0])``):
    class indices as floats, read as probabilities (from 1.10) or refused."""
    if not _loss_call(node, ctx, "cross_entropy", "torch.nn.CrossEntropyLoss"):
        return False
    target = _arg(node, 1, "target")
    if target is None:
        return False
    value = ctx.resolve(target, node.lineno)
    cast = value.func.value if _float_cast(value) else None
    while _method(cast, "to", "cuda", "cpu", "contiguous"):  # labels.to(device).float(): still the labels
        cast = cast.func.value
    if cast is not None and (_has_ignore_index(node, ctx) or _loader_element(cast, ctx, value.lineno)):
        return True  # class indices (a loader's labels, or a loss told which index to ignore) cast to float
    while _method(value, "to", "cuda", "cpu") and not _method(value, "float", "double"):
        value = value.func.value
    return _is_call_to(value, ctx, *_FLOAT_LEGACY)


_FLOAT_WORDS = ("float", "float32", "float64", "double", "half", "float16", "bfloat16", "FloatTensor", "DoubleTensor")


def _float_cast(value) -> bool:
    """``t.float()``, ``t.to(torch.float32)``, ``t.to(device=d, dtype=torch.float)``, ``t.type(torch.FloatTensor)``."""
    if _method(value, "float", "double", "half"):
        return True
    if not _method(value, "to", "type"):
        return False
    dtype = _kw(value, "dtype")
    candidates = [dtype] if dtype is not None else list(value.args)
    return any(
        isinstance(c, (ast.Attribute, ast.Name)) and getattr(c, "attr", getattr(c, "id", "")) in _FLOAT_WORDS
        for c in candidates
    )


def _has_ignore_index(call, ctx) -> bool:
    """The loss was told an index to ignore: its targets are class indices by construction."""
    if _kw(call, "ignore_index") is not None:
        return True
    ctor = ctx.value_of(call.func, call.lineno) if isinstance(call.func, ast.Name) else None
    if (
        ctor is None
        and isinstance(call.func, ast.Attribute)
        and getattr(call.func.value, "id", None) == "self"
        and ctx.klass is not None
    ):
        attrs = ctx.bindings.self_attributes(ctx.klass).get(call.func.attr)
        ctor = attrs[0][1] if attrs else None
    return isinstance(ctor, ast.Call) and _kw(ctor, "ignore_index") is not None


def _loader_element(name, ctx, line) -> bool:
    """A name bound by unpacking a DataLoader's batch (``for imgs, masks in loader``): the dataset's labels."""
    if not isinstance(name, ast.Name):
        return False
    binding, _ = ctx.bindings.lookup(name.id, ctx.chain(), line)
    if binding is None or binding.how != "iter" or binding.value is None:
        return False
    held = ctx.held(name, line)  # a batch: of a DataLoader, or of a parameter named as one (bindings.py)
    return held is not None and held.what == "batch"


# what nn.Module (and DataParallel itself) answers; anything else is the wrapped model's, under .module
_MODULE_API = frozenset(
    """
add_module apply bfloat16 buffers children compile cpu cuda double eval extra_repr float forward get_buffer
get_extra_state get_parameter get_submodule half ipu load_state_dict modules mtia named_buffers named_children
named_modules named_parameters parameters register_backward_hook register_buffer register_forward_hook
register_forward_pre_hook register_full_backward_hook register_full_backward_pre_hook register_load_state_dict_post_hook
register_load_state_dict_pre_hook register_module register_parameter register_state_dict_post_hook
register_state_dict_pre_hook requires_grad_ set_extra_state set_submodule share_memory state_dict to to_empty train
type xpu zero_grad module device_ids output_device dim gather scatter replicate parallel_apply no_sync join
join_hook register_comm_hook process_group training
""".split()
)


def _dataparallel_attribute(node, ctx) -> bool:
    """``model.my_method()`` or ``model.fc`` on a DataParallel/DistributedDataParallel wrapper: the
    wrapper has only nn.Module's API; the model's own methods and layers are under ``model.module``.
    A value stored on the wrapper (``model.fc = ...``) is the wrapper's own, so only reads count."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)) or node.attr in _MODULE_API:
        return False
    if node.attr.startswith("__") or not _bound_name(node.value) or _wrap_checked(node, ctx):
        return False
    if _wrapped_on_self(node.value, ctx):
        return True
    alias = ctx.value_of(node.value, node.lineno) if isinstance(node.value, ast.Name) else None
    if _wrapped_on_self(alias, ctx):  # model = self.model; model.backbone
        return True
    held = ctx.held(node.value)
    return held is not None and held.kind == "module" and held.what in _DATA_PARALLEL


_DATA_PARALLEL = (
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.data_parallel.DataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
)


def _wrap_checked(node: ast.Attribute, ctx) -> bool:
    """The read sits in a branch of a test that asks whether this very object is wrapped
    (``m.module.fc if hasattr(m, "module") else m.fc``, ``if isinstance(m, (DataParallel, DDP))``):
    the code reads ``.module`` where it is there and the model's own attribute where it is not."""
    wrapper = ast.dump(node.value)
    child, up = node, ctx.parent(node)
    while up is not None and up is not ctx.function:
        if (
            isinstance(up, (ast.If, ast.IfExp, ast.While))
            and child is not up.test
            and any(
                isinstance(n, ast.Call)
                and getattr(n.func, "id", None) in ("hasattr", "isinstance")
                and n.args
                and ast.dump(n.args[0]) == wrapper
                and (n.func.id == "isinstance" or (len(n.args) > 1 and _const(n.args[1], "module")))
                for n in ast.walk(up.test)
            )
        ):
            return True
        child, up = up, ctx.parent(up)
    return False


def _wrapped_on_self(attr, ctx) -> bool:
    """``self.model`` where the class wraps it (``self.model = DataParallel(self.model)``): in this method,
    when its last assignment above is the wrapper; from another method, when ``__init__`` (or a method it
    calls) wraps it, since construction runs first. A wrap in some other method (``prepare_distributed()``)
    may come after this read (timm's tasks compile, reading ``.student``, then wrap)."""
    if not (isinstance(attr, ast.Attribute) and getattr(attr.value, "id", None) == "self" and ctx.klass is not None):
        return False
    assigned = ctx.bindings.self_attributes(ctx.klass).get(attr.attr, ())
    here = sorted(
        ((line, value) for method, value, line in assigned if method is ctx.function and line < attr.lineno),
        key=lambda lv: lv[0],
    )  # (ast.walk is breadth-first: not in line order)
    if here:
        values = [here[-1][1]]
    else:
        made = ctx.__dict__.setdefault("_construction", {})  # once per class, not per attribute read
        if id(ctx.klass) not in made:
            made[id(ctx.klass)] = _construction(ctx.klass)
        first = made[id(ctx.klass)]
        values = [value for method, value, _ in assigned if method is not ctx.function and method.name in first]
    return any(isinstance(v, ast.Call) and ctx.qualified(v.func) in _DATA_PARALLEL for v in values)


def _construction(klass) -> set[str]:
    """``__init__`` and the methods it calls on ``self``: what has run before any other method."""
    init = next((m for m in klass.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
    if init is None:
        return set()
    return {"__init__"} | {
        n.func.attr
        for n in ast.walk(init)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and getattr(n.func.value, "id", None) == "self"
    }


def _scheduler_step(call, ctx) -> bool:
    if not _method(call, "step") or len(call.args) > 1:  # a diffusion scheduler's step(out, t, x) is not this
        return False
    receiver = call.func.value
    held = ctx.held(receiver)
    if held is not None:
        return held.kind == "scheduler"
    name = (getattr(receiver, "id", getattr(receiver, "attr", "")) or "").lower()
    return "sched" in name and not call.args


def _uses_optimizer(call, ctx) -> bool:
    """An optimizer step, or a call handed the optimizer (``train_step(model, opt)``)."""
    if _optimizer_step(call, ctx):
        return True
    return isinstance(call, ast.Call) and any(
        ctx.kind(a) == "optimizer" or _looks_like_optimizer(a)
        for a in call.args
        if isinstance(a, (ast.Name, ast.Attribute))
    )


def _scheduler_before_optimizer(node, ctx) -> bool:
    """In one loop body, the LR scheduler steps before the optimizer does: the first learning rate
    of the schedule is skipped (PyTorch warns from 1.1); step the scheduler after optimizer.step()."""
    if not isinstance(node, (ast.For, ast.While)):
        return False
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call) and _scheduler_step(n, ctx)]
    if not calls:
        return False
    first_call = min(calls, key=lambda n: (n.lineno, n.col_offset))
    first = (first_call.lineno, first_call.col_offset)
    own = _schedulers_optimizer(first_call, ctx)
    if own is None and any(
        isinstance(n, ast.Call) and (n.lineno, n.col_offset) < first and _optimizer_step(n, ctx)
        for stmt in node.body
        for n in ast.walk(stmt)
    ):
        return False  # an optimizer stepped just before it: which one this scheduler drives is unknown
    # the loop's own body only: a scheduler in a nested loop is that loop's business
    direct = [n for stmt in node.body for n in _walk_no_loops(stmt)]
    if not any(isinstance(n, ast.Call) and (n.lineno, n.col_offset) == first for n in direct):
        return False
    later = [
        n
        for stmt in node.body
        for n in ast.walk(stmt)
        if isinstance(n, ast.Call)
        and (n.lineno, n.col_offset) > first
        and _uses_optimizer(n, ctx)
        and (own is None or any(isinstance(x, ast.Name) and x.id == own for x in ast.walk(n)))
    ]
    return bool(later)


def _schedulers_optimizer(step, ctx) -> str | None:
    """The name of the optimizer a scheduler was built on (``StepLR(opt, ...)`` -> ``opt``), or None:
    another optimizer's step later in the loop is that optimizer's business."""
    receiver = step.func.value
    ctor = ctx.value_of(receiver, step.lineno) if isinstance(receiver, ast.Name) else None
    if isinstance(ctor, ast.Call) and ctor.args and isinstance(ctor.args[0], ast.Name):
        return ctor.args[0].id
    return None


_EPOCH_SCHEDULERS = ("StepLR", "MultiStepLR", "ExponentialLR")  # their sizes count epochs by design
_LENGTH_SCHEDULERS = {
    "CosineAnnealingLR": ("T_max", 1),
    "CosineAnnealingWarmRestarts": ("T_0", 1),
    "PolynomialLR": ("total_iters", 1),
}


def _counts_epochs(ctor, ctx) -> bool:
    """The scheduler's schedule is written in epochs: StepLR/MultiStepLR/ExponentialLR, or a cosine or
    polynomial one whose length is the number of epochs (``T_max=args.epochs``)."""
    name = (ctx.qualified(ctor.func) or "").rsplit(".", 1)[-1]
    if not (ctx.qualified(ctor.func) or "").startswith("torch.optim.lr_scheduler."):
        return False
    if name in _EPOCH_SCHEDULERS:
        return True
    if name in _LENGTH_SCHEDULERS:
        kw, at = _LENGTH_SCHEDULERS[name]
        length = _arg(ctor, at, kw)
        return length is not None and "epoch" in ast.unparse(length).lower() and "len(" not in ast.unparse(length)
    return False


def _over_batches(loop, ctx) -> bool:
    """A loop over a DataLoader's batches (``for x, y in loader``, ``enumerate(loader)``)."""
    if not isinstance(loop, ast.For):
        return False
    it = loop.iter
    if isinstance(it, ast.Call) and getattr(it.func, "id", None) in ("enumerate", "tqdm") and it.args:
        it = it.args[0]
    kind = ctx.kind(it)  # a DataLoader, or an unbound name that says it is one (train_loader, as bindings.py reads it)
    return kind == "loader" or (
        kind is None and bool(LOADER_NAME.search(getattr(it, "id", getattr(it, "attr", "")) or ""))
    )


def _epoch_scheduler_per_batch(node, ctx) -> bool:
    """``scheduler.step()`` in the loop over batches where the schedule counts epochs: it runs
    len(loader) times faster than written (CosineAnnealingLR(T_max=epochs) done in one epoch)."""
    if not (_method(node, "step") and not node.args and isinstance(node.func.value, ast.Name)):
        return False
    ctor = ctx.value_of(node.func.value, node.lineno)
    # a parameter: the scheduler every call site in the module passes (all of them epoch schedules)
    ctors = (
        [ctor] if ctor is not None else ctx.bindings.passed_values(node.func.value.id, ctx.chain(), node.lineno) or []
    )
    if not ctors or not all(isinstance(c, ast.Call) and _counts_epochs(c, ctx) for c in ctors):
        return False
    loop = next(_enclosing_loops(node, ctx), None)
    return loop is not None and _over_batches(loop, ctx)


def _scheduler_misplaced(node, ctx) -> bool:
    """Reported at the scheduler.step() to move: the one stepped per batch, or the first one of a loop
    body that steps it before the optimizer."""
    if not (isinstance(node, ast.Call) and _scheduler_step(node, ctx)):
        return False
    if _epoch_scheduler_per_batch(node, ctx):
        return True
    for loop in _enclosing_loops(node, ctx):
        if _scheduler_before_optimizer(loop, ctx):
            steps = [n for n in ast.walk(loop) if isinstance(n, ast.Call) and _scheduler_step(n, ctx)]
            return min(steps, key=lambda n: (n.lineno, n.col_offset)) is node
    return False


def _walk_no_loops(node):
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(n))


def _divided(expr) -> bool:
    """``x / k``, ``x * w``, ``x.div(k)`` at the top of the expression (a mean inside is not a scaling)."""
    return (isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Div, ast.Mult))) or _method(expr, "div", "mul")


def _scaled(expr, loop, ctx) -> bool:
    """The loss is divided (``loss / k``, ``loss /= k``, ``loss = loss / k``) before its backward."""
    if _divided(expr):
        return True
    if isinstance(expr, ast.Name):
        value = ctx.value_of(expr, getattr(expr, "lineno", 1 << 30))
        if value is not None and _divided(value):
            return True
        return any(
            isinstance(n, ast.AugAssign)
            and getattr(n.target, "id", None) == expr.id
            and isinstance(n.op, (ast.Div, ast.Mult))
            for n in ast.walk(loop)
        )
    if isinstance(expr, ast.Call) and _called_name(expr) == "scale" and expr.args:  # scaler.scale(loss)
        return _scaled(expr.args[0], loop, ctx)
    return False


def _accumulation_unscaled(node, ctx) -> bool:
    """Gradient accumulation: backward() on each micro-batch's mean loss, and one optimizer step after
    several (after the loop, or under ``if i % k == 0``), with the loss never divided by their number:
    the step sees k times the gradient of the big batch."""
    if not isinstance(node, (ast.For, ast.While)) or any(
        isinstance(n, (ast.For, ast.While)) for n in ast.walk(node) if n is not node
    ):
        return False
    backwards = [n for n in ast.walk(node) if _method(n, "backward") and not n.args]
    if not backwards:
        return False
    steps_in = [n for n in ast.walk(node) if isinstance(n, ast.Call) and _optimizer_step(n, ctx)]
    if steps_in:
        gated = any(
            isinstance(n, ast.If)
            and any(isinstance(m, ast.BinOp) and isinstance(m.op, ast.Mod) for m in ast.walk(n.test))
            and any(s in list(ast.walk(n)) for s in steps_in)
            for n in ast.walk(node)
        )
        if not gated:
            return False
    else:
        after = [
            n
            for n in ast.walk(ctx.function)
            if isinstance(n, ast.Call)
            and _optimizer_step(n, ctx)
            and n.lineno > getattr(node, "end_lineno", node.lineno)
        ]
        before = [n for n in ast.walk(ctx.function) if _method(n, "zero_grad") and n.lineno < node.lineno]
        if not (after and before):
            return False
    if any(
        (_method(n, "div_", "mul_") and getattr(_root_attr(n.func.value), "attr", None) == "grad")
        or (isinstance(n, ast.AugAssign) and getattr(_root_attr(n.target), "attr", None) == "grad")
        for n in ast.walk(ctx.function)
    ):
        return False  # the gradients are divided instead (p.grad /= k)
    return not any(_scaled(b.func.value, node, ctx) for b in backwards)


def _backward_unscaled(node, ctx) -> bool:
    """Reported at the micro-batch's backward(): the loss there is the one to divide."""
    if not (_method(node, "backward") and not node.args):
        return False
    loop = next(_enclosing_loops(node, ctx), None)
    return loop is not None and _first_backward(loop, node) and _accumulation_unscaled(loop, ctx)


def _root_attr(node):
    """``p.grad.data`` -> the ``.grad`` attribute node (what a ``.data`` hangs off)."""
    while isinstance(node, ast.Attribute) and node.attr == "data":
        node = node.value
    return node


_INPLACE_METHODS = (
    "add_",
    "sub_",
    "mul_",
    "div_",
    "clamp_",
    "clip_",
    "fill_",
    "zero_",
    "copy_",
    "normal_",
    "uniform_",
    "masked_fill_",
    "pow_",
    "sqrt_",
    "exp_",
    "log_",
    "abs_",
    "neg_",
    "round_",
)


def _shares_numpy_memory(name: ast.Name, ctx, line: int) -> bool:
    value = ctx.value_of(name, line)
    if not (_is_call_to(value, ctx, "torch.from_numpy") and value.args):
        return False
    array = value.args[0]
    if _fresh_array(array, ctx):
        return False
    return not _local_array_done_with(array, value, ctx)


def _local_array_done_with(array, call, ctx) -> bool:
    """``torch.from_numpy(buf)`` where ``buf`` is an array this function made itself (``np.full(...)``,
    then filled) and never reads again after handing it over: the tensor is the array's only user, so
    writing through it changes nothing anyone else sees. A module-level name is a global: anyone
    (a notebook, an importer) may read it later."""
    if not isinstance(array, ast.Name) or not isinstance(ctx.function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    made = ctx.value_of(array, call.lineno)
    if made is None or not _fresh_array(made, ctx):
        return False
    return not any(
        isinstance(n, ast.Name)
        and n.id == array.id
        and isinstance(n.ctx, ast.Load)
        and (n.lineno, n.col_offset) > (call.end_lineno or call.lineno, call.end_col_offset or 0)
        for n in ast.walk(ctx.function)
    )


# what a NumPy random generator (np.random.default_rng(seed), RandomState(seed)) is made by: its
# sampling methods (rng.integers, rng.normal, ...) return a new array each call
_NUMPY_GENERATORS = ("numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator")


_NUMPY_PASS_THROUGH = ("numpy.asarray", "numpy.ascontiguousarray", "numpy.asanyarray", "numpy.require")


def _fresh_array(expr, ctx) -> bool:
    """An array made for this call that no one else holds: ``a.astype(t)`` (a copy unless copy=False),
    ``a.copy()``, ``np.array(a)`` (copy=True by default), and np.ascontiguousarray/np.asarray of one of
    those (they pass an array through, so only a fresh one stays fresh). A name, a view or a slice
    is the caller's array: writing through the tensor changes it. Arithmetic and comparisons make a
    new array (``rng.rand(n) < p``), and so does a function called by plain name (``load_image(p)``,
    ``ensure_rng(r).rand(n)``'s helper) as far as this file can tell: no one else holds its result."""
    if isinstance(expr, (ast.Compare, ast.BinOp, ast.UnaryOp)):
        return True
    if not isinstance(expr, ast.Call):
        return False
    if isinstance(expr.func, ast.Name) and ctx.qualified(expr.func) is None and expr.func.id not in _BUILTINS:
        return True
    if _method(expr, "copy") and not expr.args:
        return True
    if _method(expr, "astype"):
        copy = _arg(expr, 3, "copy")
        return copy is None or not _const(copy, False)
    q = ctx.qualified(expr.func) or ""
    if isinstance(expr.func, ast.Attribute) and isinstance(expr.func.value, ast.Name) and not q:
        maker = ctx.value_of(expr.func.value, expr.lineno)  # rng.integers(...) on rng = np.random.default_rng()
        return isinstance(maker, ast.Call) and ctx.qualified(maker.func) in _NUMPY_GENERATORS
    if q in _NUMPY_PASS_THROUGH:
        return bool(expr.args) and _fresh_array(expr.args[0], ctx)
    if q in ("numpy.array", "numpy.copy"):
        copy = _kw(expr, "copy")
        return copy is None or not _const(copy, False)
    return q in _NUMPY_MAKERS or q.startswith("numpy.random.")


# NumPy functions that always return a new array (not np.reshape, np.transpose, np.flip...: views)
_NUMPY_MAKERS = frozenset(
    f"numpy.{f}"
    for f in """arange zeros ones empty full linspace logspace eye identity
concatenate stack vstack hstack zeros_like ones_like empty_like full_like""".split()
)


def _inplace_on_from_numpy(node, ctx) -> bool:
    """An in-place write to a tensor made by torch.from_numpy: the NumPy array changes with it. The
    write may be in a function of this module the tensor is handed to (``normalize_(x, mean, std)``,
    which does ``x.sub_(mean)``): reported at the call."""
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return _shares_numpy_memory(node.target, ctx, node.lineno)
    if isinstance(node, ast.Call) and _method(node, *_INPLACE_METHODS) and isinstance(node.func.value, ast.Name):
        return _shares_numpy_memory(node.func.value, ctx, node.lineno)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        helper = ctx.bindings.module_function(node.func.id)
        return helper is not None and any(
            isinstance(value, ast.Name)
            and _shares_numpy_memory(value, ctx, node.lineno)
            and _writes_in_place(helper, param)
            for param, value in arguments(node, helper).items()
        )
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Subscript)
        and isinstance(node.targets[0].value, ast.Name)
    ):
        return _shares_numpy_memory(node.targets[0].value, ctx, node.lineno)
    return False


def _writes_in_place(fn, param: str) -> bool:
    """``fn`` writes into the tensor its parameter ``param`` holds: an in-place method on it or on what
    iterating it yields (its rows are views: ``for t, m in zip(x, mean): t.sub_(m)``), an item
    assignment, an augmented assignment. A parameter the function rebinds first (``x = x.clone()``)
    is not the caller's tensor any more: not counted."""
    if any(
        isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == param for t in n.targets)
        for n in ast.walk(fn)
    ):
        return False
    views = {param}
    for loop in ast.walk(fn):  # for t in x / for t, m, s in zip(x, mean, std)
        if isinstance(loop, ast.For):
            it, target = loop.iter, loop.target
            if isinstance(it, ast.Name) and it.id == param and isinstance(target, ast.Name):
                views.add(target.id)
            elif isinstance(it, ast.Call) and getattr(it.func, "id", None) == "zip" and isinstance(target, ast.Tuple):
                views.update(
                    t.id
                    for a, t in zip(it.args, target.elts)
                    if isinstance(a, ast.Name) and a.id == param and isinstance(t, ast.Name)
                )
    for n in ast.walk(fn):
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id == param:
            return True
        if isinstance(n, ast.Call) and _method(n, *_INPLACE_METHODS) and getattr(n.func.value, "id", None) in views:
            return True
        if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Subscript) and getattr(t.value, "id", None) == param for t in n.targets
        ):
            return True
    return False


_NUMPY_RANDOM = ("normal", "uniform", "randn", "rand", "standard_normal", "random")
_NUMPY_FLOAT64 = ("numpy.zeros", "numpy.ones", "numpy.empty", "numpy.eye", "numpy.linspace")


def _float64_numpy(expr, ctx) -> bool:
    """An ndarray that is float64: NumPy's makers without a dtype (np.random.normal, rng.normal,
    np.zeros, ...), not cast with .astype(np.float32)."""
    value = ctx.resolve(expr, getattr(expr, "lineno", 1 << 30))
    if not isinstance(value, ast.Call) or _kw(value, "dtype") is not None:
        return False
    func = value.func
    q = ctx.qualified(func) or ""
    if (q.startswith("numpy.random.") and q.split(".")[-1] in _NUMPY_RANDOM) or q in _NUMPY_FLOAT64:
        return True
    if isinstance(func, ast.Attribute) and func.attr in _NUMPY_RANDOM and isinstance(func.value, ast.Name):
        gen = ctx.value_of(func.value, value.lineno)  # rng = np.random.default_rng(0); rng.normal(...)
        return isinstance(gen, ast.Call) and ctx.qualified(gen.func) in (
            "numpy.random.default_rng",
            "numpy.random.RandomState",
            "numpy.random.Generator",
        )
    return False


def _float64_weights(node, ctx) -> bool:
    """``layer.weight.data = torch.from_numpy(float64 array)`` (or wrapped in nn.Parameter): a float64
    parameter in a float32 model; the next forward fails on the dtype mismatch."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute)):
        return False
    target = node.targets[0]
    attr = target.value.attr if target.attr == "data" and isinstance(target.value, ast.Attribute) else target.attr
    if attr not in ("weight", "bias"):
        return False
    value = node.value
    if _is_call_to(value, ctx, "torch.nn.Parameter", "torch.nn.parameter.Parameter") and value.args:
        value = value.args[0]
    while _method(value, "to", "cuda", "cpu", "requires_grad_", "clone", "contiguous"):
        if _method(value, "to") and any("float" in ast.unparse(a) or "half" in ast.unparse(a) for a in value.args):
            return False  # .to(torch.float32): converted
        value = value.func.value
    return (
        _is_call_to(value, ctx, "torch.from_numpy")
        and bool(value.args)
        and _float64_array(value.args[0], ctx, node.lineno)
    )


# NumPy functions whose result is float64 when an argument is (linear algebra keeps its input's dtype)
_NUMPY_KEEPS_DTYPE = frozenset(
    f"numpy.{f}"
    for f in """matmul dot outer inner tensordot einsum kron
linalg.svd linalg.qr linalg.eigh linalg.eig linalg.inv linalg.pinv linalg.solve linalg.cholesky linalg.lstsq
linalg.matrix_power""".split()
)
_FLOAT64_DTYPES = ("numpy.float64", "numpy.double", "numpy.float_", "float")
_ARRAY_SAME_DTYPE_METHODS = ("copy", "reshape", "transpose", "squeeze", "ravel", "flatten", "clip", "round")


def _float64_array(expr, ctx, line, depth=0) -> bool:
    """A NumPy array that is float64, followed through the code that made it: a maker without a dtype,
    ``.astype(np.float64)``, then slicing, arithmetic (float64 wins NumPy's promotion) and linear
    algebra of such an array (``U, S, Vt = np.linalg.svd(w)``; ``(U[:, :r] * S[:r]) @ Vt[:r]``)."""
    if depth > 8:
        return False
    if isinstance(expr, ast.Name):
        if ctx.function is None:
            return False
        binding, _ = ctx.bindings.lookup(expr.id, ctx.chain(), line)
        if binding is None or binding.how not in ("assign", "item") or binding.value is None:
            return False
        return _float64_array(binding.value, ctx, binding.line, depth + 1)
    if isinstance(expr, ast.Subscript) or (isinstance(expr, ast.Attribute) and expr.attr == "T"):
        return _float64_array(expr.value, ctx, line, depth + 1)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult, ast.Pow)):
        return _float64_array(expr.left, ctx, line, depth + 1) or _float64_array(expr.right, ctx, line, depth + 1)
    if not isinstance(expr, ast.Call):
        return False
    if _method(expr, "astype"):
        dtype = expr.args[0] if expr.args else _kw(expr, "dtype")
        return dtype is not None and (
            ctx.qualified(dtype) in _FLOAT64_DTYPES
            or getattr(dtype, "id", None) == "float"
            or (isinstance(dtype, ast.Constant) and dtype.value in ("float64", "double", "f8"))
        )
    if _method(expr, *_ARRAY_SAME_DTYPE_METHODS):
        return _float64_array(expr.func.value, ctx, line, depth + 1)
    if ctx.qualified(expr.func) in _NUMPY_KEEPS_DTYPE and _kw(expr, "dtype") is None:
        return any(_float64_array(a, ctx, line, depth + 1) for a in expr.args)
    return _float64_numpy(expr, ctx)


SOURCE_POST_RULES: tuple[Rule, ...] = (
    Rule(
        "PTF001",
        ("deprecated-init-without-underscore",),
        "nn.init's names without the trailing underscore are deprecated aliases that warn on every call; "
        "call the in-place name (xavier_uniform_, kaiming_normal_, ...)",
        lambda n, c: _is_call_to(n, c, *TORCH_INIT_OLD),
        nodes=CALL,
    ),
    Rule(
        "PTF002",
        ("variable-tensor-merge",),
        "Variable is a deprecated spelling since 0.4: Variable(t) returns a plain Tensor, so isinstance(x, "
        "Variable) is true of every tensor and volatile= is ignored (the graph is recorded); drop Variable: "
        "create the tensor with requires_grad=True, call t.requires_grad_(), or use torch.no_grad()",
        _variable_relied_on,
        nodes=CALL,
    ),
    Rule(
        "PTF003",
        ("cuda-async-keyword",),
        "async is a reserved word since Python 3.7: .cuda(async=True) is a SyntaxError; write non_blocking=True",
        lambda n, c: False,
        nodes=(),
    ),  # found in the tokens of a file that does not parse (engine.keyword_async_positions)
    Rule(
        "PTF004",
        ("backward-hook-non-full",),
        "register_backward_hook reports the gradients of the module's last operation, not of its inputs, "
        "and is deprecated; use register_full_backward_hook",
        lambda n, c: (
            _method(n, "register_backward_hook")
            or _is_call_to(n, c, "torch.nn.modules.module.register_module_backward_hook")
        ),
        nodes=CALL,
    ),
    Rule(
        "PTF005",
        ("cross-entropy-after-softmax",),
        "cross_entropy applies log-softmax itself: feeding it softmax outputs squashes the loss and its "
        "gradients; pass the raw logits",
        _softmax_into_cross_entropy,
        nodes=CALL,
    ),
    Rule(
        "PTF006",
        ("kldiv-expects-log-input",),
        "kl_div/KLDivLoss expect log-probabilities as input; pass log_softmax (or .log()) of the prediction",
        _kl_div_on_probabilities,
        nodes=CALL,
    ),
    Rule(
        "PTF007",
        ("functional-dropout-training-flag",),
        "F.dropout in a module's forward (or a method it calls) without training=self.training keeps dropping "
        "in eval mode; pass "
        "training=self.training or use nn.Dropout",
        _dropout_without_training,
        nodes=CALL,
    ),
    Rule(
        "PTF008",
        ("legacy-constructor-bool-ndarray",),
        "legacy constructors read one int as a size (torch.FloatTensor(3) is 3 uninitialised floats, not [3.]) "
        "and mishandled bool arrays before 1.2; use torch.tensor(data, dtype=..., device=...) or torch.zeros(size)",
        _legacy_constructor_misread,
        nodes=CALL,
    ),
    Rule(
        "PTF009",
        ("align-corners-mismatch",),
        "interpolate with a linear mode and no align_corners uses align_corners=False, where the same function "
        "(or the same resize elsewhere in the file) uses align_corners=True: resize the same way in training and "
        "inference (pass it explicitly)",
        _interpolate_without_align_corners,
        nodes=CALL,
    ),
    Rule(
        "PTF010",
        ("load-state-dict-strict-false",),
        "load_state_dict(strict=False) skips every key that does not match, silently (with a 'module.' prefix, "
        "all of them), and this result is never looked at; check its missing_keys/unexpected_keys",
        _strict_false_unchecked,
        nodes=CALL,
    ),
    Rule(
        "PTF011",
        ("missing-zero-grad",),
        "a training loop calls backward() and optimizer.step() but never zero_grad(): gradients add up across steps; "
        "call optimizer.zero_grad() each step",
        _backward_without_zero_grad,
        nodes=CALL,
    ),
    Rule(
        "PTF012",
        ("backward-twice",),
        "a second backward() through a graph the first one freed raises; pass retain_graph=True to the "
        "first, or sum the losses and call backward once",
        _backward_twice,
        nodes=CALL,
    ),
    Rule(
        "PTF013",
        ("tensor-to-is-not-inplace",),
        "Tensor.to()/.cuda() return a new tensor and leave the original where it was; assign the result",
        _tensor_to_discarded,
        nodes=ast.Expr,
    ),
    Rule(
        "PTF014",
        ("gradcheck-float32",),
        "gradcheck in float32 can reject correct gradients (float32 finite differences are too coarse for its "
        "tolerances); use "
        "dtype=torch.float64 inputs and module",
        _gradcheck_single_precision,
        nodes=CALL,
    ),
    Rule(
        "PTF015",
        ("unregistered-tensor-attribute",),
        "a tensor assigned as a plain attribute in an nn.Module's __init__ is not in state_dict() and is not "
        "moved or converted by .to()/.cuda()/.double(); register it with self.register_buffer(name, tensor) "
        "(or wrap it in nn.Parameter if it is learned)",
        _unregistered_tensor_attribute,
        nodes=ast.Assign,
    ),
    Rule(
        "PTF016",
        ("eval-without-no-grad",),
        "this validation function runs the model with autograd recording (model.eval() does not stop it): "
        "every activation is kept for a backward that never comes; wrap the loop in torch.no_grad() "
        "(or torch.inference_mode())",
        _eval_without_no_grad,
        nodes=CALL,
        harm="memory",  # the same results, every activation held: nothing a small test checks
    ),
    Rule(
        "PTF017",
        ("tensor-copy-construct",),
        "torch.tensor(t) on a tensor copies it and cuts it from the graph, with a UserWarning; write "
        "t.clone().detach() (or t.detach() where no copy is needed)",
        _tensor_copy_construct,
        nodes=CALL,
    ),
    Rule(
        "PTF018",
        ("dataloader-iterator-next",),
        "a DataLoader iterator has no .next() method in Python 3 (AttributeError); call next(it)",
        _iterator_next_method,
        nodes=CALL,
    ),
    Rule(
        "PTF019",
        ("negative-step-slicing",),
        "tensors do not support a negative slice step (ValueError); use t.flip(dim)",
        _negative_step,
        nodes=ast.Subscript,
    ),
    Rule(
        "PTF020",
        ("cpu-tensor-moved-to-cuda",),
        "the tensor is made on the CPU and then copied to the device; create it there with device=...",
        _cpu_factory_moved,
        nodes=CALL,
        harm="speed",
    ),
    Rule(
        "PTF021",
        ("shared-module-reuse",),
        "one module object placed n times ([module] * n, or one name listed twice in a Sequential) shares "
        "its weights across every entry; build a new module per entry ([nn.Linear(...) for _ in range(n)])",
        _module_list_multiplied,
        nodes=(ast.BinOp, ast.Call, ast.ListComp, ast.GeneratorExp),
    ),
    Rule(
        "PTF022",
        ("param-reassignment-detaches-optimizer",),
        "assigning a new nn.Parameter after the optimizer was built leaves the optimizer holding the old "
        "tensor: the new one is never updated; copy into the existing parameter under torch.no_grad(), or "
        "build the optimizer afterwards",
        _parameter_replaced_after_optimizer,
        nodes=ast.Assign,
    ),
    Rule(
        "PTF023",
        ("inplace-op-cannot-promote",),
        "an in-place op cannot change an integer tensor into a float one (RuntimeError: result type Float "
        "can't be cast); convert first (t = t.float()) or write it out of place",
        _inplace_float_into_int,
        nodes=ast.AugAssign,
    ),
    Rule(
        "PTF024",
        ("cross-entropy-target-dtype",),
        "the cross-entropy target is a float tensor (a legacy constructor, or class labels cast to float): "
        "class indices must be int64 (a float target is read as class probabilities from 1.10, an error "
        "before); use torch.tensor(labels) or .long()",
        _float_class_target,
        nodes=CALL,
    ),
    Rule(
        "PTF025",
        ("dataparallel-attribute",),
        "DataParallel/DistributedDataParallel wrap the model: its own methods and attributes are under "
        ".module (AttributeError on the wrapper); call model.module.<name>",
        _dataparallel_attribute,
        nodes=ast.Attribute,
    ),
    Rule(
        "PTF026",
        ("scheduler-step-placement",),
        "the LR scheduler is stepped in the wrong place: before the optimizer in this loop (the schedule's "
        "first value is skipped; PyTorch warns since 1.1), or once per batch where its schedule counts epochs "
        "(StepLR, CosineAnnealingLR(T_max=epochs): it runs len(loader) times too fast); step it after "
        "optimizer.step(), once per epoch for an epoch schedule",
        _scheduler_misplaced,
        nodes=CALL,
    ),
    Rule(
        "PTF027",
        ("grad-accumulation-unscaled",),
        "gradients are accumulated over several backward() calls per optimizer step, but each loss is not "
        "divided by their number: the step uses k times the big batch's gradient; divide the loss by k",
        _backward_unscaled,
        nodes=CALL,
    ),
    Rule(
        "PTF028",
        ("from-numpy-shares-memory",),
        "a tensor made by torch.from_numpy shares memory with the NumPy array: this in-place write changes "
        "the array too; copy first (torch.tensor(arr)) or write it out of place (x = x - m)",
        _inplace_on_from_numpy,
        nodes=(ast.AugAssign, ast.Call, ast.Assign),
    ),
    Rule(
        "PTF029",
        ("numpy-float64-weights",),
        "NumPy makes float64 arrays by default: torch.from_numpy keeps float64, so this weight no longer matches "
        "the model's float32 inputs (a dtype error in forward); convert with .float() or "
        "copy_ into the existing parameter",
        _float64_weights,
        nodes=ast.Assign,
    ),
)
