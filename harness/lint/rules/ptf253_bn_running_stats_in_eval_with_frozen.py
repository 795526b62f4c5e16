"""What: a part holding BatchNorm frozen with requires_grad=False, then trained in train() mode with nothing
putting it back in eval() after that train() call.
Why: requires_grad concerns gradients only; BatchNorm's running mean/var are buffers every training-mode
forward overwrites, and model.train() reaches the frozen part too: its pretrained statistics drift.
Fix: after every model.train(), call eval() on the frozen part (or override train() to do so), or build its
BatchNorm with track_running_stats=False.
"""

from __future__ import annotations

import ast
import re

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import CALL, Rule, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _dead, _exclusive, _scopes_of, _site_args
from torch_pitfalls.lint.walking import kept_on, walk

_BN = re.compile(r"^torch\.nn\.(modules\.batchnorm\.)?(Lazy)?(Sync)?BatchNorm[123]?d?$")
# torchvision classification and segmentation builders whose networks hold (trainable) BatchNorm; not the
# detection models (FrozenBatchNorm2d), not VGG without _bn, ViT, Swin, ConvNeXt (LayerNorm)
_TV_BN = re.compile(
    r"^torchvision\.models\.(segmentation\.|video\.|quantization\.)?"
    r"(resnet\d+|resnext\w+|wide_resnet\w+|densenet\d+|mobilenet_v[23]\w*|efficientnet\w*|regnet\w+|"
    r"inception_v3|googlenet|shufflenet\w+|mnasnet\w+|vgg\d+_bn|deeplabv3\w*|fcn_resnet\w+|lraspp\w+|r3d_18|"
    r"r2plus1d_18|mc3_18)$"
)
# a timm name that holds BatchNorm (the architecture is its first argument)
_TIMM_BN = re.compile(
    r"^(resnet|resnext|seresnet|efficientnet|tf_efficientnet|mobilenet|regnet|densenet|"
    r"inception|xception|dla|hrnet|res2net|resnest|rexnet|ghostnet|mixnet|dpn|cspresnet|"
    r"cspdarknet|darknet|ecaresnet|skresnet|tresnet|nfnet_l|efficientnetv2)"
)
# a part of a pretrained network named as its head: no BatchNorm in it
_HEADS = frozenset(("fc", "classifier", "head", "heads", "last_linear", "linear", "logits", "cls_head", "AuxLogits"))
# a call after train() that may put BatchNorm back in eval mode, by its name (a helper of another file)
_REFREEZE_NAME = re.compile(r"bn|batch_?norm|freeze|frozen|set_\w*eval|eval_\w*(bn|norm)", re.I)
_TRAIN_MODE = ("train",)


# --- what holds BatchNorm -----------------------------------------------------------------------------
def _holds_bn(expr, ctx, chain, klass, depth: int = 0) -> bool:
    """The expression builds (or names) something with a trainable BatchNorm in it: a BatchNorm layer, a
    torchvision/timm network that has them, a class of this file that builds one, a Sequential of them,
    a name or ``self.`` attribute bound to one, or what a function of this module returns."""
    if depth > 6 or expr is None:
        return False
    if isinstance(expr, ast.Name) or (isinstance(expr, ast.Attribute) and getattr(expr.value, "id", None) == "self"):
        q = ctx.qualified(expr)
        if q and _BN.match(q):
            return True
        return _bound_holds_bn(expr, ctx, chain, klass, depth)
    for n in walk(expr):
        if isinstance(n, (ast.Attribute, ast.Name)) and isinstance(getattr(n, "ctx", None), ast.Load):
            q = ctx.qualified(n)
            if q and (_BN.match(q) or (_TV_BN.match(q) and _called(n, expr))):
                return True
        if isinstance(n, ast.Call):
            q = ctx.qualified(n.func) or ""
            if q in ("timm.create_model", "timm.models.create_model") and n.args:
                name = n.args[0]
                if isinstance(name, ast.Constant) and isinstance(name.value, str) and _TIMM_BN.match(name.value):
                    return True
            if isinstance(n.func, ast.Name):
                cls = ctx.bindings.classes().get(n.func.id)
                if cls is not None and _class_holds_bn(cls, ctx, depth + 1):
                    return True
                fn = ctx.bindings.module_function(n.func.id)
                if fn is not None and any(
                    isinstance(r, ast.Return)
                    and r.value is not None
                    and _holds_bn(r.value, ctx, (fn, ctx.module), None, depth + 1)
                    for r in walk(fn)
                ):
                    return True
        if n is not expr and isinstance(n, (ast.Name, ast.Attribute)) and isinstance(getattr(n, "ctx", None), ast.Load):
            if _bound_holds_bn(n, ctx, chain, klass, depth + 1):
                return True
    return False


def _called(ref, expr) -> bool:
    """The reference is what a call in ``expr`` calls (``models.resnet50(...)``), not an argument to one."""
    return any(isinstance(n, ast.Call) and n.func is ref for n in walk(expr))


def _bound_holds_bn(ref, ctx, chain, klass, depth) -> bool:
    if isinstance(ref, ast.Name):
        return any(
            _holds_bn(v, ctx, where, klass, depth + 1)
            for v, where in _exprs_of(ref.id, chain, getattr(ref, "lineno", 1 << 30), ctx)
        )
    if isinstance(ref, ast.Attribute) and getattr(ref.value, "id", None) == "self" and klass is not None:
        values = ctx.bindings.self_attributes(klass).get(ref.attr) or []
        return any(_holds_bn(v, ctx, _scopes_of(v, ctx), klass, depth + 1) for _, v, _ in values)
    return False


def _exprs_of(name, chain, line, ctx, depth: int = 0) -> list:
    """(expression, its scopes) for what ``name`` may hold at ``line``: what it was assigned, the element
    of what a function of this module returns (``backbone, head = build()``), or what the module's calls
    pass for a parameter."""
    bindings = ctx.bindings
    binding, where = bindings.lookup(name, chain, line)
    if binding is None or depth > 4:
        return []
    if binding.how == "assign":
        return [(binding.value, where)]
    if binding.how == "item" and isinstance(binding.value, ast.Call) and binding.index is not None:
        fn = (
            bindings.module_function(getattr(binding.value.func, "id", ""))
            if isinstance(binding.value.func, ast.Name)
            else None
        )
        if fn is None:
            return []
        return [(v, (fn, ctx.module)) for v, _ in returned_values(fn, binding.index) or ()]
    if binding.how == "param":
        out = []
        for value, caller, at, _ in bindings.passed(where[0], name) or ():
            if isinstance(value, ast.Name):
                out += _exprs_of(value.id, caller, at, ctx, depth + 1)
            else:
                out.append((value, caller))
        return out
    return []


def _class_holds_bn(cls, ctx, depth) -> bool:
    def make(cls):
        if depth > 5:
            return False
        return any(
            isinstance(n, ast.Call) and _holds_bn(n, ctx, _scopes_of(n, ctx), cls, depth + 1)
            for m in cls.body
            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
            for n in walk(m)
        ) or any(_TV_BN_BASE.match(ctx.qualified(b) or "") for b in cls.bases)

    found = cls.__dict__.get("_ptf253_bn")
    if found is None:
        cls.__dict__["_ptf253_bn"] = False  # a class that builds itself holds nothing more
        found = cls.__dict__["_ptf253_bn"] = make(cls)
    return found


_TV_BN_BASE = re.compile(r"^torchvision\.models\.(resnet\.ResNet|ResNet|densenet\.DenseNet|DenseNet)$")


# --- the freezes ----------------------------------------------------------------------------------------
class Freeze:
    """One freeze: the module whose parameters are turned off, as a root (a name in a function, or
    ``self``/``self.attr`` in a class) and the attribute path below it."""

    def __init__(self, node, root, path, function, klass):
        self.node, self.root, self.path, self.function, self.klass = node, root, path, function, klass


def _false(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _module_freezes(ctx) -> list:
    """Every statement of the module that turns a module's parameters' gradients off."""
    return kept_on(ctx.module, "_ptf253_freezes", lambda tree: _find_freezes(tree, ctx))


def _enclosing(node, ctx, kinds):
    up = ctx.parent(node)
    while up is not None and not isinstance(up, kinds):
        up = ctx.parent(up)
    return up


def _find_freezes(tree, ctx) -> list:
    found = []
    for node in walk(tree):
        param = None
        if isinstance(node, ast.Assign) and _false(node.value):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and t.attr == "requires_grad":
                    param = t.value
        elif _method(node, "requires_grad_") and (
            (node.args and _false(node.args[0])) or _false(_kw(node, "requires_grad"))
        ):
            param = node.func.value
        if param is None:
            continue
        function = _enclosing(node, ctx, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))
        klass = _enclosing(function, ctx, (ast.ClassDef,)) if not isinstance(function, ast.Module) else None
        module = _frozen_module(node, param, ctx)
        if module is None or _dead(node, ctx):
            continue
        root, path = _root(module)
        if root is not None and not _moved_by_average(root, path, tree, ctx):
            found.append(Freeze(node, root, path, function, klass))
    return found


def _moved_by_average(root, path, tree, ctx) -> bool:
    """The frozen part is a momentum (EMA) copy: its parameters are written from another module's in a
    ``zip(a.parameters(), b.parameters())`` loop (MoCo's key encoder, BYOL's and DINO's teacher), whose
    BatchNorm statistics are left in train mode on purpose."""
    last = path[-1] if path else root.id
    for n in walk(tree):
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "zip":
            pairs = [a for a in n.args if _method(a, "parameters", "named_parameters", "state_dict", "buffers")]
            if len(pairs) < 2:
                continue  # zip(weights_before, backbone.parameters()): a comparison, not an average
            for a in pairs:
                r, p = _root(a.func.value)
                if r is not None and (p[-1] if p else r.id) == last:
                    return True
    return False


def _frozen_module(stmt, param, ctx):
    """The module expression whose parameters ``param`` runs over: ``m`` of ``for p in m.parameters():``
    (or ``named_parameters()``, over a name filter that keeps more than the head), or ``m`` itself for
    ``m.requires_grad_(False)`` on a module."""
    if isinstance(param, ast.Name):
        loop = _enclosing(stmt, ctx, (ast.For, ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))
        while isinstance(loop, ast.For) and not _binds(loop.target, param.id):
            loop = _enclosing(loop, ctx, (ast.For, ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))
        if not isinstance(loop, ast.For):
            return _module_name(param, stmt, ctx)  # backbone.requires_grad_(False)
        it = loop.iter
        if isinstance(it, ast.Call) and getattr(it.func, "id", None) in ("list", "enumerate") and it.args:
            it = it.args[0]
        if not _method(it, "parameters", "named_parameters"):
            return None
        if _method(it, "named_parameters") and not _filter_keeps_body(stmt, loop, ctx):
            return None
        return _through_parts(it.func.value, loop, ctx)
    if isinstance(param, ast.Attribute) and param.attr in ("weight", "bias") and isinstance(param.value, ast.Name):
        return _bn_of_modules_loop(stmt, param.value, ctx)
    if isinstance(param, ast.Attribute):
        return param if not param.attr.endswith(("weight", "bias", "embed", "token", "embedding")) else None
    return None


def _bn_of_modules_loop(stmt, layer, ctx):
    """``for m in net.modules(): if isinstance(m, nn.BatchNorm2d): m.weight.requires_grad = False``: the
    BatchNorm layers of ``net`` (its parts)."""
    loop = _enclosing(stmt, ctx, (ast.For, ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))
    if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and loop.target.id == layer.id):
        return None
    if not _method(loop.iter, "modules", "children"):
        return None
    tested = False
    up = ctx.parent(stmt)
    while up is not None and up is not loop:
        if isinstance(up, ast.If) and any(
            isinstance(n, (ast.Name, ast.Attribute)) and _BN.match(ctx.qualified(n) or "") for n in walk(up.test)
        ):
            tested = True
        up = ctx.parent(up)
    return ast.Attribute(value=loop.iter.func.value, attr="<part>", ctx=ast.Load()) if tested else None


def _module_name(name, stmt, ctx):
    """``m.requires_grad_(False)`` where ``m`` is a name bound to a module (not a tensor)."""
    function = _enclosing(stmt, ctx, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))
    held = ctx.bindings.held(name, (function, ctx.module) if function is not ctx.module else (ctx.module,), stmt.lineno)
    return name if held is not None and held.kind == "module" else None


def _binds(target, name) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in walk(target))


def _filter_keeps_body(stmt, loop, ctx) -> bool:
    """Over ``named_parameters()``: the freeze runs for every name, or under a test that keeps all but some
    (``if not name.startswith("fc")``, ``if "fc" not in name``), or one that picks backbone layers."""
    tests = []
    up = ctx.parent(stmt)
    while up is not None and up is not loop:
        if isinstance(up, ast.If):
            tests.append((up.test, stmt in _flat(up.body) or any(stmt in _flat([b]) for b in up.body)))
        up = ctx.parent(up)
    for test, in_body in tests:
        negated = _negative(test)
        if in_body and negated:
            continue
        if not in_body and not negated:
            continue  # the else of a test that picks the head: everything else is frozen
        strings = [n.value for n in walk(test) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        if (
            in_body
            and strings
            and all(re.search(r"layer|conv|bn|backbone|features|encoder|stem|block", s) for s in strings)
        ):
            continue
        return False
    return True


def _flat(stmts):
    return [n for s in stmts for n in walk(s)]


def _negative(test) -> bool:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    if isinstance(test, ast.Compare) and all(isinstance(o, (ast.NotIn, ast.NotEq)) for o in test.ops):
        return True
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return all(_negative(v) for v in test.values)
    return False


def _through_parts(receiver, loop, ctx):
    """``for child in list(model.children())[:-1]: for p in child.parameters()``: the parts of ``model``."""
    if isinstance(receiver, ast.Name):
        outer = _enclosing(loop, ctx, (ast.For, ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))
        while isinstance(outer, ast.For):
            if isinstance(outer.target, ast.Name) and outer.target.id == receiver.id:
                it = outer.iter
                while isinstance(it, (ast.Subscript, ast.Call)) and not _method(it, "children", "modules"):
                    it = it.value if isinstance(it, ast.Subscript) else (it.args[0] if it.args else None)
                if _method(it, "children", "modules"):
                    return ast.Attribute(value=it.func.value, attr="<part>", ctx=ast.Load())
                if isinstance(outer.iter, (ast.List, ast.Tuple)) and outer.iter.elts:
                    return outer.iter.elts[0]
                return None
            outer = _enclosing(outer, ctx, (ast.For, ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))
    return receiver


def _root(module):
    """(root, path): ``model.backbone.layer1`` -> (``model`` node, ("backbone", "layer1"))."""
    path = []
    node = module
    while True:
        if isinstance(node, ast.Attribute):
            path.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and _method(node, "to", "cuda", "cpu", "module"):
            node = node.func.value
        else:
            break
    return (node, tuple(reversed(path))) if isinstance(node, ast.Name) else (None, ())


def _freeze_holds_bn(f: Freeze, ctx) -> bool:
    """The frozen part has BatchNorm in it: the root's BatchNorm, through its path where the file shows it."""
    chain = (f.function, ctx.module) if f.function is not ctx.module else (ctx.module,)
    if f.root.id == "self" and f.klass is not None:
        if not f.path or f.path[0] == "<part>":
            return _class_holds_bn(f.klass, ctx, 0)
        values = ctx.bindings.self_attributes(f.klass).get(f.path[0]) or []
        if values:
            return any(_holds_bn(v, ctx, _scopes_of(v, ctx), f.klass, 0) for _, v, _ in values) and not (
                len(f.path) > 1 and f.path[1] in _HEADS
            )
        return False
    if f.path and f.path[0] in _HEADS:
        return False
    return (
        _holds_bn(f.root, ctx, chain, f.klass)
        if not f.path
        else _bound_holds_bn(f.root, ctx, chain, f.klass, 0) and _path_holds_bn(f, ctx, chain)
    )


def _path_holds_bn(f: Freeze, ctx, chain) -> bool:
    """``model.backbone`` of a network: an attribute of a class of this file that holds BatchNorm, or a part
    of a pretrained network other than its head."""
    held = ctx.bindings.held(f.root, chain, f.node.lineno, f.klass)
    cls = ctx.bindings.classes().get((held.what or "") if held is not None else "")
    if cls is not None and f.path[0] != "<part>":
        values = ctx.bindings.self_attributes(cls).get(f.path[0]) or []
        return any(_holds_bn(v, ctx, _scopes_of(v, ctx), cls, 0) for _, v, _ in values)
    return True  # a part of a pretrained network, other than its head


# --- the train() call and what it trains ----------------------------------------------------------------
def _aliases(name: str, function, ctx, depth: int = 0) -> set:
    """(function, name) pairs that hold the same module as ``name`` in ``function``: the callers' names
    passed for a parameter, the names a builder's call is assigned to, names built from it (``model =
    nn.Sequential(backbone, head)``, ``model = Net(backbone)``) and names it is assigned to."""
    out = {(id(function), name)}
    if depth > 4:
        return out
    bindings = ctx.bindings
    scope = bindings.scope(function)
    # a parameter: the names the module's calls pass for it
    if any(b.how == "param" for b in scope.names.get(name, ())) and isinstance(
        function, (ast.FunctionDef, ast.AsyncFunctionDef)
    ):
        for value, caller, _, _ in bindings.passed(function, name) or ():
            if isinstance(value, ast.Name):
                out |= _aliases(value.id, caller[0], ctx, depth + 1)
    # names built from it in the same function: model = nn.Sequential(backbone, head), model = backbone.to(d)
    for other, bs in scope.names.items():
        for b in bs:
            if b.how == "assign" and other != name and _built_from(b.value, name):
                out.add((id(function), other))
    # a function that returns it: the names its calls are assigned to
    if (
        isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        and bindings.module_function(function.name) is function
    ):
        if any(isinstance(r, ast.Return) and r.value is not None and _mentions(r.value, name) for r in walk(function)):
            for call, caller, _ in bindings.call_sites(function.name):
                target = _assigned_to(call, ctx)
                if target is not None:
                    out |= _aliases(target, caller[0], ctx, depth + 1)
    return out


def _mentions(expr, name) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in walk(expr))


def _built_from(value, name) -> bool:
    """``value`` is the module ``name`` (moved), or a module built with it as a part: the name itself, or an
    argument of the call (``Net(backbone)``, ``nn.Sequential(*list(backbone.children())[:-1], head)``)."""
    while _method(value, "to", "cuda", "cpu", "float", "half", "double"):
        value = value.func.value
    if isinstance(value, ast.Name):
        return value.id == name
    if not isinstance(value, ast.Call):
        return False
    for a in [*value.args, *(k.value for k in value.keywords)]:
        if isinstance(a, ast.Name) and a.id == name:
            return True
        if isinstance(a, ast.Starred) and any(
            _method(n, "children", "modules") and isinstance(n.func.value, ast.Name) and n.func.value.id == name
            for n in walk(a)
        ):
            return True
    return False


def _assigned_to(call, ctx):
    """The name a call's result is assigned to: ``model = build(...)`` or ``model = build(...).to(dev)``."""
    up, node = ctx.parent(call), call
    while isinstance(up, (ast.Attribute, ast.Call)) and (
        isinstance(up, ast.Attribute) or (isinstance(up, ast.Call) and up.func is node)
    ):
        node, up = up, ctx.parent(up)
    if isinstance(up, ast.Assign) and up.value is node and len(up.targets) == 1 and isinstance(up.targets[0], ast.Name):
        return up.targets[0].id
    return None


def _trains_frozen(call, ctx, freezes) -> bool:
    """The module whose ``train()`` is called holds one of the frozen parts."""
    receiver = call.func.value
    root, path = _root(receiver)
    if root is None:
        return False
    mine = set()
    if root.id != "self":
        binding, where = ctx.bindings.lookup(root.id, ctx.chain(), call.lineno)
        if binding is not None:
            mine = _aliases(root.id, where[0], ctx)
    elif path and ctx.klass is not None:  # self.model.train(): what the class was given for self.model
        mine = _attribute_aliases(ctx.klass, path[0], ctx)
    held = ctx.held(receiver)
    for f in freezes:
        if f.function is ctx.function and _exclusive(f.node, call, ctx.function):
            continue  # if mode == "freeze": ...freeze...  /  if mode == "finetune": model.train()
        if f.root.id == "self":
            cls = f.klass
            if cls is None:
                continue
            if root.id == "self" and ctx.klass is cls:
                return True
            if held is not None and held.kind == "module" and held.what == cls.name:
                return True
            continue
        theirs = _aliases(f.root.id, f.function, ctx)
        if mine & theirs:
            return True
    return False


def _attribute_aliases(klass, attr, ctx) -> set:
    """``self.model = model`` (or ``self.model, self.opt = model, opt``) in ``__init__``: the names the
    class's constructions pass for that parameter, with their aliases."""
    out = set()
    init = next((m for m in klass.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
    if init is None:
        return out
    for n in walk(init):
        if not isinstance(n, ast.Assign):
            continue
        for t in n.targets:
            pairs = (
                zip(t.elts, n.value.elts)
                if isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple)
                else [(t, n.value)]
            )
            for target, value in pairs:
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr == attr
                    and getattr(target.value, "id", None) == "self"
                    and isinstance(value, ast.Name)
                ):
                    for site, chain, _ in _site_args(init, value.id, ctx.bindings) or ():
                        if isinstance(site, ast.Name):
                            binding, where = ctx.bindings.lookup(site.id, chain, 1 << 30)
                            out |= _aliases(site.id, where[0] if where else chain[0], ctx)
    return out


def _refrozen_after(call, ctx) -> bool:
    """Something after this train() (in its loop, or in the rest of its function) may put BatchNorm back in
    eval mode: an eval() of anything but the whole that was put in train mode, an apply(), a call whose
    name says so (``set_bn_eval(model)``, ``model.freeze_bn()``), or a helper of this module that calls
    eval() on a part."""
    loop = _enclosing(call, ctx, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))
    region = loop if isinstance(loop, (ast.For, ast.While)) else ctx.function
    whole = ast.dump(call.func.value)
    for n in walk(region):
        if not isinstance(n, ast.Call) or (n.lineno, n.col_offset) <= (call.lineno, call.col_offset) or _dead(n, ctx):
            continue
        name = getattr(n.func, "attr", getattr(n.func, "id", "")) or ""
        if name == "eval" and isinstance(n.func, ast.Attribute) and ast.dump(n.func.value) != whole:
            return True
        if name == "apply" or (name == "train" and n.args and _false(n.args[0])):
            return True
        fn = ctx.bindings.module_function(name) if isinstance(n.func, ast.Name) else None
        if fn is not None:
            if _evals_a_part(fn):
                return True
        elif name != "eval" and _REFREEZE_NAME.search(name):
            return True
    return False


def _evals_a_part(fn) -> bool:
    """A helper that calls eval() on something other than a parameter it is given whole."""
    params = {a.arg for a in fn.args.args}
    return any(
        _method(n, "eval") and not (isinstance(n.func.value, ast.Name) and n.func.value.id in params) for n in walk(fn)
    )


def _stats_kept(ctx) -> bool:
    """The module keeps BatchNorm statistics fixed some other way: track_running_stats=False, momentum 0,
    a train() override, FrozenBatchNorm."""

    def make(tree):
        for n in walk(tree):
            if isinstance(n, ast.keyword) and n.arg == "track_running_stats":
                return True
            if isinstance(n, ast.Attribute) and n.attr in ("track_running_stats", "FrozenBatchNorm2d"):
                return True
            if isinstance(n, ast.Name) and "FrozenBatchNorm" in n.id:
                return True
            if isinstance(n, ast.ClassDef) and ctx.bindings.is_module_class(n):
                if any(isinstance(m, ast.FunctionDef) and m.name == "train" for m in n.body):
                    return True  # train() overridden in a module: it may put BatchNorm back in eval
            if (
                isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Attribute) and t.attr == "momentum" for t in n.targets)
                and isinstance(n.value, ast.Constant)
                and not n.value.value
            ):
                return True
            if (
                isinstance(n, ast.keyword)
                and n.arg == "momentum"
                and isinstance(n.value, ast.Constant)
                and not n.value.value
            ):
                return True
        return False

    return kept_on(ctx.module, "_ptf253_kept", make)


def _frozen_bn_trained(node, ctx) -> bool:
    if not (
        _method(node, *_TRAIN_MODE)
        and ctx.qualified(node.func) is None
        and (not node.args or (isinstance(node.args[0], ast.Constant) and node.args[0].value is True))
        and not node.keywords
    ):
        return False
    if ctx.kind(node.func.value) not in ("module", None):
        return False
    if _dead(node, ctx) or _stats_kept(ctx):
        return False
    freezes = [f for f in _module_freezes(ctx) if _freeze_holds_bn(f, ctx)]
    if not freezes:
        return False
    return _trains_frozen(node, ctx, freezes) and not _refrozen_after(node, ctx)


RULE = Rule(
    "PTF253",
    ("bn-running-stats-in-eval-with-frozen",),
    "train() puts a part frozen with requires_grad=False back in training mode, and its BatchNorm layers "
    "keep updating their running mean/var on every forward: the frozen backbone's features drift; after "
    "every model.train() put the frozen part in eval() (or override train() to do so)",
    _frozen_bn_trained,
    nodes=CALL,
    calls=_TRAIN_MODE,
    needs=("requires_grad",),
)
