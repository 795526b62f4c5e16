"""What: a training loop that puts the trained model in eval mode (``model.eval()``, ``validate(model)``) and never back.
Why: From the second epoch (or the first mid-epoch validation) on, Dropout is off and BatchNorm is frozen while the model trains.
Fix: call ``model.train()`` at the top of every epoch (or make the evaluation helper restore the mode it found).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import arguments
from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _method
from torch_pitfalls.lint.rules.shared.flow import _dead, _grad_off, _own_code, _values
from torch_pitfalls.lint.rules.shared.modules import _sets_eval
from torch_pitfalls.lint.rules.shared.training_loop import _optimizer_step
from torch_pitfalls.lint.walking import children, walk

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
# calls that take the model and never switch its mode: builtins, logging, copies, torch's own functions
_HARMLESS = frozenset(
    "print len isinstance id type str repr hasattr getattr setattr vars sum list tuple dict zip enumerate".split()
)
_HARMLESS_METHODS = frozenset(
    "append extend add update update_parameters log info debug warning watch write add_graph add_scalar".split()
)


def _key(node) -> str | None:
    """``model`` / ``self.model`` / ``model.module`` (a DDP wrapper's model is the model): a name the loop can hold."""
    if isinstance(node, ast.Attribute) and node.attr == "module":
        return _key(node.value)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _sets_train(call) -> bool:
    """``x.train()``, ``x.train(True)``, ``x.train(was_training)``: anything but ``train(False)``."""
    return _method(call, "train") and not _sets_eval(call)


def _own(fn):
    """The nodes of a function's (or lambda's, or loop's) own code, not of functions nested in it."""
    todo = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    if isinstance(fn, (ast.For, ast.AsyncFor, ast.While)):
        todo = list(fn.body)  # not the loop's else: it runs once, after the last iteration
    while todo:
        node = todo.pop()
        yield node
        todo.extend(c for c in children(node) if not isinstance(c, _NESTED))


def _trains_here(node, ctx) -> bool:
    """``backward()`` or an optimizer's step in this code."""
    return isinstance(node, ast.Call) and (_method(node, "backward") or _optimizer_step(node, ctx))


class _Effects:
    """What running a piece of code does to modules' modes: the keys it puts in eval mode, whether it
    puts anything in train mode, whether it trains, and whether it hands a key to code we cannot read."""

    def __init__(self):
        self.evals: set[str] = set()
        self.trains = False  # any train() call: a mode put back
        self.steps = False  # backward() / optimizer.step()
        self.unknown: set[str] = set()  # keys handed to a callee of unknown code


def _callees(call, ctx, klass, chain) -> list | None:
    """The code a call runs, where this file shows it: a module function, a method of the class
    through ``self.``, or for a parameter the lambdas and functions every call site passes."""
    func, bindings = call.func, ctx.bindings
    if isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self" and klass is not None:
        method = next(
            (m for m in klass.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == func.attr),
            None,
        )
        return [method] if method is not None else None
    if not isinstance(func, ast.Name):
        return None
    binding, _ = bindings.lookup(func.id, chain, call.lineno)
    fn = bindings.module_function(func.id)
    if fn is not None and (binding is None or binding.value is fn):
        return [fn]
    if binding is None or binding.how not in ("param", "assign"):
        return None
    values = _values(func.id, chain, call.lineno, bindings)
    out = []
    for value in values or ():
        if isinstance(value, ast.Name):
            value = bindings.module_function(value.id)
        if not isinstance(value, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        out.append(value)
    return out or None


def _mapping(call, fn) -> dict[str, str]:
    """Callee parameter -> the caller's key passed for it."""
    if isinstance(fn, ast.Lambda):
        names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        passed = dict(zip(names, call.args))
        passed.update({k.arg: k.value for k in call.keywords if k.arg})
    else:
        passed = arguments(call, fn)
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        if params and params[0] == "self" and isinstance(call.func, ast.Attribute):  # a method through self.
            passed = dict(zip(params[1:], call.args))
            passed.update({k.arg: k.value for k in call.keywords if k.arg})
    return {p: k for p, v in passed.items() if (k := _key(v)) is not None}


def _effects(code, ctx, klass, chain, seen=()) -> _Effects:
    """The effects of a function's, lambda's or loop's own code, following the calls of this file it makes
    (keys in the callee translated back through the arguments passed)."""
    found = _Effects()
    for node in _own(code):
        if not isinstance(node, ast.Call):
            continue
        if _trains_here(node, ctx):
            found.steps = True
        if _sets_eval(node):
            key = _key(node.func.value)
            if key is not None:
                found.evals.add(key)
            continue
        if _sets_train(node):
            found.trains = True
            continue
        if _method(node, "apply"):  # model.apply(fn): fn may set any mode
            found.trains = True
        passed = {k for a in (*node.args, *(k.value for k in node.keywords)) if (k := _key(a)) is not None}
        callees = _callees(node, ctx, klass, chain) if len(seen) < 4 else None
        if callees is None:
            if passed and not _harmless(node, ctx):
                found.unknown |= passed
            continue
        for fn in callees:
            if fn in seen:
                continue
            inner_chain = (fn, ctx.module) if not isinstance(fn, ast.Lambda) else (fn, *chain)
            inner = _effects(fn, ctx, klass, inner_chain, (*seen, fn))
            mapping = _mapping(node, fn)
            found.trains |= inner.trains
            found.steps |= inner.steps
            for key in inner.evals:
                found.evals.add(mapping.get(key, key) if not key.startswith("self.") else key)
            for key in inner.unknown:
                found.unknown.add(mapping.get(key, key) if not key.startswith("self.") else key)
    return found


def _harmless(call, ctx) -> bool:
    """A callee known not to switch a module's mode: a builtin, torch's or copy's own function, a logger."""
    func = call.func
    q = ctx.qualified(func) or ""
    if q.startswith(("torch.", "copy.", "logging.", "numpy.", "wandb.")):
        return True
    if isinstance(func, ast.Name):
        return func.id in _HARMLESS
    return isinstance(func, ast.Attribute) and func.attr in _HARMLESS_METHODS


def _trained_keys(loop, ctx) -> set[str]:
    """The modules this loop trains: those whose parameters an optimizer built in this function (or,
    for ``self.`` attributes, in the class) holds; where no optimizer construction is visible, those the
    loop calls with gradients on."""
    scopes = [ctx.function]
    if ctx.klass is not None:
        scopes += [m for m in ctx.klass.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    held, seen_optimizer, tensors_only = set(), False, True
    for scope in scopes:
        for node in walk(scope):
            q = ctx.qualified(node.func) if isinstance(node, ast.Call) else None
            if q and q.startswith("torch.optim.") and q.rsplit(".", 1)[-1][:1].isupper() and node.args:
                seen_optimizer = True
                given = node.args[0]
                tensors_only &= isinstance(given, (ast.List, ast.Tuple)) and all(
                    isinstance(e, ast.Name) for e in given.elts
                )
                for sub in walk(given):
                    if _method(sub, "parameters", "named_parameters") and (k := _key(sub.func.value)):
                        held.add(k)
                        held |= _kept_as(k, scope)
    if seen_optimizer and held:
        return held
    if seen_optimizer and tensors_only:
        return set()  # Adam([latent]): the loop fits tensors through a model it keeps in eval mode on purpose
    called = {
        k
        for n in _own(loop)
        if isinstance(n, ast.Call) and (k := _key(n.func)) is not None and not _grad_off(n, ctx) and _is_module(n, ctx)
    }
    return called if len(called) == 1 else set()


def _kept_as(name: str, scope) -> set[str]:
    """The ``self.`` attributes ``scope`` binds to the module ``name`` holds (``self.model = model.to(device)``,
    ``self.model, self.device = model, device``): the optimizer built on ``model`` trains ``self.model``."""
    found = set()
    for n in walk(scope):
        if not isinstance(n, ast.Assign):
            continue
        pairs = [(t, n.value) for t in n.targets]
        for target in n.targets:  # self.model, self.device = model.to(device), device
            if (
                isinstance(target, ast.Tuple)
                and isinstance(n.value, ast.Tuple)
                and len(target.elts) == len(n.value.elts)
            ):
                pairs += zip(target.elts, n.value.elts)
        for target, value in pairs:
            while _method(value, "to", "cuda", "train", "float", "half", "double"):
                value = value.func.value
            if isinstance(value, ast.Name) and value.id == name and (k := _key(target)) and k.startswith("self."):
                found.add(k)
    return found


def _is_module(call, ctx) -> bool:
    """The callee may be a module: one the bindings prove, or a name they know nothing of (a parameter);
    not a builtin, a function or class of this file, an import, or a method of the class."""
    func = call.func
    kind = ctx.kind(func)
    if kind is not None:
        return kind == "module"
    if isinstance(func, ast.Attribute):  # self.<name>: not one of the class's methods
        return ctx.klass is None or not any(
            isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == func.attr for m in ctx.klass.body
        )
    binding, _ = ctx.bindings.lookup(func.id, ctx.chain(), call.lineno)
    if binding is None:
        return False  # a builtin, or a name bound nowhere in the file
    return (
        binding.how in ("param", "assign", "item")
        and not isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
        and not ctx.qualified(func)
    )


def _ends_loop(node, ctx) -> bool:
    """The statement of ``node`` is followed in its block by ``break``/``return``/``raise``: training does
    not go on after it in this loop."""
    stmt, up = node, ctx.parent(node)
    while up is not None and not isinstance(stmt, ast.stmt):
        stmt, up = up, ctx.parent(up)
    while up is not None:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(up, field, None)
            if isinstance(block, list) and stmt in block:
                after = block[block.index(stmt) + 1 :]
                if any(isinstance(s, (ast.Break, ast.Return, ast.Raise)) for s in after):
                    return True
        if isinstance(up, (ast.For, ast.AsyncFor, ast.While, *_NESTED)):
            return False
        stmt, up = up, ctx.parent(up)
    return False


def _loops_around(node, ctx):
    child, up = node, ctx.parent(node)
    while up is not None and up is not ctx.function:
        if isinstance(up, (ast.For, ast.AsyncFor, ast.While)) and child in up.body:
            yield up
        child, up = up, ctx.parent(up)


def _left_in_eval(node, ctx):
    """``_eval_left`` of ``node``, once per node: asked of each call, and again of the calls after a
    ``model.train()`` made before a loop."""
    known = ctx.__dict__.setdefault("_ptf223_left", {})
    if id(node) not in known:
        known[id(node)] = _eval_left(node, ctx)
    return known[id(node)]


def _eval_left(node, ctx):
    """(loop, found, keys) where ``node`` puts the trained model (keys: its names) in eval mode inside a
    training loop that never puts it back (found: True, or UNSURE where a callee of unknown code also gets
    it); None otherwise."""
    if not isinstance(node, ast.Call) or ctx.function is None:
        return None
    func = node.func  # an eval(), or a call _callees can read (a name, a method through self): most calls are neither
    if not (
        _sets_eval(node) or isinstance(func, ast.Name) or getattr(getattr(func, "value", None), "id", None) == "self"
    ):
        return None
    if next(_loops_around(node, ctx), None) is None or not _own_code(node, ctx):
        return None  # in no loop of its function: the cheap question first (most calls are in none)
    chain = ctx.chain()
    if _sets_eval(node):
        keys = {_key(node.func.value)} - {None}
    else:
        callees = _callees(node, ctx, ctx.klass, chain)
        if not callees:
            return None
        keys = set()
        for fn in callees:
            inner_chain = (fn, ctx.module) if not isinstance(fn, ast.Lambda) else (fn, *chain)
            inner = _effects(fn, ctx, ctx.klass, inner_chain, (fn,))
            if inner.trains:  # the helper restores the mode (or sets train itself)
                return None
            mapping = _mapping(node, fn)
            keys |= {mapping.get(k) if not k.startswith("self.") else k for k in inner.evals} - {None}
    if not keys or _dead(node, ctx) or _ends_loop(node, ctx):
        return None
    loop = next((lp for lp in _loops_around(node, ctx) if _effects(lp, ctx, ctx.klass, chain).steps), None)
    if loop is None:
        return None
    effects = _effects(loop, ctx, ctx.klass, chain)
    if effects.trains:
        return None
    evaluated = keys & _trained_keys(loop, ctx)
    if not evaluated:
        return None
    return loop, (UNSURE if evaluated & effects.unknown else True), evaluated


def _train_before(loop, keys, ctx):
    """The ``model.train()`` of this function, on the trained model, that runs once before the loop (in no
    loop): the call to move into it."""
    return next(
        (
            n
            for n in _own(ctx.function)
            if _sets_train(n)
            and _key(n.func.value) in keys
            and n.lineno < loop.lineno
            and next(_loops_around(n, ctx), None) is None
        ),
        None,
    )


def _eval_left_on(node, ctx):
    """An eval of the trained model inside a training loop that never puts it back in train mode: reported
    at the ``model.train()`` made once before the loop, where there is one (the line to move into the loop),
    else at the eval."""
    if _sets_train(node):
        if ctx.function is None or next(_loops_around(node, ctx), None) is not None:
            return False
        found = False
        for call in _own(ctx.function):
            left = _left_in_eval(call, ctx) if isinstance(call, ast.Call) and call.lineno > node.lineno else None
            if left is not None and _train_before(left[0], left[2], ctx) is node:
                found = left[1] if found is False or found is UNSURE else found
        return found
    left = _left_in_eval(node, ctx)
    if left is None or _train_before(left[0], left[2], ctx) is not None:
        return False
    return left[1]


RULE = Rule(
    "PTF223",
    ("forgot-train-after-eval",),
    "the training loop puts the model in eval mode and nothing in the loop puts it back: from the next "
    "epoch on it trains with Dropout off and BatchNorm frozen; call model.train() at the top of every "
    "epoch (or have the evaluation restore the mode it found: model.train(was_training))",
    _eval_left_on,
    nodes=CALL,
    needs=("eval", "train("),
)
