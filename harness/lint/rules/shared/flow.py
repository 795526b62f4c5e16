"""Which code runs, and what a name holds there: a parameter's values from the module's own call sites,
the branches no call takes, a function's own code, exclusive branches."""

from __future__ import annotations

import ast
import builtins
from dataclasses import replace

from torch_pitfalls.lint.rules.base import _method
from torch_pitfalls.lint.walking import children, kept_on, walk


def climb(node, ctx, to_module: bool = False):
    """``(holder, child)`` for each node holding ``node``, innermost first: up to the current function
    (itself included), or with ``to_module`` up to the module."""
    child, up = node, ctx.parent(node)
    while up is not None:
        yield up, child
        if up is ctx.function and not to_module:
            return
        child, up = up, ctx.parent(up)


def branch_side(holder, child) -> bool | None:
    """Where ``child`` sits in ``holder``: True in the body of an ``if`` (or ``a if test else b``),
    False in its ``else``, None anywhere else (the test itself, or no branch)."""
    if not isinstance(holder, (ast.If, ast.IfExp)) or child is holder.test:
        return None
    return child in holder.body if isinstance(holder.body, list) else child is holder.body


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
    """``a`` and ``b`` sit in different branches of one ``if``, or under two ``if``s that compare one
    expression with two different constants (``if args.mode == "freeze":`` ... ``if args.mode ==
    "finetune":``): at most one of them runs."""
    paths = _branch_paths(function)
    pa, pb = paths.get(id(a), {}), paths.get(id(b), {})
    if any(pb.get(branching, side) != side for branching, side in pa.items()):
        return True
    tests = kept_on(function, "_branch_tests", lambda f: {id(n): n.test for n in walk(f) if isinstance(n, ast.If)})
    return any(
        _contradict(tests.get(x), tests.get(y))
        for x, side_a in pa.items()
        if side_a == 0
        for y, side_b in pb.items()
        if side_b == 0 and x != y
    )


def _contradict(one, other) -> bool:
    """``e == c1`` and ``e == c2`` with two different constants: both cannot hold at once."""
    pair = []
    for test in (one, other):
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
            return False
        if not isinstance(test.comparators[0], ast.Constant) or any(isinstance(n, ast.Call) for n in walk(test.left)):
            return False
        pair.append((ast.dump(test.left), test.comparators[0].value))
    (left_a, value_a), (left_b, value_b) = pair
    return left_a == left_b and value_a != value_b


def _branch_paths(function: ast.AST) -> dict[int, dict[int, int]]:
    """node id -> {id of an enclosing if: 0 in its body, 1 in its else}, for every node of the
    function, from one walk (kept on the function: a pair of calls asks it many times)."""
    return kept_on(function, "_branch_paths", _walk_branches)


def _walk_branches(function: ast.AST) -> dict[int, dict[int, int]]:
    paths: dict[int, dict[int, int]] = {}
    todo = [(function, {})]
    while todo:
        node, path = todo.pop()
        paths[id(node)] = path
        if isinstance(node, (ast.If, ast.IfExp)):
            body = node.body if isinstance(node.body, list) else [node.body]
            orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
            todo.append((node.test, path))
            todo.extend((child, {**path, id(node): 0}) for child in body)
            todo.extend((child, {**path, id(node): 1}) for child in orelse)
            continue
        todo.extend((child, path) for child in children(node))
    return paths


_BUILTINS = frozenset(dir(builtins))


def _class_call_args(fn, param: str, bindings) -> list | None:
    """``__init__``'s parameter: what each ``Class(...)`` call of the module passes for it."""
    klass = next(
        (c for c in bindings.classes().values() if fn in c.body and fn.name == "__init__"),
        None,
    )
    if klass is None:
        return None
    a = fn.args
    positional = [x.arg for x in (*a.posonlyargs, *a.args)][1:]  # not self
    defaults = dict(zip(positional[len(positional) - len(a.defaults) :], a.defaults))
    out = []
    for call, chain, _ in bindings.call_sites(klass.name):
        if any(isinstance(x, ast.Starred) for x in call.args) or any(k.arg is None for k in call.keywords):
            return None
        given = dict(zip(positional, call.args))
        given.update({k.arg: k.value for k in call.keywords})
        value = given.get(param, defaults.get(param))
        if value is None:
            return None
        out.append((value, chain, call.lineno))
    return out or None


def _site_args(fn, param: str, bindings) -> list | None:
    """(expression, caller's scopes, line) for what each call of the module passes for ``param``."""
    sites = bindings.passed(fn, param)
    if sites is not None:
        return [(value, chain, line) for value, chain, line, _ in sites]
    if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
        return _class_call_args(fn, param, bindings)
    return None


def _bound_once(name: str, scope, bindings) -> bool:
    """``name`` is bound exactly once in its scope and declared ``global`` nowhere: its one binding is
    what it holds everywhere (a flag set in one branch and reset in another is not)."""
    if len(bindings.scope(scope).names.get(name, ())) != 1:
        return False
    declared = bindings.__dict__.get("_declared_global")
    if declared is None:  # once per module
        declared = bindings.__dict__["_declared_global"] = {
            n for g in walk(bindings.tree) if isinstance(g, ast.Global) for n in g.names
        }
    return name not in declared


def _values(name: str, chain, line: int, bindings, depth: int = 0) -> list | None:
    """Every expression ``name`` may hold at ``line``: what it was assigned, or for a parameter what
    each call site of the module passes (followed through the callers' own parameters); a name bound
    nowhere (a builtin: ``list``) stands for itself. Only a name bound once in its scope (a parameter
    never reassigned, a constant). None where that cannot be told."""
    if depth > 6:
        return None
    binding, where = bindings.lookup(name, chain, line)
    if binding is None:
        return [ast.Name(id=name, ctx=ast.Load())]
    if not _bound_once(name, where[0], bindings):
        return None
    if binding.how == "assign":
        value = binding.value
        if isinstance(value, ast.Name):
            return _values(value.id, where, binding.line, bindings, depth + 1)
        return [value]
    if binding.how != "param":
        return None
    sites = _site_args(where[0], name, bindings)
    if not sites:
        return None
    out = []
    for value, caller, at in sites:
        inner = _values(value.id, caller, at, bindings, depth + 1) if isinstance(value, ast.Name) else [value]
        if inner is None:
            return None
        out.extend(inner)
    return out


def _scopes_of(node, ctx) -> tuple:
    """The scopes ``node`` looks names up in, innermost first (its functions, then the module)."""
    found, up = [], ctx.parent(node)
    while up is not None:
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            found.append(up)
        up = ctx.parent(up)
    return (*found, ctx.module)


def _truth(test, ctx, line: int) -> bool | None:
    """The value of an ``if`` test that the module decides: a literal, ``not`` one, or a name bound once
    to a literal (a module constant, a parameter to which every call of the module passes the same
    literal). None: it may go either way."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth(test.operand, ctx, line)
        return None if inner is None else not inner
    if isinstance(test, ast.Name) and ctx.module is not None:
        values = _values(test.id, _scopes_of(test, ctx), line, ctx.bindings)
        if values and all(isinstance(v, ast.Constant) for v in values):
            found = {bool(v.value) for v in values}
            return found.pop() if len(found) == 1 else None
    return None


_JUMPS = (ast.Raise, ast.Return, ast.Continue, ast.Break)


def _dead(node, ctx) -> bool:
    """``node`` sits in a branch that no call of the module takes (``if rewrap:`` where every call
    passes ``rewrap=False``; the ``else`` of one every call makes true), or in a function defined there,
    or after a ``raise`` (``return``, ``continue``, ``break``) of its own block: a backward that raises
    NotImplementedError before its ``return`` never returns."""
    for up, child in climb(node, ctx, to_module=True):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(up, field, None)
            if isinstance(block, list) and child in block:
                if any(isinstance(s, _JUMPS) for s in block[: block.index(child)]):
                    return True
        side = branch_side(up, child)
        if side is not None:
            truth = _truth(up.test, ctx, up.lineno)
            if truth is not None and side != truth:
                return True
    return False


def _chosen(expr, ctx, line: int):
    """``a if flag else b`` where the module decides ``flag``: the branch taken; else the expression."""
    while isinstance(expr, ast.IfExp):
        truth = _truth(expr.test, ctx, line)
        if truth is None:
            return expr
        expr = expr.body if truth else expr.orelse
    return expr


def _assigned(expr, ctx, line: int):
    """What a bare name was last assigned above ``line`` (the branch its module takes, for an
    ``a if flag else b``), or the expression itself."""
    value = ctx.value_of(expr, line) if isinstance(expr, ast.Name) else None
    return _chosen(value, ctx, line) if value is not None else expr


def _own_calls(ctx, *methods: str):
    """The calls of these methods in the current function's own code (not in functions nested in it)
    that run."""
    if ctx.function is None:
        return []
    return [n for n in walk(ctx.function) if _method(n, *methods) and _own_code(n, ctx) and not _dead(n, ctx)]


def _before(a, b) -> bool:
    return (a.lineno, a.col_offset) < (b.lineno, b.col_offset)


_GRAD_OFF = ("no_grad", "inference_mode")


def _grad_off(node, ctx) -> bool:
    """``node`` runs under ``with torch.no_grad():`` (or ``inference_mode()``) in its function: what it
    computes carries no graph."""
    up = ctx.parent(node)
    while up is not None and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
        if isinstance(up, (ast.With, ast.AsyncWith)) and any(
            isinstance(i.context_expr, ast.Call) and _called_name_of(i.context_expr.func) in _GRAD_OFF for i in up.items
        ):
            return True
        up = ctx.parent(up)
    return False


def _called_name_of(func) -> str:
    return getattr(func, "attr", getattr(func, "id", "")) or ""


def _function_values(name: str, chain, line: int, ctx, depth: int = 0) -> list | None:
    """The lambdas and module functions ``name`` may hold: what it was assigned, or for a parameter what
    every call of the module passes for it, by keyword where the call also unpacks ``*args``
    (``train(*problem(), keep=lambda v: v)``). None where something else may be passed."""
    bindings = ctx.bindings
    binding, where = bindings.lookup(name, chain, line)
    fn = bindings.module_function(name)
    if fn is not None and (binding is None or binding.value is fn):
        return [fn]
    if binding is None or depth > 4:
        return None
    if binding.how == "assign":
        value = binding.value
        if isinstance(value, ast.Name):
            return _function_values(value.id, where, binding.line, ctx, depth + 1)
        return [value] if isinstance(value, ast.Lambda) else None
    if binding.how != "param":
        return None
    owner = where[0]
    if (
        not isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef))
        or bindings.module_function(owner.name) is not owner
    ):
        return None
    out = []
    for call, caller, _ in bindings.call_sites(owner.name):
        value = next((k.value for k in call.keywords if k.arg == name), None)
        if value is None:
            return None  # passed by position (or not at all): not followed
        if isinstance(value, ast.Lambda):
            out.append(value)
            continue
        if not isinstance(value, ast.Name):
            return None
        inner = _function_values(value.id, caller, call.lineno, ctx, depth + 1)
        if inner is None:
            return None
        out.extend(inner)
    return out or None


# torch's grad-off context managers and decorators, by qualified name
GRAD_OFF_QUALIFIED = (
    "torch.no_grad",
    "torch.inference_mode",
    "torch.autograd.no_grad",
    "torch.autograd.grad_mode.no_grad",
)


def _decorated_grad_off(fn, ctx) -> bool:
    """``@torch.no_grad()`` (or ``@torch.inference_mode()``) on the function."""
    return any(
        ctx.qualified(d.func if isinstance(d, ast.Call) else d) in GRAD_OFF_QUALIFIED
        for d in getattr(fn, "decorator_list", ())
    )


def context_at(node, ctx):
    """A copy of ``ctx`` for the function (and class) ``node`` sits in, to read code there as the walk
    would (a caller of the function being checked); None inside a lambda."""
    chain, up = [], ctx.parent(node)
    klass = None
    while up is not None:
        if isinstance(up, ast.Lambda):
            return None
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
            chain.append(up)
        elif isinstance(up, ast.ClassDef) and klass is None and len(chain) <= 1:
            klass = up
        up = ctx.parent(up)
    function = chain[0] if chain else ctx.module
    return replace(ctx, function=function, klass=klass, scopes=[ctx.module, *reversed(chain)])


def helper_calls(fn, ctx) -> list | None:
    """Every call of ``fn`` in the module (for a method, every call of a method of that name, on any
    object), or None where ``fn`` is used some other way too (handed on, kept, decorated away)."""
    method = ctx.klass is not None and fn in ctx.klass.body
    if not method and ctx.bindings.module_function(fn.name) is not fn:
        return None  # a nested function, or a name bound twice
    attributes, names = kept_on(ctx.module, "_named_uses", _named_uses)
    calls = []
    for n in (attributes if method else names).get(fn.name, ()):
        parent = ctx.parent(n)
        if not (isinstance(parent, ast.Call) and parent.func is n):
            return None
        calls.append(parent)
    return calls


def _named_uses(module) -> tuple[dict, dict]:
    """(attribute name -> its ``x.name`` nodes, name -> its loads) of the module, in one walk."""
    attributes, names = {}, {}
    for n in walk(module):
        if isinstance(n, ast.Attribute):
            attributes.setdefault(n.attr, []).append(n)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            names.setdefault(n.id, []).append(n)
    return attributes, names
