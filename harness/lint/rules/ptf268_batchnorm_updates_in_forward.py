"""What: a forward meant to change nothing (a check, features, a validation metric) under torch.no_grad() on a model
with BatchNorm that the same function leaves in training mode (just built, or after model.train()).
Why: no_grad() only stops autograd; in training mode every BatchNorm forward overwrites running_mean/running_var
(and uses the batch's own statistics), so the "harmless" pass retunes the model.
Fix: call model.eval() before the forward (and model.train() after, to resume training).
"""

from __future__ import annotations

import ast
import re

from torch_pitfalls.lint.bindings import MODULE_SELF_METHODS, arguments, returned_values
from torch_pitfalls.lint.rules.base import CALL, Rule, _const, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import (
    GRAD_OFF_QUALIFIED,
    _decorated_grad_off,
    _own_code,
    _values,
    context_at,
    helper_calls,
)
from torch_pitfalls.lint.rules.shared.modules import _module_method
from torch_pitfalls.lint.rules.shared.training_loop import _optimizer_step
from torch_pitfalls.lint.walking import children, kept_on, walk

_BN = re.compile(r"^torch\.nn\.(modules\.batchnorm\.)?(Lazy)?(Sync)?BatchNorm[123]d$|^torch\.nn\.SyncBatchNorm$")
_SEQUENTIAL = ("torch.nn.Sequential", "torch.nn.modules.container.Sequential", "torch.nn.ModuleList")
# torchvision builders whose networks hold (trainable) BatchNorm
_TV_BN = re.compile(
    r"^torchvision\.models\.(resnet\d+|resnext\w+|wide_resnet\w+|densenet\d+|mobilenet_v[23]\w*|efficientnet\w*|"
    r"regnet\w+|inception_v3|googlenet|shufflenet\w+|mnasnet\w+|vgg\d+_bn)$"
)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# calls that may be handed the model without changing its mode
_HARMLESS = frozenset("print len id type str repr isinstance sum list tuple".split())


def _grad_off(node, ctx) -> bool:
    up = ctx.parent(node)
    while up is not None and up is not ctx.function:
        if isinstance(up, (ast.With, ast.AsyncWith)) and any(
            isinstance(i.context_expr, ast.Call) and ctx.qualified(i.context_expr.func) in GRAD_OFF_QUALIFIED
            for i in up.items
        ):
            return True
        if isinstance(up, _NESTED):
            return False
        up = ctx.parent(up)
    return _decorated_grad_off(ctx.function, ctx)


def _holds_bn(call, ctx, seen=()) -> bool:
    """The module ``call`` builds holds a BatchNorm: one itself, a container given one, a torchvision network
    that has them, or a class of this file that builds one."""
    if not isinstance(call, ast.Call) or len(seen) > 6:
        return False
    q = ctx.qualified(call.func) or ""
    if _BN.match(q) or _TV_BN.match(q):
        return True
    if q in _SEQUENTIAL:
        parts = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
        parts = [e for p in parts for e in (p.elts if isinstance(p, (ast.List, ast.Tuple)) else [p])]
        return any(_holds_bn(p, ctx, seen) for p in parts)
    klass = ctx.bindings.classes().get(getattr(call.func, "id", None))
    if klass is not None and klass not in seen and ctx.bindings.is_module_class(klass):
        return kept_on(klass, "_ptf268_bn", lambda k: [_class_holds_bn(k, ctx, (*seen, k))])[0]
    fn = ctx.bindings.module_function(call.func.id) if isinstance(call.func, ast.Name) else None
    if fn is not None and fn not in seen:  # a block builder of the module: def down(a, b): return nn.Sequential(...)
        return any(_holds_bn(value, ctx, (*seen, fn)) for value, _ in returned_values(fn) or ())
    return False


def _class_holds_bn(klass, ctx, seen) -> bool:
    for n in walk(klass):
        if isinstance(n, ast.Call) and (
            _BN.match(ctx.qualified(n.func) or "")
            or _TV_BN.match(ctx.qualified(n.func) or "")
            or (isinstance(n.func, ast.Name) and _holds_bn(n, ctx, seen))
        ):
            return True
    return False


def _fresh(value, ctx, depth: int = 0):
    """The constructor of a module built in training mode (``Net()``, ``nn.BatchNorm1d(2).to(device)``, a
    function of this module that builds and returns one without switching its mode), else None."""
    if depth > 6 or not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in MODULE_SELF_METHODS:
        if func.attr in ("eval", "train", "apply", "type"):
            return None
        return _fresh(func.value, ctx, depth + 1)
    if isinstance(func, ast.Name) and func.id not in ctx.bindings.classes():
        fn = ctx.bindings.module_function(func.id)
        if fn is None or any(_method(n, "eval", "train", "apply") for n in walk(fn)):
            return None
        returned = returned_values(fn) or []
        if len(returned) != 1:
            return None
        inner = returned[0][0]
        if isinstance(inner, ast.Name):
            inner = ctx.bindings.value_of(inner.id, (fn, ctx.module), returned[0][1])
        return _fresh(inner, ctx, depth + 1)
    q = ctx.qualified(func) or ""
    if isinstance(func, ast.Name) and func.id in ctx.bindings.classes():
        # a class of the file that switches its own mode (``self.eval()`` in __init__) is not built in training mode
        klass = ctx.bindings.classes()[func.id]
        own = any(_method(n, "eval", "train") and getattr(n.func.value, "id", None) == "self" for n in walk(klass))
        return None if own else value
    if q.startswith(("torch.nn.", "torchvision.models.")):
        return value
    return None


def _same(a, b) -> bool:
    return isinstance(a, (ast.Name, ast.Attribute)) and ast.dump(a) == ast.dump(b)


def _base(expr):
    """``model`` of ``model.to(device).cuda()``: the module a chain of its own methods returns."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in MODULE_SELF_METHODS:
        expr = expr.func.value
    return expr


def _keeps_modes(module) -> list[frozenset]:
    """The names of the module's functions that switch no module's mode (no ``.train()``, ``.eval()``,
    ``.apply()`` in them: a checkpoint saver, a logger): handing them a model leaves its mode as it was."""
    return [
        frozenset(
            n.name
            for n in module.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not any(_method(m, "eval", "train", "apply") for m in walk(n))
        )
    ]


def _mode_events(fn, model, keeps_mode=frozenset()):
    """(line, event) in ``fn``'s own code for the model: "train" (``.train()``), "eval" (anything else that may set
    the mode: ``.eval()``, ``.train(flag)``, ``.apply(f)``, handing it to a call other than one of ``keeps_mode``,
    storing it elsewhere)."""
    out = []
    for n in walk(fn):
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Attribute) and _same(_base(n.func.value), model):
                if n.func.attr == "train":
                    mode = n.args[0] if n.args else _kw(n, "mode")
                    out.append((n.lineno, "train" if mode is None or _const(mode, True) else "eval"))
                elif n.func.attr in ("eval", "apply", "requires_grad_", "train_mode", "set_mode"):
                    out.append((n.lineno, "eval"))
            elif getattr(n.func, "id", None) not in (_HARMLESS | keeps_mode) and any(
                _same(a, model) for a in [*n.args, *(k.value for k in n.keywords)]
            ):
                out.append((n.lineno, "eval"))  # handed to a function that may switch its mode
        elif isinstance(n, ast.Assign) and _same(n.value, model):
            out.append((n.lineno, "eval"))  # aliased: the other name may be switched
    return out


def _train_mode_at(call, ctx) -> bool:
    """The model is in training mode at ``call``: the function's own code shows it so (``_mode_at``), or the
    model is a parameter the function never switches and a call of the function in the module hands it a model
    in training mode (a calibration helper called right after the training loop)."""
    return _mode_at(call.func, call, ctx) or _handed_in_training_mode(call, ctx)


def _mode_at(model, at, ctx, handed=None) -> bool:
    """The function's own code shows ``model`` in training mode at node ``at``: built fresh, or ``.train()``, with
    nothing since (in the lines between, or anywhere in a loop around it) that may switch it. ``handed``: the
    call at ``at`` that hands the model on, not itself a switch."""
    fn = ctx.function
    keeps_mode = kept_on(ctx.module, "_ptf268_keeps_modes", _keeps_modes)[0]
    events = kept_on(fn, f"_ptf268_{ast.dump(model)}", lambda f: _mode_events(f, model, keeps_mode))
    events = [(line, e) for line, e in events if handed is None or line != handed.lineno]
    start = None
    if isinstance(model, ast.Name):
        binding, _ = ctx.bindings.lookup(model.id, ctx.chain(), at.lineno)
        if binding is not None and binding.how == "assign" and ctx.bindings.scope(fn).names.get(model.id):
            if _fresh(binding.value, ctx) is not None:
                start = binding.line
    trains = [line for line, e in events if e == "train" and line < at.lineno]
    if trains and (start is None or max(trains) > start):
        start = max(trains)
    if start is None:
        return False
    loops = [up for up in _ancestors(at, ctx) if isinstance(up, _LOOPS)]
    for line, event in events:
        if event == "eval" and (start <= line <= at.lineno or any(lp.lineno <= line <= lp.end_lineno for lp in loops)):
            return False
    return True


def _handed_in_training_mode(call, ctx) -> bool:
    model, fn = call.func, ctx.function
    if not isinstance(model, ast.Name) or ctx.klass is not None or not isinstance(fn, ast.FunctionDef):
        return False
    binding, _ = ctx.bindings.lookup(model.id, ctx.chain(), call.lineno)
    if binding is None or binding.how != "param" or any(e for _, e in _mode_events(fn, model)):
        return False
    for site in helper_calls(fn, ctx) or ():
        caller = context_at(site, ctx)
        given = arguments(site, fn).get(model.id)
        if caller is not None and caller.function is not fn and isinstance(given, ast.Name):
            if _mode_at(given, site, caller, handed=site):
                return True
    return False


def _ancestors(node, ctx):
    up = ctx.parent(node)
    while up is not None and up is not ctx.function:
        yield up
        up = ctx.parent(up)


def _training_step(call, ctx) -> bool:
    """The innermost loop around the call (else the function) runs backward()/an optimizer step itself: what
    the forward computes feeds training (a teacher's targets), where the mode may be chosen on purpose."""
    code = next((up for up in _ancestors(call, ctx) if isinstance(up, _LOOPS)), ctx.function)
    todo = [s for s in code.body if not isinstance(s, (*_NESTED, *_LOOPS))]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Call) and (_method(n, "backward") or _optimizer_step(n, ctx)):
            return True
        todo.extend(c for c in children(n) if not isinstance(c, (*_NESTED, *_LOOPS)))
    return False


def _bn_forward_in_train_mode(node, ctx) -> bool:
    """A model's forward under no_grad/inference_mode, whose output is used, outside a training step and outside
    a module's own methods, on a model holding BatchNorm that the function shows in training mode."""
    if not (isinstance(node, ast.Call) and node.args and ctx.function is not None):
        return False
    func = node.func
    if not isinstance(func, ast.Name):
        return False
    if isinstance(ctx.parent(node), ast.Expr) or not _grad_off(node, ctx):
        return False  # an unused output: a pass that recalibrates BatchNorm on purpose
    if _module_method(ctx) or not _own_code(node, ctx):
        return False
    held = ctx.held(func)
    if held is None or held.kind != "module":
        return False
    if not _train_mode_at(node, ctx) or _training_step(node, ctx):
        return False
    builders = _constructors(func, ctx)
    return bool(builders) and all(_holds_bn(b, ctx) for b in builders)


def _constructors(name, ctx) -> list:
    """The calls that built the module a name holds: its assignment, or what every call site passes."""
    binding, where = ctx.bindings.lookup(name.id, ctx.chain(), name.lineno)
    if binding is None:
        return []
    if binding.how == "assign":
        values = [binding.value]
    elif binding.how == "param":
        values = _values(name.id, where, name.lineno, ctx.bindings) or []
    else:
        return []
    out = []
    for v in values:
        while isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in MODULE_SELF_METHODS:
            v = v.func.value
        found = _fresh(v, ctx)
        if found is None:
            return []
        out.append(found)
    return out


RULE = Rule(
    "PTF268",
    ("batchnorm-updates-in-forward",),
    "this forward under no_grad() runs a model with BatchNorm that is still in training mode: no_grad() stops "
    "autograd only, so every BatchNorm overwrites its running_mean/running_var with this batch's statistics; call "
    "model.eval() before it (and model.train() after)",
    _bn_forward_in_train_mode,
    nodes=CALL,
    needs=("no_grad", "inference_mode"),
)
