"""What: a submodule "frozen" with .eval() alone (model.backbone.eval()) while an optimizer over model.parameters()
trains on, with no requires_grad_(False), requires_grad = False, no_grad() or detach() for it in the file.
Why: eval() sets the flag Dropout and BatchNorm read; autograd and the optimizer never look at it, so the
submodule's weights keep training while its frozen BatchNorm statistics make it look frozen.
Fix: backbone.requires_grad_(False) and an optimizer over the parameters that require grad; keep eval() for BN.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import arguments
from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _const, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import GRAD_OFF_QUALIFIED, _dead, _own_code, context_at
from torch_pitfalls.lint.rules.shared.modules import _sets_eval, constructions
from torch_pitfalls.lint.walking import kept_on, walk

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
# layers eval() is meant for: a submodule that is one of them is put in eval mode for its statistics
_MODE_LAYERS = ("BatchNorm", "SyncBatchNorm", "InstanceNorm", "Dropout", "AlphaDropout", "FeatureAlphaDropout")


def _chain(node) -> list[str] | None:
    """``model.backbone.layer1`` -> ["model", "backbone", "layer1"]; ``self.net.enc`` -> ["self", "net",
    "enc"]; None for anything but names and attributes."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _optimizers(fn, ctx):
    """The torch.optim constructions of the function's own code: (call, the name it is bound to or None)."""
    found = []
    for n in walk(fn):
        if not _optimizer_call(n, ctx) or not _own_code(n, ctx) or _dead(n, ctx):
            continue
        parent = ctx.parent(n)
        name = None
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            name = parent.targets[0].id
        found.append((n, name))
    return found


def _params_expr(opt: ast.Call, ctx):
    """What the optimizer is given, a name taken to what it was assigned."""
    params = opt.args[0] if opt.args else _kw(opt, "params")
    if isinstance(params, ast.Name):
        params = ctx.value_of(params, opt.lineno) or params
    return params


def _covers(params, chain: list[str]) -> list[str] | None:
    """The owner through which the optimizer's parameters include the submodule's: ``model`` of
    ``model.parameters()`` for ``model.backbone``; None where the parameters are filtered on requires_grad
    or by name, or list the submodule on its own (``{"params": model.backbone.parameters(), "lr": 1e-5}``
    trains it on purpose)."""
    if params is None or _filtered(params):
        return None
    owner = None
    for n in walk(params):
        if _method(n, "parameters", "named_parameters"):
            receiver = _chain(n.func.value)
            if receiver is None:
                continue
            if receiver == chain:
                return None  # the submodule's own parameters, listed explicitly
            if len(receiver) < len(chain) and chain[: len(receiver)] == receiver:
                owner = receiver
    return owner


def _filtered(params) -> bool:
    """The parameters are filtered: on requires_grad (whatever is frozen is left out), by name (a
    comprehension's ``if "backbone" not in n``), or through ``filter``."""
    return any(
        (isinstance(n, ast.Attribute) and n.attr == "requires_grad")
        or (isinstance(n, ast.comprehension) and n.ifs)
        or (isinstance(n, ast.Call) and getattr(n.func, "id", None) == "filter")
        for n in walk(params)
    )


def _stepped_after(opt, name, eval_call, fn, ctx) -> bool:
    """The optimizer trains after the eval(): ``opt.step()``, ``scaler.step(opt)``, or the optimizer handed
    to a call (a training helper), at or after the eval's line; or built inline as a call's argument."""
    parent = ctx.parent(opt)
    if isinstance(parent, ast.Call) and opt in (*parent.args, *(k.value for k in parent.keywords)):
        return parent.lineno >= eval_call.lineno
    if name is None:
        return False
    for n in walk(fn):
        if not isinstance(n, ast.Call) or n.lineno < eval_call.lineno or n.lineno < opt.lineno:
            continue
        if _method(n, "step") and getattr(n.func.value, "id", None) == name:
            return True
        if (ctx.qualified(n.func) or "").startswith("torch."):
            continue  # a scheduler built on it, a clip of its parameters: not a training step
        if any(isinstance(a, ast.Name) and a.id == name for a in (*n.args, *(k.value for k in n.keywords))):
            return True
    return False


def _file_freezes(ctx) -> bool:
    """Something in the file turns gradients off by hand: ``requires_grad_(...)`` with anything but True,
    ``.requires_grad = ...`` (anything but True), or a call of a ``freeze``-named function or method."""

    def scan(tree):
        for n in walk(tree):
            if _method(n, "requires_grad_"):
                flag = n.args[0] if n.args else _kw(n, "requires_grad")
                if flag is not None and not _const(flag, True):
                    return True
            if isinstance(n, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in n.targets
            ):
                if not _const(n.value, True):
                    return True
            name = (getattr(n.func, "attr", None) or getattr(n.func, "id", "") or "") if isinstance(n, ast.Call) else ""
            if "freeze" in name and "unfreeze" not in name and name not in defined:
                return True  # code this file does not show may freeze (a function of the file is read above)
        return False

    defined = {
        fn.name for fn in walk(ctx.module) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
    }  # functions and methods of the file: their bodies are scanned with the rest

    return kept_on(ctx.module, "_ptf237_freezes", lambda tree: [scan(tree)])[0]


def _grads_cut(attr: str, ctx) -> bool:
    """Somewhere in the file a call of ``<...>.attr(...)`` runs under no_grad()/inference_mode() or is
    detached: the submodule is used without gradients, so the optimizer skips it."""
    for n in walk(ctx.module):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == attr):
            continue
        parent = ctx.parent(n)
        if isinstance(parent, ast.Attribute) and parent.attr in ("detach", "detach_"):
            return True
        up = parent
        while up is not None:
            if isinstance(up, (ast.With, ast.AsyncWith)) and any(
                isinstance(i.context_expr, ast.Call) and ctx.qualified(i.context_expr.func) in GRAD_OFF_QUALIFIED
                for i in up.items
            ):
                return True
            if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(
                    ctx.qualified(d.func if isinstance(d, ast.Call) else d) in GRAD_OFF_QUALIFIED
                    for d in up.decorator_list
                ):
                    return True
                break
            up = ctx.parent(up)
    return False


def _is_mode_layer(chain, ctx, line) -> bool:
    """The submodule is itself a BatchNorm/Dropout layer of a module class of this file
    (``self.bn = nn.BatchNorm2d(...)``): eval() there is for its statistics."""
    owner = ctx.held(_expr(chain[:-1]), line)
    klass = ctx.bindings.classes().get(owner.what or "") if owner is not None and owner.kind == "module" else None
    if klass is None:
        return False
    for _, value, _ in ctx.bindings.self_attributes(klass).get(chain[-1]) or []:
        q = ctx.qualified(value.func) if isinstance(value, ast.Call) else None
        if q and q.startswith("torch.nn.") and q.rsplit(".", 1)[-1].startswith(_MODE_LAYERS):
            return True
    return False


def _expr(chain: list[str]) -> ast.AST:
    node: ast.AST = ast.Name(id=chain[0], ctx=ast.Load())
    for attr in chain[1:]:
        node = ast.Attribute(value=node, attr=attr, ctx=ast.Load())
    return node


def _evaluated_submodule_trained(node, ctx):
    """``owner.sub.eval()`` in a function that builds an optimizer over ``owner.parameters()`` and steps it
    afterwards, with no freezing anywhere in the file."""
    if not (isinstance(node, ast.Call) and _sets_eval(node) and ctx.function is not None):
        return False
    chain = _chain(node.func.value)
    if chain is None or len(chain) < 2 or not _own_code(node, ctx) or _dead(node, ctx):
        return False
    fn = ctx.function
    owners = [
        owner
        for opt, name in _optimizers(fn, ctx)
        if (owner := _covers(_params_expr(opt, ctx), chain)) is not None and _stepped_after(opt, name, node, fn, ctx)
    ]
    if not owners:
        return _through_a_helper(node, chain, ctx) or _in_an_own_train(node, chain, ctx)
    if _file_freezes(ctx) or _grads_cut(chain[-1], ctx) or _is_mode_layer(chain, ctx, node.lineno):
        return False
    kinds = set()
    for owner in owners:
        if owner == ["self"]:
            kinds.add("module" if ctx.klass is not None and ctx.bindings.is_module_class(ctx.klass) else None)
        else:
            held = ctx.held(_expr(owner), node.lineno)
            kinds.add(held.kind if held is not None else None)
    if "module" in kinds:
        return True
    return UNSURE if None in kinds else False


def _through_a_helper(node, chain, ctx) -> bool:
    """``def freeze_backbone(model): model.backbone.eval()``, the eval of a part of a parameter of a function of the
    module: judged at each call of it in the file, where the caller goes on to step an optimizer after the call, and
    an optimizer built anywhere in the file takes the parameters (unfiltered) of the very model the caller hands
    over (the same construction: ``model = StyleNet(...)`` ... ``SGD(model.parameters())`` in another helper)."""
    fn = ctx.function
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or ctx.bindings.module_function(fn.name) is not fn:
        return False
    binding, where = ctx.bindings.lookup(chain[0], ctx.chain(), node.lineno)
    if binding is None or binding.how != "param" or where[0] is not fn:
        return False
    if _file_freezes(ctx) or _grads_cut(chain[-1], ctx) or _is_mode_layer(chain, ctx, node.lineno):
        return False
    optimizers = [(opt, context_at(opt, ctx)) for opt in walk(ctx.module) if _optimizer_call(opt, ctx)]
    for call, _chain, _klass in ctx.bindings.call_sites(fn.name):
        handed = arguments(call, fn).get(chain[0])
        caller = context_at(call, ctx)
        if not isinstance(handed, ast.Name) or caller is None or not _steps_after(call, caller):
            continue
        made = _built(handed, caller, call.lineno)
        if made and any(
            at is not None and _over(_params_expr(opt, at), made, at, opt.lineno) for opt, at in optimizers
        ):
            return True
    return False


def _in_an_own_train(node, chain, ctx) -> bool:
    """``def train(self, mode=True): super().train(mode); self.encoder.eval()`` in a module class: each model of the
    class keeps its part in eval mode, and an optimizer built in the file over the parameters (unfiltered) of a
    model of the class, stepped after it is built, trains that part on."""
    fn, klass = ctx.function, ctx.klass
    if not (
        isinstance(fn, ast.FunctionDef)
        and fn.name == "train"
        and chain[0] == "self"
        and klass is not None
        and fn in klass.body
        and ctx.bindings.is_module_class(klass)
    ):
        return False
    if _file_freezes(ctx) or _grads_cut(chain[-1], ctx) or _is_mode_layer(chain, ctx, node.lineno):
        return False
    made = frozenset(
        id(c) for c in walk(ctx.module) if isinstance(c, ast.Call) and getattr(c.func, "id", None) == klass.name
    )
    for opt in walk(ctx.module):
        at = context_at(opt, ctx) if _optimizer_call(opt, ctx) else None
        if at is None or at.function is None or not _over(_params_expr(opt, at), made, at, opt.lineno):
            continue
        parent = at.parent(opt)
        name = (
            parent.targets[0].id if isinstance(parent, ast.Assign) and isinstance(parent.targets[0], ast.Name) else None
        )
        if _stepped_after(opt, name, opt, at.function, at):
            return True
    return False


def _optimizer_call(n, ctx) -> bool:
    if not isinstance(n, ast.Call):
        return False
    q = ctx.qualified(n.func) or ""
    return q.startswith("torch.optim.") and q.rsplit(".", 1)[-1][:1].isupper() and "lr_scheduler" not in q


def _built(name: ast.Name, ctx, line) -> frozenset:
    """The construction calls the model ``name`` holds may come from (constructions), as a set of nodes."""
    found = constructions(name, ctx.chain(), line, ctx.klass, ctx)
    return frozenset(id(call) for call, _chain in found or ())


def _over(params, made: frozenset, ctx, line) -> bool:
    """The optimizer's parameters are ``X.parameters()`` of a model built by one of ``made``, unfiltered."""
    if params is None or _filtered(params):
        return False
    return any(
        _method(n, "parameters") and isinstance(n.func.value, ast.Name) and _built(n.func.value, ctx, line) & made
        for n in walk(params)
    )


def _steps_after(call, ctx) -> bool:
    """The caller steps an optimizer after the call (``optimizer.step()``, ``scaler.step(optimizer)``)."""
    return any(
        _method(n, "step") and n.lineno > call.lineno and ctx.kind(n.func.value) != "scheduler"
        for n in walk(ctx.function)
    )


RULE = Rule(
    "PTF237",
    ("model-eval-freezes-nothing",),
    "this submodule is 'frozen' with .eval() only, yet the optimizer built over its owner's parameters "
    "still holds its weights and they still require grad: eval() changes Dropout/BatchNorm, not gradients, "
    "so every step keeps training it; call .requires_grad_(False) on it and give the optimizer only the "
    "parameters that require grad",
    _evaluated_submodule_trained,
    nodes=CALL,
    calls=("eval", "train"),
    needs=("eval()", "train(False)", "train(mode=False)"),
)
