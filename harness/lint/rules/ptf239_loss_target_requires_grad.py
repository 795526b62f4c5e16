"""What: a regression or distillation loss whose target is a network's output, not detached and not under no_grad.
Why: a loss differentiates its target too: backward sends gradient into the teacher, the target network or the
stop-gradient branch, which then moves towards the prediction (SimSiam collapses; a teacher in the optimizer drifts).
Fix: make the target a constant: target = teacher(x).detach(), or compute it under torch.no_grad().
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from torch_pitfalls.lint.bindings import arguments, returned_values
from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _method
from torch_pitfalls.lint.rules.shared.flow import _dead, _decorated_grad_off, _grad_off, context_at
from torch_pitfalls.lint.walking import kept_on, walk

_FUNCTIONAL = tuple(
    f"torch.nn.functional.{n}" for n in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div")
)
_CLASSES = tuple(f"torch.nn.{n}" for n in ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss"))
_COSINE = ("torch.nn.functional.cosine_similarity", "torch.cosine_similarity")
_CUTS = frozenset(("detach", "detach_", "item", "tolist", "numpy"))
_BINARY = frozenset("add sub mul div matmul mm bmm gather where".split())
_CONTAINERS = ("torch.nn.ModuleDict", "torch.nn.ModuleList", "torch.nn.Sequential")


@dataclass(frozen=True)
class _Origin:
    """What an expression is computed from: the modules called on the way (by their spelling), the outermost
    one, what those modules were given (their first argument as written, in its scope), and whether a part
    of it was cut from the graph."""

    modules: frozenset = frozenset()
    outer: str | None = None
    leaves: frozenset = frozenset()
    cut: bool = False

    def __or__(self, other: "_Origin") -> "_Origin":
        return _Origin(
            self.modules | other.modules, self.outer or other.outer, self.leaves | other.leaves, self.cut or other.cut
        )


_NOTHING = _Origin()


class _Trace:
    def __init__(self, ctx):
        self.ctx, self.b = ctx, ctx.bindings

    def of(self, node, chain, line, klass, d=0) -> _Origin | None:  # noqa: C901 - one branch per kind of expression
        if node is None or d > 16:
            return None
        d += 1
        if isinstance(node, ast.Name):
            return self._name(node, chain, line, klass, d)
        if isinstance(node, ast.Constant):
            return _NOTHING
        if isinstance(node, ast.Attribute):
            if node.attr == "data":
                return _Origin(cut=True)
            return self.of(node.value, chain, line, klass, d)
        if isinstance(node, ast.Subscript):
            return self.of(node.value, chain, line, klass, d)
        if isinstance(node, ast.BinOp):
            return _join([self.of(s, chain, line, klass, d) for s in (node.left, node.right)])
        if isinstance(node, ast.UnaryOp):
            return self.of(node.operand, chain, line, klass, d)
        if isinstance(node, (ast.List, ast.Tuple)):
            return _join([self.of(e, chain, line, klass, d) for e in node.elts])
        if isinstance(node, ast.Call):
            return self._call(node, chain, line, klass, d)
        return None

    def _name(self, node, chain, line, klass, d):
        if node.id == "self":
            return _NOTHING
        binding, where = self._live(node.id, chain, line)
        if binding is False:
            return None  # assigned in a branch that may not run: either value
        if binding is None or binding.how in ("iter", "param", "other"):
            return _NOTHING
        if binding.how == "assign":
            return self.of(binding.value, where, binding.line, klass, d)
        if binding.how == "item":
            return self._item(binding, where, klass, d)
        return None

    def _live(self, name, chain, line):
        """The binding of ``name`` that holds at ``line``: the last one above it that runs (a branch no call of
        the module takes is left out); False where that one sits in a branch that may not run."""
        binding, where = self.b.lookup(name, chain, line)
        if binding is None or binding.how not in ("assign", "item"):
            return binding, where
        scope = self.b.scope(where[0])
        found = [
            b
            for b in scope.names.get(name, [])
            if (where[0] is not chain[0] or (b.line < line and not scope.exclusive(b.line, line)))
            and b.value is not None
        ]
        for b in reversed(found):
            if b.how not in ("assign", "item"):
                return b, where
            if _dead(b.value, self.ctx):
                continue
            up = self.ctx.parent(b.value)
            while up is not None and up is not where[0]:
                if isinstance(up, (ast.If, ast.Try)) and not (up.lineno <= line <= up.end_lineno):
                    return False, where
                up = self.ctx.parent(up)
            return b, where
        return None, where

    def _item(self, binding, where, klass, d):
        """``p1, p2, z1, z2 = model(x1, x2)``: element ``i`` of what the model's forward (or a function of this
        module) returns."""
        call = binding.value
        if not isinstance(call, ast.Call) or binding.index is None:
            return None
        if self._cut_here(call):
            return _Origin(cut=True)
        held = self.b.held(call.func, where, binding.line, klass)
        cls = self.b.classes().get(held.what or "") if held is not None and held.kind == "module" else None
        if cls is not None:
            fn = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "forward"), None)
        else:
            fn, cls = self.b._local_function(call, where, binding.line), None
        returns = returned_values(fn, binding.index) if fn is not None else None
        if not returns or (fn is not None and _decorated_grad_off(fn, self.ctx)):
            return _Origin(cut=True) if returns else None
        return _join([self.of(v, (fn, self.b.tree), at + 1, cls, d) for v, at in returns])

    def _call(self, node, chain, line, klass, d):
        func = node.func
        if self._cut_here(node):
            return _Origin(cut=True)
        if isinstance(func, ast.Attribute) and func.attr in _CUTS:
            return _Origin(cut=True)
        args = [self.of(a, chain, line, klass, d) for a in node.args if not isinstance(a, ast.Starred)]
        key = self._module_key(func, chain, line, klass)
        if key is not None and self._forward_grad_off(func, chain, line, klass):
            return _Origin(cut=True)  # a module class whose forward is decorated @torch.no_grad()
        if key is not None:
            inner = _join(args)
            given = frozenset(((id(chain[0]), ast.unparse(node.args[0])),)) if node.args else frozenset()
            return None if inner is None else _Origin(frozenset((key,)), key, given) | inner
        q = self.ctx.qualified(func)
        if q is not None:
            return _join(args) if q.startswith("torch.") else None
        if isinstance(func, ast.Attribute):  # a tensor method: what it is called on (and the other operand)
            operands = args if func.attr in _BINARY else []
            return _join([self.of(func.value, chain, line, klass, d), *operands])
        return None

    def _cut_here(self, node) -> bool:
        fn = self.ctx.parent(node)
        while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fn = self.ctx.parent(fn)
        return _grad_off(node, self.ctx) or (fn is not None and _decorated_grad_off(fn, self.ctx))

    def _module_key(self, func, chain, line, klass) -> str | None:
        """The spelling of a module a call calls (``self.predictor``, ``teacher``, ``nets["target"]``), or None."""
        if isinstance(func, ast.Subscript):  # a ModuleDict's or ModuleList's entry
            held = self.b.held(func.value, chain, line, klass)
            if held is not None and held.kind == "module" and (held.what in _CONTAINERS or held.what is None):
                return ast.unparse(func)
            return None
        if isinstance(func, ast.Attribute) and func.attr == "forward":  # net.forward(x): the net's call
            func = func.value
        if not isinstance(func, (ast.Name, ast.Attribute)):
            return None
        held = self.b.held(func, chain, line, klass) or self._copy_of(func, chain, line, klass)
        return ast.unparse(func) if held is not None and held.kind == "module" else None

    def _forward_grad_off(self, func, chain, line, klass) -> bool:
        target = func.value if isinstance(func, ast.Attribute) and func.attr == "forward" else func
        held = self.b.held(target, chain, line, klass) if isinstance(target, (ast.Name, ast.Attribute)) else None
        cls = self.b.classes().get(held.what or "") if held is not None else None
        forward = cls and next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "forward"), None)
        return bool(forward) and _decorated_grad_off(forward, self.ctx)

    def _copy_of(self, func, chain, line, klass):
        """``ema = copy.deepcopy(model)``: what the copied object holds."""
        value = None
        if isinstance(func, ast.Name):
            value = self.b.value_of(func.id, chain, line)
        elif isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self" and klass is not None:
            found = self.b.self_attributes(klass).get(func.attr) or []
            value, chain, line = (
                (found[0][1], (found[0][0], self.b.tree), found[0][2] + 1) if len(found) == 1 else (None, chain, line)
            )
        if isinstance(value, ast.Call) and self.ctx.qualified(value.func) == "copy.deepcopy" and value.args:
            return self.b.held(value.args[0], chain, line, klass)
        return None


def _join(parts) -> _Origin | None:
    if any(p is None for p in parts):
        return None
    found = _NOTHING
    for p in parts:
        found = found | p
    return found


def _loss_pairs(node, ctx):
    """(prediction, target) pairs of a regression, distillation or cosine loss call: one pair, or both orders
    for a cosine similarity (symmetric in its arguments) taken as a loss (negated, or subtracted)."""
    q = ctx.qualified(node.func)
    if q in _FUNCTIONAL:
        return [(_arg(node, 0, "input"), _arg(node, 1, "target"))]
    if q in _COSINE and _negated(node, ctx):
        a, b = _arg(node, 0, "x1"), _arg(node, 1, "x2")
        return [(a, b), (b, a)]
    dot = _normalized_dot(node, ctx)
    if dot is not None and _negated(node, ctx):
        a, b = dot
        return [(a, b), (b, a)]
    if isinstance(node.func, ast.Call):
        q = ctx.qualified(node.func.func)
    elif isinstance(node.func, (ast.Name, ast.Attribute)):
        held = ctx.held(node.func)
        q = held.what if held is not None and held.kind in ("loss", "module") else None
    else:
        q = None
    if q == "torch.nn.CosineSimilarity" and _negated(node, ctx):
        a, b = _arg(node, 0, "x1"), _arg(node, 1, "x2")
        return [(a, b), (b, a)]
    return [(_arg(node, 0, "input"), _arg(node, 1, "target"))] if q in _CLASSES else []


def _normalized_dot(node, ctx):
    """``(p * z).sum(dim=-1)`` of two L2-normalised tensors (``p, z = F.normalize(p), F.normalize(z)``): a cosine
    similarity written out (BYOL's ``2 - 2 * (p * z).sum(-1)``); the two tensors normalised, or None."""
    if not (
        _method(node, "sum") and isinstance(node.func.value, ast.BinOp) and isinstance(node.func.value.op, ast.Mult)
    ):
        return None
    sides = [_normalized(side, ctx, node.lineno) for side in (node.func.value.left, node.func.value.right)]
    return tuple(sides) if all(s is not None for s in sides) else None


def _normalized(expr, ctx, line):
    """What ``F.normalize(x)`` normalised: ``x``, directly or through the name it is bound to; else None."""
    if isinstance(expr, ast.Name):
        binding, _ = ctx.bindings.lookup(expr.id, ctx.chain(), line)
        if binding is None or binding.how not in ("assign", "item") or binding.value is None:
            return None
        value = binding.value
        if binding.how == "item":
            if not (isinstance(value, ast.Tuple) and binding.index is not None and binding.index < len(value.elts)):
                return None
            value = value.elts[binding.index]
        expr = value
    if isinstance(expr, ast.Call) and ctx.qualified(expr.func) == "torch.nn.functional.normalize" and expr.args:
        return expr.args[0]
    return None


def _negated(node, ctx) -> bool:
    """The similarity is made a loss in its expression: ``-cos(p, z).mean()``, ``1 - cos(p, z)``, ``2 - 2 * cos``."""
    child, up = node, ctx.parent(node)
    while isinstance(up, (ast.Call, ast.Attribute, ast.BinOp, ast.UnaryOp)):
        if isinstance(up, ast.UnaryOp) and isinstance(up.op, ast.USub):
            return True
        if isinstance(up, ast.BinOp) and isinstance(up.op, ast.Sub) and up.right is child:
            return True
        other = up.left if isinstance(up, ast.BinOp) and up.right is child else getattr(up, "right", None)
        if isinstance(up, ast.BinOp) and isinstance(up.op, ast.Mult) and _negative_constant(other):
            return True  # -0.5 * (cos(p1, z2).mean() + cos(p2, z1).mean())
        child, up = up, ctx.parent(up)
    return False


def _negative_constant(node) -> bool:
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) in (int, float)
    )


def _backpropagated(ctx) -> bool:
    def find(tree):
        return any(
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("backward", "manual_backward")
            or isinstance(n, ast.FunctionDef)
            and n.name == "training_step"
            for n in walk(tree)
        )

    return kept_on(ctx.module, "_ptf239_backward", lambda tree: 1 if find(tree) else 0) == 1


def _frozen_or_copied(ctx):
    """(names of modules frozen in this file, names of modules filled by copying another's weights): by the last
    component of their spelling (``self.target_net`` and ``target_net`` are one module)."""

    def find(tree):
        frozen, copied = set(), set()
        for n in walk(tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                receiver = _last_name(n.func.value)
                if n.func.attr == "requires_grad_" and n.args and _false(n.args[0]):
                    frozen.add(receiver)
                if n.func.attr == "load_state_dict" and n.args and _state_dict_of_another(n.args[0], receiver):
                    copied.add(receiver)
            if isinstance(n, ast.For) and _parameters_of(n.iter) and _sets_requires_grad_false(n):
                frozen.add(_parameters_of(n.iter))
            if isinstance(n, ast.For) and isinstance(n.iter, ast.Call) and getattr(n.iter.func, "id", "") == "zip":
                owners = [_parameters_of(a) for a in n.iter.args]
                if len(owners) == 2 and all(owners) and owners[0] != owners[1]:
                    copied.update(owners)  # an EMA / momentum update between two networks
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
                callee = n.value.func
                if getattr(callee, "attr", getattr(callee, "id", "")) == "deepcopy":
                    copied.update(_last_name(t) for t in n.targets)
        frozen.discard(None)
        copied.discard(None)
        return frozenset(frozen), frozenset(copied)

    return kept_on(ctx.module, "_ptf239_frozen_copied", find)


def _last_name(node) -> str | None:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):  # teacher.eval().requires_grad_
        node = node.func.value
    if isinstance(node, ast.Subscript):
        inner = node.slice
        return inner.value if isinstance(inner, ast.Constant) and isinstance(inner.value, str) else None
    return getattr(node, "attr", getattr(node, "id", None))


def _false(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _parameters_of(node) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parameters":
        return _last_name(node.func.value)
    return None


def _sets_requires_grad_false(loop) -> bool:
    return any(
        isinstance(n, ast.Assign)
        and _false(n.value)
        and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in n.targets)
        for n in walk(loop)
    )


def _state_dict_of_another(arg, receiver) -> bool:
    return (
        isinstance(arg, ast.Call)
        and isinstance(arg.func, ast.Attribute)
        and arg.func.attr == "state_dict"
        and _last_name(arg.func.value) != receiver
    )


def _names(keys) -> set:
    return {_key_name(k) for k in keys}


def _key_name(key: str) -> str:
    tail = key.rsplit(".", 1)[-1]
    if "[" in tail:  # both["teacher"]
        inside = tail[tail.index("[") + 1 : tail.rindex("]")]
        return inside.strip("'\"")
    return tail


def _fixed_target(pred: _Origin, target: _Origin, ctx) -> bool:
    """The target is meant to stay fixed while the prediction learns towards it."""
    if target.cut or not target.modules or not pred.modules:
        return False
    frozen, copied = _frozen_or_copied(ctx)
    names = _names(target.modules)
    if names <= frozen:
        return False  # no parameter of the target's networks takes a gradient
    if (
        pred.modules > target.modules
    ):  # SimSiam: a predictor on top of the shared branch, whose other view is the target
        return pred.outer is not None and pred.outer not in target.modules
    if pred.modules & target.modules:
        return False  # the same networks on both sides (VICReg's invariance, a perceptual loss): both sides learn
    if names & copied:
        return True  # a target network or teacher filled with another network's weights
    return bool(pred.leaves & target.leaves)  # two different networks on the same input: the student and its teacher


def _judged_at_calls(pred, target, ctx) -> bool:
    """Both arguments are parameters of a module-level function (``def D(p, z)``) the module calls, as many calls
    passing one as the other: the loss is judged at each of those calls, with its arguments (_helper_pairs)."""
    fn = ctx.function
    if _parameter(pred, ctx, fn) is None or _parameter(target, ctx, fn) is None:
        return False
    ps, ts = ctx.bindings.passed(fn, pred.id), ctx.bindings.passed(fn, target.id)
    return bool(ps) and bool(ts) and len(ps) == len(ts)


def _target_requires_grad(node, ctx) -> bool:
    if ctx.function is None or not isinstance(node, ast.Call):
        return False
    pairs = _loss_pairs(node, ctx)
    helper = [] if pairs else _helper_pairs(node, ctx)
    if not (pairs or helper) or _grad_off(node, ctx) or not _backpropagated(ctx):
        return False
    trace = _Trace(ctx)
    line = node.lineno
    for pred, target in pairs:
        if pred is None or target is None or _judged_at_calls(pred, target, ctx):
            continue
        p, t = trace.of(pred, ctx.chain(), line, ctx.klass), trace.of(target, ctx.chain(), line, ctx.klass)
        if p is not None and t is not None and _fixed_target(p, t, ctx):
            return True
    for pred, target in helper:
        p, t = trace.of(pred, ctx.chain(), line, ctx.klass), trace.of(target, ctx.chain(), line, ctx.klass)
        if p is not None and t is not None and _fixed_target(p, t, ctx):
            return True
    return False


def _helper_pairs(call, ctx) -> list:
    """``regression_loss(p1, z2)``: a call of a module function whose loss pairs two of its parameters (``def
    regression_loss(p, z)`` with a cosine of the two, ``def D(p, z)``), those pairs with this call's arguments."""
    fn = ctx.bindings.module_function(call.func.id) if isinstance(call.func, ast.Name) else None
    if fn is None or fn is ctx.function:
        return []
    pairs = _parameter_pairs(fn, ctx)
    if not pairs:
        return []
    passed = arguments(call, fn)
    return [(passed[a], passed[b]) for a, b in pairs if passed.get(a) is not None and passed.get(b) is not None]


def _parameter_pairs(fn, ctx) -> list:
    """(prediction, target) parameter names of the losses ``fn`` computes of two of its parameters; read once per
    function (asked at every call of it)."""
    known = ctx.__dict__.setdefault("_ptf239_parameter_pairs", {})
    if id(fn) not in known:
        out = []
        for inner in walk(fn):
            if not isinstance(inner, ast.Call):
                continue
            inner_ctx = context_at(inner, ctx)
            if inner_ctx is None or inner_ctx.function is not fn:
                continue
            for pred, target in _loss_pairs(inner, inner_ctx):
                names = (_parameter(pred, inner_ctx, fn), _parameter(target, inner_ctx, fn))
                if None not in names:
                    out.append(names)
        known[id(fn)] = out
    return known[id(fn)]


def _parameter(expr, ctx, fn) -> str | None:
    """The parameter of ``fn`` that a bare name is where it is read, else None."""
    if not isinstance(expr, ast.Name):
        return None
    binding, where = ctx.bindings.lookup(expr.id, ctx.chain(), expr.lineno)
    return expr.id if binding is not None and binding.how == "param" and where and where[0] is fn else None


RULE = Rule(
    "PTF239",
    ("loss-target-requires-grad",),
    "the loss's target is a network's output that is not detached: backward sends gradient into the "
    "teacher / target network / stop-gradient branch too, which then moves towards the prediction; "
    "use target.detach() or compute it under torch.no_grad()",
    _target_requires_grad,
    nodes=CALL,
    needs=("_loss", "Loss", "kl_div", "osine"),
)
