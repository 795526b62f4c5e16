"""What: .numpy() (or np.array/np.asarray) on a tensor that requires grad or lives on the GPU.
Why: A model's output in training, a parameter, or anything computed from them outside torch.no_grad()
requires grad: .numpy() raises RuntimeError; a CUDA tensor raises TypeError (NumPy sees host memory only).
Fix: t.detach().cpu().numpy(), or t.numpy(force=True) on torch 1.13+.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _called_name, _const, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _scopes_of
from torch_pitfalls.lint.walking import walk

_GRAD_OFF = (
    "torch.no_grad",
    "torch.inference_mode",
    "torch.autograd.no_grad",
    "torch.autograd.grad_mode.no_grad",
    "torch.autograd.grad_mode.inference_mode",
)
# tensor methods whose result requires grad when their input does, on the input's device
_KEEP = frozenset(
    """float double half clone contiguous view view_as reshape reshape_as squeeze unsqueeze flatten permute
transpose t softmax log_softmax sigmoid tanh relu exp log log1p abs sum mean std var pow sqrt mul add sub div neg
norm cumsum expand expand_as repeat narrow select index_select gather masked_fill clamp clip flip roll squeeze_
unsqueeze_ mul_ add_ sub_ div_ clamp_ round floor ceil sign square reciprocal""".split()
)
_NO_ARGS_KEEP = ("max", "min")  # x.max(): a tensor; x.max(1): (values, indices)
# methods that give a tensor without grad (integers, booleans), on the input's device
_INTEGER = frozenset("argmax argmin argsort long int bool byte short eq ne gt lt ge le isnan isfinite".split())
_INT_DTYPES = frozenset(
    f"torch.{d}" for d in "long int int64 int32 int16 int8 uint8 bool short".split()
)  # .to(dtype): no grad
_TORCH_KEEP = frozenset(
    """sigmoid softmax log_softmax tanh relu exp log abs sum mean cat stack concat squeeze unsqueeze flatten
reshape transpose permute matmul mm bmm clamp clip""".split()
)

_F_LOSSES = frozenset(
    """cross_entropy nll_loss mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy
binary_cross_entropy_with_logits kl_div""".split()
)


def _grad_off_call(node, ctx) -> bool:
    return isinstance(node, ast.Call) and (
        ctx.qualified(node.func) in _GRAD_OFF
        or (
            ctx.qualified(node.func) in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled")
            and not (node.args and _const(node.args[0], True))
        )
    )


def _backward_in(fn, ctx) -> bool:
    """The function runs a backward (its own code): it runs with autograd recording."""
    for n in walk(fn):
        if isinstance(n, ast.Call) and (
            (_method(n, "backward") and not n.args)
            or ctx.qualified(n.func) in ("torch.autograd.grad", "torch.autograd.backward")
        ):
            return True
    return False


def _grad_on(node, ctx, depth=0) -> bool:
    """Autograd is known to record where ``node`` runs: not in a no_grad block or function, and in a
    function that itself runs a backward or that a call of the file runs where autograd records (a
    metrics helper a training step calls), or in the module's own statements, with grad left on."""
    up = ctx.parent(node)
    while up is not None:
        if isinstance(up, (ast.With, ast.AsyncWith)) and any(_grad_off_call(i.context_expr, ctx) for i in up.items):
            return False
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_grad_off_call(d, ctx) or ctx.qualified(d) in _GRAD_OFF for d in up.decorator_list):
                return False
            return _backward_in(up, ctx) or (depth < 3 and _called_recording(up, ctx, depth))
        if isinstance(up, (ast.Lambda, ast.ClassDef)):
            return False
        if isinstance(up, ast.Module):
            return not any(
                isinstance(s, ast.Expr) and _grad_off_call(s.value, ctx) for s in up.body
            )  # torch.set_grad_enabled(False) for the whole script
        up = ctx.parent(up)
    return False


def _called_recording(fn, ctx, depth) -> bool:
    """A call of the file runs ``fn`` where autograd records (read at what the call passes for its first
    parameter: ``metrics.update(logits, y)`` in a training step)."""
    params = [a.arg for a in fn.args.args]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    sites = ctx.bindings.passed(fn, params[0]) if params else None
    return bool(sites) and any(_grad_on(value, ctx, depth + 1) for value, _chain, _at, _klass in sites)


def _frozen_somewhere(ctx) -> bool:
    """The file turns ``requires_grad`` off somewhere (a frozen backbone): which module's outputs still
    require grad is then not told."""
    cached = ctx.bindings.__dict__.get("_ptf220_frozen")
    if cached is None:
        cached = False
        for n in walk(ctx.module):
            if _method(n, "requires_grad_") and (
                (n.args and not _const(n.args[0], True)) or any(k.arg == "requires_grad" for k in n.keywords)
            ):
                cached = True
            elif isinstance(n, (ast.Assign, ast.AugAssign)) and any(
                isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            ):
                cached = True
            if cached:
                break
        ctx.bindings.__dict__["_ptf220_frozen"] = cached
    return cached


def _cuda_value(node, ctx, chain) -> bool | None:
    """A device argument: True for "cuda..." or torch.device("cuda..."), False for "cpu", else None."""
    if isinstance(node, ast.Name):
        node = ctx.bindings.value_of(node.id, chain, node.lineno) or node
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.startswith("cuda") if node.value.startswith(("cuda", "cpu")) else None
    if isinstance(node, ast.Call) and ctx.qualified(node.func) == "torch.device" and node.args:
        return _cuda_value(node.args[0], ctx, chain)
    return None


class _State:
    """What is known of a tensor expression: it requires grad, it lives on a CUDA device."""

    __slots__ = ("grad", "cuda")

    def __init__(self, grad=False, cuda=False):
        self.grad, self.cuda = grad, cuda


_NOTHING = _State()


def _state(node, ctx, depth=0) -> _State:  # noqa: C901 - one branch per kind of expression
    if node is None or depth > 16:
        return _NOTHING
    d = depth + 1
    chain = _scopes_of(node, ctx)
    if isinstance(node, ast.Name):
        return _name_state(node, ctx, chain, d)
    if isinstance(node, ast.Attribute):
        if node.attr in ("data", "grad"):
            return _State(False, _state(node.value, ctx, d).cuda)
        if node.attr in ("T", "mT", "real", "imag"):
            return _state(node.value, ctx, d)
        if node.attr in ("weight", "bias"):  # a torch.nn layer's parameter: a leaf that requires grad
            held = ctx.bindings.held(node.value, chain, node.lineno, _klass_of(node, ctx))
            if held is not None and held.kind == "module" and (held.what or "").startswith("torch.nn."):
                return _State(not _frozen_somewhere(ctx), False)
        held = ctx.bindings.held(node, chain, node.lineno, _klass_of(node, ctx))
        if held is not None and held.kind == "tensor" and held.what == "parameter":
            return _State(not _frozen_somewhere(ctx), False)
        return _NOTHING
    if isinstance(node, ast.Subscript):
        return _state(node.value, ctx, d)
    if isinstance(node, ast.BinOp):
        left, right = _state(node.left, ctx, d), _state(node.right, ctx, d)
        return _State((left.grad or right.grad) and _grad_on(node, ctx), left.cuda or right.cuda)
    if isinstance(node, ast.UnaryOp):
        inner = _state(node.operand, ctx, d)
        return _State(inner.grad and _grad_on(node, ctx), inner.cuda)
    if isinstance(node, ast.Call):
        return _call_state(node, ctx, chain, d)
    return _NOTHING


def _klass_of(node, ctx):
    up = ctx.parent(node)
    while up is not None and not isinstance(up, ast.ClassDef):
        up = ctx.parent(up)
    return up


def _name_state(node, ctx, chain, d) -> _State:
    iterated = _comprehension_iter(node, ctx)
    if iterated is not None:  # [p.numpy() for p in model.parameters()]
        return _parameters_state(iterated, ctx, chain, node.lineno)
    binding, where = ctx.bindings.lookup(node.id, chain, node.lineno)
    if binding is None:
        return _NOTHING
    if binding.how == "assign":
        return _state(binding.value, ctx, d)
    if binding.how == "item" and isinstance(binding.value, ast.Call):
        fn = ctx.bindings._local_function(binding.value, where, binding.line)
        if fn is not None and binding.index is not None:
            return _returned(fn, binding.index, ctx, d)
        whole = _state(binding.value, ctx, d)
        return whole if _module_called(binding.value, ctx) else _NOTHING  # out, hidden = lstm(x)
    if binding.how == "iter":  # for p in model.parameters()
        return _parameters_state(binding.value, ctx, where, binding.line)
    if binding.how == "param" and d < 8:  # metrics.update(logits, y): what the file's calls pass, where they run
        sites = ctx.bindings.passed(where[0], node.id) or []
        states = [(_state(value, ctx, d), value) for value, _chain, _at, _klass in sites]
        return _State(
            any(s.grad and not _grad_off_at(value, ctx) for s, value in states), any(s.cuda for s, _ in states)
        )
    return _NOTHING


def _comprehension_iter(node, ctx):
    """What a comprehension's loop variable iterates over, where ``node`` is one."""
    up = ctx.parent(node)
    while up is not None and not isinstance(up, (ast.stmt, ast.Lambda)):
        if isinstance(up, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for gen in up.generators:
                if isinstance(gen.target, ast.Name) and gen.target.id == node.id:
                    return gen.iter
        up = ctx.parent(up)
    return None


def _parameters_state(it, ctx, chain, line) -> _State:
    """An element of ``model.parameters()``: a leaf that requires grad (unless the file freezes some)."""
    if _method(it, "parameters") and not it.args:
        held = ctx.bindings.held(it.func.value, chain, line, _klass_of(it, ctx))
        if held is not None and held.kind == "module":
            return _State(not _frozen_somewhere(ctx), False)
    return _NOTHING


def _returned(fn, index, ctx, d) -> _State:
    """What every ``return`` of a function of this module gives (element ``index`` of a tuple)."""
    states = []
    for n in walk(fn):
        if isinstance(n, ast.Return) and n.value is not None:
            value = n.value
            if index is not None:
                if not (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) > index):
                    return _NOTHING
                value = value.elts[index]
            states.append(_state(value, ctx, d))
    if not states:
        return _NOTHING
    return _State(all(s.grad for s in states), all(s.cuda for s in states))


def _module_called(call, ctx) -> bool:
    held = ctx.bindings.held(call.func, _scopes_of(call, ctx), call.lineno, _klass_of(call, ctx))
    return held is not None and held.kind == "module"


def _loss_called(call, ctx) -> bool:
    held = ctx.bindings.held(call.func, _scopes_of(call, ctx), call.lineno, _klass_of(call, ctx))
    return held is not None and held.kind == "loss"


def _module_on_cuda(func, ctx, chain, line) -> bool:
    """The module was moved with ``.cuda()`` or ``.to("cuda")`` where it was built, or by a statement
    of the same scope before ``line``."""
    if not isinstance(func, ast.Name):
        return False
    value = ctx.bindings.value_of(func.id, chain, line)
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if _moves_to_cuda(value, ctx, chain):
            return True
        value = value.func.value
    scope = chain[0]
    for n in walk(scope):
        if (
            isinstance(n, ast.Expr)
            and isinstance(n.value, ast.Call)
            and isinstance(n.value.func, ast.Attribute)
            and isinstance(n.value.func.value, ast.Name)
            and n.value.func.value.id == func.id
            and n.lineno < line
            and _moves_to_cuda(n.value, ctx, chain)
        ):
            return True
    return False


def _moves_to_cuda(call, ctx, chain) -> bool:
    if _method(call, "cuda"):
        return True
    if _method(call, "to"):
        target = call.args[0] if call.args else _kw(call, "device")
        return target is not None and _cuda_value(target, ctx, chain) is True
    return False


def _call_state(node, ctx, chain, d) -> _State:  # noqa: C901 - one branch per kind of call
    func = node.func
    q = ctx.qualified(func)
    if q is not None:
        last = q.rsplit(".", 1)[-1]
        if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            rg = _kw(node, "requires_grad") or (node.args[1] if len(node.args) > 1 else None)
            return _State(rg is None or _const(rg, True), _state(node.args[0], ctx, d).cuda if node.args else False)
        if q.count(".") == 1 and last in ("tensor", "zeros", "ones", "randn", "rand", "empty", "full", "arange"):
            rg = _kw(node, "requires_grad")
            device = _kw(node, "device")
            return _State(
                rg is not None and _const(rg, True), device is not None and _cuda_value(device, ctx, chain) is True
            )
        if (q.count(".") == 1 and last in _TORCH_KEEP) or (
            q.startswith("torch.nn.functional.") and (last in _TORCH_KEEP or last in _F_LOSSES)
        ):
            parts = [a for a in node.args if not isinstance(a, ast.Starred)]
            if last in ("cat", "stack", "concat") and parts and isinstance(parts[0], (ast.List, ast.Tuple)):
                parts = list(parts[0].elts)
            states = [_state(a, ctx, d) for a in parts[:1] if last not in ("cat", "stack", "concat", *_F_LOSSES)] or [
                _state(a, ctx, d) for a in parts
            ]
            return _State(any(s.grad for s in states) and _grad_on(node, ctx), any(s.cuda for s in states))
        return _NOTHING
    if _loss_called(node, ctx):  # a loss of outputs that require grad requires grad
        states = [_state(a, ctx, d) for a in node.args if not isinstance(a, ast.Starred)]
        return _State(any(s.grad for s in states) and _grad_on(node, ctx), any(s.cuda for s in states))
    if isinstance(func, ast.Attribute):
        attr = func.attr
        if _module_called(node, ctx):  # self.fc(x), model.encoder(x)
            return _module_output(node, ctx, chain, d)
        if attr in ("detach", "detach_"):
            return _State(False, _state(func.value, ctx, d).cuda)
        if attr == "cpu":
            return _State(_state(func.value, ctx, d).grad, False)
        if attr == "cuda":
            return _State(_state(func.value, ctx, d).grad, True)
        if attr == "to":
            inner = _state(func.value, ctx, d)
            args = [*node.args, *(k.value for k in node.keywords)]
            if any(ctx.qualified(a) in _INT_DTYPES for a in args):
                return _State(False, inner.cuda)
            devices = [_cuda_value(a, ctx, chain) for a in args]
            cuda = True if True in devices else False if False in devices else inner.cuda and not devices
            return _State(inner.grad, bool(cuda))
        if attr in _INTEGER:
            return _State(False, _state(func.value, ctx, d).cuda)
        if attr in _KEEP or (attr in _NO_ARGS_KEEP and not node.args and not node.keywords):
            inner = _state(func.value, ctx, d)
            return _State(inner.grad and _grad_on(node, ctx), inner.cuda)
        return _NOTHING
    if isinstance(func, ast.Name):
        if _module_called(node, ctx):
            return _module_output(node, ctx, chain, d)
        fn = ctx.bindings._local_function(node, chain, node.lineno)
        if fn is not None:
            return _returned(fn, None, ctx, d)
    return _NOTHING


def _module_output(node, ctx, chain, d) -> _State:
    """A module's output requires grad where autograd records (its parameters require grad unless the
    file freezes some); it is on CUDA where the module was moved there or an input is."""
    grad = _grad_on(node, ctx) and not _frozen_somewhere(ctx)
    cuda = _module_on_cuda(node.func, ctx, chain, node.lineno) or any(
        _state(a, ctx, d).cuda for a in node.args if not isinstance(a, ast.Starred)
    )
    return _State(grad, cuda)


def _numpy_of_refused_tensor(node, ctx) -> bool:
    """``t.numpy()`` (not ``force=True``), ``np.array(t)`` or ``np.asarray(t)`` where ``t`` is known to
    require grad or to live on a CUDA device."""
    if _method(node, "numpy") and not node.args:
        if any(k.arg is None or (k.arg == "force" and not _const(k.value, False)) for k in node.keywords):
            return False
        target = node.func.value
    elif ctx.qualified(node.func) in ("numpy.array", "numpy.asarray") and node.args:
        target = node.args[0]
    else:
        return False
    if _called_name(target) in ("numpy", "tolist", "item"):
        return False
    state = _state(target, ctx)
    # numpy() refuses a tensor that requires grad only while grad mode is on: a parameter read under
    # torch.no_grad() or in a function decorated with inference_mode() converts
    return (state.grad and not _grad_off_at(node, ctx)) or (state.cuda and not _cpu_branch(node, target, ctx))


def _root_name(node) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _cpu_branch(node, target, ctx) -> bool:
    """The conversion sits in one branch of an ``if`` whose other branch moves the same tensor to the CPU first
    (``if self.gpu_mode: x.cpu().numpy() else: x.numpy()``): this branch is the one where it is on the CPU."""
    name = _root_name(target)
    child, up = node, ctx.parent(node)
    while name is not None and up is not None and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if isinstance(up, (ast.If, ast.IfExp)):
            body = up.body if isinstance(up.body, list) else [up.body]
            orelse = up.orelse if isinstance(up.orelse, list) else [up.orelse]
            mine = next((b for b in (body, orelse) if any(child is n for s in b for n in walk(s))), None)
            other = orelse if mine is body else body
            if mine is not None and any(
                _method(n, "cpu") and _root_name(n.func.value) == name for s in other for n in walk(s)
            ):
                return True
        child, up = up, ctx.parent(up)
    return False


def _grad_off_at(node, ctx) -> bool:
    """``node`` runs in a no_grad/inference_mode block, or in a function decorated with one."""
    up = ctx.parent(node)
    while up is not None and not isinstance(up, ast.Module):
        if isinstance(up, (ast.With, ast.AsyncWith)) and any(_grad_off_call(i.context_expr, ctx) for i in up.items):
            return True
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            _grad_off_call(d, ctx) or ctx.qualified(d) in _GRAD_OFF for d in up.decorator_list
        ):
            return True
        up = ctx.parent(up)
    return False


RULE = Rule(
    "PTF220",
    ("numpy-needs-detach-and-cpu",),
    "this tensor still requires grad (a model's output or a parameter, outside torch.no_grad()) or lives on "
    "a CUDA device: .numpy() (and np.array/np.asarray) raises RuntimeError \"Can't call numpy() on Tensor "
    'that requires grad" or TypeError "can\'t convert cuda:0 device type tensor to numpy"; convert with '
    "t.detach().cpu().numpy() (or t.numpy(force=True), torch 1.13+)",
    _numpy_of_refused_tensor,
    nodes=CALL,
    calls=("numpy", "array", "asarray"),
    needs=("numpy",),
)
