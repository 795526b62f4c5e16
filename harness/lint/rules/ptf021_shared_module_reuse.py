"""What: One module object placed n times: [module] * n, one name listed twice in a Sequential, or one
module appended to the layer list on every pass of a loop.
Why: Every entry is the same object, so they all share one set of weights.
Fix: build a new module per entry ([nn.Linear(...) for _ in range(n)]).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import parameter_defaults
from torch_pitfalls.lint.rules.base import Rule, _bound_name, _is_call_to, _method
from torch_pitfalls.lint.rules.shared.modules import _STATELESS
from torch_pitfalls.lint.walking import walk

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
        isinstance(n, ast.Assign) and any(ast.dump(t) == target for t in n.targets) for s in other for n in walk(s)
    )


def _module_list_multiplied(node, ctx) -> bool:
    """``[nn.Linear(4, 4)] * n`` or ``[block] * n``: one module object listed n times, so its weights
    are shared (unless the code chooses between sharing and not: ``_sharing_chosen``)."""
    return _module_listed_n_times(node, ctx) and not _sharing_chosen(node, ctx)


def _module_listed_n_times(node, ctx) -> bool:
    if isinstance(node, ast.Call):
        return _module_listed_twice(node, ctx) or _one_module_appended(node, ctx)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return _one_module_comprehended(node, ctx)
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return False
    for side, times in ((node.left, node.right), (node.right, node.left)):
        if isinstance(side, (ast.List, ast.Tuple)) and not _a_flag(times, ctx):
            if any(isinstance(elt, (ast.Call, ast.Name)) and _stateful_module(elt, ctx) for elt in side.elts):
                return True
    return False


def _a_flag(expr, ctx) -> bool:
    """A truth value, not a count: ``batch_norm * [BatchNorm(n)]`` with a ``batch_norm=True`` parameter (or an
    annotated ``bool``, a comparison, a ``not``) keeps the module once or leaves it out; nothing is shared."""
    if isinstance(expr, (ast.Compare, ast.BoolOp)) or (isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not)):
        return True
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, bool)
    fn = ctx.function
    if not (isinstance(expr, ast.Name) and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))):
        return False
    args = fn.args
    param = next((a for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.arg == expr.id), None)
    if param is None or ctx.value_of(expr, expr.lineno) is not None:
        return False  # not a parameter, or rebound here
    default = parameter_defaults(fn).get(expr.id)
    return getattr(param.annotation, "id", None) == "bool" or (
        isinstance(default, ast.Constant) and isinstance(default.value, bool)
    )


def _one_module_comprehended(node, ctx) -> bool:
    """``[layer for _ in range(n)]`` where ``layer`` names one module built before the comprehension
    (a name or ``self.`` attribute its loops do not bind): n references to one object, not n modules."""
    elt = node.elt
    if (
        not _bound_name(elt)
        or isinstance(elt, ast.Name)
        and elt.id in {n.id for g in node.generators for n in walk(g.target) if isinstance(n, ast.Name)}
    ):
        return False
    return _stateful_module(elt, ctx)


def _one_module_appended(node, ctx) -> bool:
    """``for _ in range(n): layers.append(block)`` where ``block`` names one module built before the loop,
    and ``layers`` becomes an ``nn.Sequential``/``nn.ModuleList`` of the function: the loop's counterpart
    of ``[block for _ in range(n)]``."""
    if not (
        _method(node, "append")
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
        and isinstance(node.func.value, ast.Name)
    ):
        return False
    loop = ctx.parent(node)
    while loop is not None and loop is not ctx.function and not isinstance(loop, (ast.For, ast.While)):
        loop = ctx.parent(loop)
    if not isinstance(loop, (ast.For, ast.While)):
        return False
    name, listed = node.args[0].id, node.func.value.id
    if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in walk(loop)):
        return False  # built anew on each pass
    contained = any(
        _is_call_to(c, ctx, *_CONTAINERS)
        and any(isinstance(a, ast.Name) and a.id == listed for arg in c.args for a in walk(arg))
        for c in walk(ctx.function)
        if isinstance(c, ast.Call)
    )
    built = ctx.value_of(node.args[0], node.lineno)  # built here: a parameter's module class is unknown
    return contained and isinstance(built, ast.Call) and _stateful_module(built, ctx)


RULE = Rule(
    "PTF021",
    ("shared-module-reuse",),
    "one module object placed n times ([module] * n, one name listed twice in a Sequential, or appended on "
    "every pass of a loop) shares its weights across every entry; build a new module per entry "
    "([nn.Linear(...) for _ in range(n)])",
    _module_list_multiplied,
    nodes=(ast.BinOp, ast.Call, ast.ListComp, ast.GeneratorExp),
)
