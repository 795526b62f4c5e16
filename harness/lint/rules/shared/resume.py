"""Training resumed from a checkpoint, as the resume rules read it: a model's load_state_dict that reads
an epoch or step counter back (or is handed an optimizer or scheduler it never uses), and whether anything
in the file restores the optimizer's or scheduler's own state."""

from __future__ import annotations

import ast
import re

from torch_pitfalls.lint.bindings import Held, arguments
from torch_pitfalls.lint.rules.base import UNSURE, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _scopes_of
from torch_pitfalls.lint.walking import walk

_COUNTER_KEY = re.compile(r"epoch|step|iter", re.I)
_RESTORE_CALL = re.compile(r"load|restore|resume", re.I)
_MODEL_NAME = re.compile(r"model|net|encoder|decoder|backbone|ema|module|policy|critic|actor|generator", re.I)


def _name(node) -> str:
    return getattr(node, "id", getattr(node, "attr", "")) or ""


def _scope_of(node, ctx):
    """The innermost function or lambda ``node`` is in (ctx.function does not stop at a lambda)."""
    up = ctx.parent(node)
    while up is not None:
        if isinstance(up, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            return up
        up = ctx.parent(up)
    return ctx.module


def _synthetic(ctx, name: str, attr: str | None = None):
    """A ``name`` (or ``self.attr``) node to ask the bindings about, kept as long as the tree: the bindings
    cache what a node holds by its id, which a freed node would hand on to the next one."""
    kept = ctx.bindings.__dict__.setdefault("_ptf250_nodes", {})
    key = (name, attr)
    if key not in kept:
        node = ast.Name(id=name, ctx=ast.Load())
        if attr is not None:
            node = ast.Attribute(value=node, attr=attr, ctx=ast.Load())
        kept[key] = node
    return kept[key]


def _params(fn) -> list[str]:
    a = fn.args
    return [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]


def _chain(fn, ctx):
    """The scopes a name in ``fn`` is looked up in, innermost first."""
    return (fn, *_scopes_of(fn, ctx)) if fn is not ctx.module else (fn,)


def _klass_of(fn, ctx):
    return next((c for c in ctx.bindings.classes().values() if fn in c.body), None)


def _param_held(fn, param: str, ctx) -> Held | None:
    """What a parameter of ``fn`` (a function or a lambda) holds: from the module's calls of it, or from
    the calls made through the parameter of a module function it is handed to (``run(save, restore)``
    ... ``restore(model, opt, ckpt)``; ``run(restore=lambda model, opt, ckpt: ...)``)."""
    b = ctx.bindings
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        held = b.held(_synthetic(ctx, param), _chain(fn, ctx), fn.lineno + 1, _klass_of(fn, ctx))
        if held is not None:
            return held
    names = _params(fn)
    if param not in names:
        return None
    index = names.index(param) - (1 if names and names[0] in ("self", "cls") else 0)
    found = set()
    for call, _site_chain, _site_class, slot in _handed_to(fn, ctx):
        callee = b.module_function(_name(call.func))
        if callee is None:
            continue
        for inner, inner_chain, inner_klass in b.call_sites(slot):
            if not inner_chain or inner_chain[0] is not callee:
                continue
            if index < len(inner.args) and not any(isinstance(a, ast.Starred) for a in inner.args[: index + 1]):
                found.add(b.held(inner.args[index], inner_chain, inner.lineno, inner_klass))
            else:
                found.add(
                    next((b.held(k.value, inner_chain, inner.lineno) for k in inner.keywords if k.arg == param), None)
                )
    return found.pop() if len(found) == 1 else None


def _handed_to(fn, ctx):
    """(call, its scopes, its class, parameter name) for each call of a module function that is handed
    ``fn`` (by name, or the lambda itself) as an argument."""
    b = ctx.bindings
    b.call_sites("")  # built once
    out = []
    for name, sites in (b._calls or {}).items():
        callee = b.module_function(name)
        if callee is None:
            continue
        for call, chain, klass in sites:
            for param, value in arguments(call, callee).items():
                if value is fn or (
                    isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and isinstance(value, ast.Name)
                    and value.id == fn.name
                ):
                    out.append((call, chain, klass, param))
    return out


def _held_in(node, fn, ctx, line: int | None = None) -> Held | None:
    """What an expression of ``fn`` holds: a parameter through its callers, else the bindings."""
    if isinstance(node, ast.Name) and not isinstance(fn, ast.Module) and node.id in _params(fn):
        return _param_held(fn, node.id, ctx)
    if isinstance(fn, ast.Lambda):
        return None
    klass = _klass_of(fn, ctx) if not isinstance(fn, ast.Module) else None
    at = line if line is not None else getattr(node, "lineno", 1 << 30)
    return ctx.bindings.held(node, _chain(fn, ctx) if not isinstance(fn, ast.Module) else (fn,), at, klass)


def _stateful(held: Held, kind: str):
    """True where the optimizer (or scheduler) carries state that a resume must restore, False where it
    carries none, UNSURE where its class is not known."""
    what = held.what or ""
    if not what:
        return UNSURE
    last = what.rsplit(".", 1)[-1]
    if kind == "scheduler":
        return last != "ReduceLROnPlateau"  # its rate lives in the optimizer's param_groups
    return last not in ("SGD",) or held is _MOMENTUM


_MOMENTUM = Held("optimizer", "torch.optim.SGD+momentum")


def _refine(held: Held, node, fn, ctx) -> Held:
    """An SGD built here with a non-zero momentum is stateful."""
    ctor = node
    if isinstance(node, ast.Name) and not isinstance(fn, ast.Lambda):
        ctor = ctx.bindings.value_of(node.id, _chain(fn, ctx) if not isinstance(fn, ast.Module) else (fn,), 1 << 30)
    if isinstance(ctor, ast.Call) and (held.what or "").endswith(".SGD"):
        m = _kw(ctor, "momentum")
        if m is not None and not (isinstance(m, ast.Constant) and not m.value):
            return _MOMENTUM
    return held


def _candidates(fn, kind: str, ctx):
    """(expression, what it holds) for each optimizer (or scheduler) ``fn`` has: its parameters, the
    names it binds, and for a method the ``self.`` attributes of its class."""
    out = []
    if not isinstance(fn, ast.Module):
        for p in _params(fn):
            held = _param_held(fn, p, ctx)
            if held is not None and held.kind == kind:
                out.append((_synthetic(ctx, p), held, True))
    if not isinstance(fn, ast.Lambda):
        scope = ctx.bindings.scope(fn)
        for name, bindings in scope.names.items():
            if any(b.how == "param" for b in bindings):
                continue
            b = bindings[-1]
            node = _synthetic(ctx, name)
            held = _held_in(node, fn, ctx, max(b.line, getattr(b.value, "end_lineno", 0) or 0) + 1)
            if held is not None and held.kind == kind:
                out.append((node, _refine(held, node, fn, ctx) if kind == "optimizer" else held, False))
        klass = _klass_of(fn, ctx) if not isinstance(fn, ast.Module) else None
        if klass is not None:
            for attr in ctx.bindings.self_attributes(klass):
                node = _synthetic(ctx, "self", attr)
                held = ctx.bindings.held(node, _chain(fn, ctx), 1 << 30, klass)
                if held is not None and held.kind == kind:
                    out.append((node, held, False))
    return out


def _checkpoint_roots(arg, fn, ctx) -> set[str]:
    """The names the loaded state comes from (``ckpt`` of ``ckpt["model"]``), followed one step. What a
    ``torch.load(...)`` is handed (its path, ``cfg["teacher_ckpt"]``) is where the file is, not a checkpoint."""
    roots = _state_names(arg, ctx)
    if not isinstance(fn, ast.Lambda):
        chain = _chain(fn, ctx) if not isinstance(fn, ast.Module) else (fn,)
        for name in list(roots):
            value = ctx.bindings.value_of(name, chain, getattr(arg, "lineno", 1 << 30))
            if value is not None:
                roots |= _state_names(value, ctx)
    return roots


def _state_names(expr, ctx) -> set[str]:
    """The names in ``expr`` outside the arguments of a load (``torch.load(path)``: ``path`` is no state)."""
    inside = {id(n) for call in walk(expr) if _is_load(call, ctx) for a in call.args for n in walk(a)}
    inside |= {id(n) for call in walk(expr) if _is_load(call, ctx) for k in call.keywords for n in walk(k.value)}
    return {n.id for n in walk(expr) if isinstance(n, ast.Name) and id(n) not in inside}


def _from_a_state_dict(arg, fn, ctx) -> bool:
    """The state loaded is another module's live state (``model.load_state_dict(best_state)`` of an
    early stop, ``target.load_state_dict(online.state_dict())``), not a checkpoint's."""
    exprs = [arg]
    if isinstance(arg, ast.Name) and not isinstance(fn, ast.Lambda):
        chain = _chain(fn, ctx) if not isinstance(fn, ast.Module) else (fn,)
        for b in ctx.bindings.scope(chain[0]).names.get(arg.id, []):
            if b.value is not None:
                exprs.append(b.value)
    return any(
        _method(n, "state_dict") or (isinstance(n, ast.Name) and n.id == "None") or _name(n) == "deepcopy"
        for e in exprs
        for n in walk(e)
    ) and not any(_is_load(n, ctx) for e in exprs for n in walk(e))


def _is_load(node, ctx) -> bool:
    return isinstance(node, ast.Call) and (ctx.qualified(node.func) or "") in ("torch.load",)


def _resumes_counter(fn, roots: set[str], ctx) -> bool:
    """``fn`` reads an epoch or step counter out of the checkpoint (``start_epoch = ckpt["epoch"] + 1``)."""
    for n in walk(fn):
        key = None
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str):
            key, base = n.slice.value, n.value
        elif _method(n, "get") and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
            key, base = n.args[0].value, n.func.value
        if key is not None and _COUNTER_KEY.search(key) and isinstance(base, ast.Name) and base.id in roots:
            if not _only_shown(n, ctx):
                return True
    return False


_SHOWN_BY = ("print", "info", "debug", "warning", "log", "format", "write", "set_description", "set_postfix")


def _only_shown(node, ctx) -> bool:
    """The counter is only printed or logged (``print(f"... step {ckpt['step']}")``): read, not resumed from."""
    parent = ctx.parent(node)
    while isinstance(parent, (ast.FormattedValue, ast.JoinedStr)) or (
        isinstance(parent, ast.Call) and _name(parent.func) in ("str", "repr")
    ):
        parent = ctx.parent(parent)
    return isinstance(parent, ast.Call) and _name(parent.func) in _SHOWN_BY


def _used(fn, name: str) -> bool:
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    return any(isinstance(n, ast.Name) and n.id == name for stmt in body for n in walk(stmt))


def _restored_in_file(kind: str, ctx, fn) -> bool:
    """A ``load_state_dict`` somewhere in the file that may restore an optimizer (scheduler): on one, on
    a name that says so, or on an object of unknown kind that is not named as a model; or the state
    handed to a restoring helper (``load_checkpoint(path, model, optimizer)``, ``accelerator.load_state``)
    other than ``fn`` itself (called by its name, or through the parameter it is handed to)."""
    itself = {slot for _c, _k, _kl, slot in _handed_to(fn, ctx)} | {getattr(fn, "name", "")}
    found = False
    for n in walk(ctx.module):
        if not isinstance(n, ast.Call):
            continue
        if _method(n, "load_state_dict"):
            receiver = n.func.value
            fn = _scope_of(n, ctx)
            held = _held_in(receiver, fn, ctx) if isinstance(receiver, (ast.Name, ast.Attribute)) else None
            words = _name(receiver).lower()
            if held is not None:
                found = held.kind == kind
            elif kind == "optimizer":
                found = "opt" in words or not (_MODEL_NAME.search(words) or "sched" in words)
            else:
                found = "sched" in words or not (_MODEL_NAME.search(words) or "opt" in words)
        elif _method(n, "load_state", "load_checkpoint", "resume_from_checkpoint"):
            found = True
        elif (
            _RESTORE_CALL.search(_name(n.func))
            and not _method(n, "load_state_dict", "load")
            and _name(n.func) not in itself
        ):
            found = any(
                (h := _held_in(a, _scope_of(n, ctx), ctx)) is not None and h.kind == kind
                for a in [*n.args, *(k.value for k in n.keywords)]
                if isinstance(a, (ast.Name, ast.Attribute))
            ) or any(kind[:3] in _name(a).lower() for a in [*n.args, *(k.value for k in n.keywords)])
        if found:
            break
    return found


def _restores_from(kind: str, roots: set[str], fn) -> bool:
    """``fn`` reads the optimizer's (scheduler's) entry of the checkpoint (``ckpt["optimizer"]``,
    ``ckpt.get("optim_state")``); the same key written into the dict a save builds is no read."""
    word = "opt" if kind == "optimizer" else "sched"

    def names_it(key) -> bool:
        return isinstance(key, ast.Constant) and isinstance(key.value, str) and word in key.value.lower()

    return any(
        (isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and names_it(n.slice))
        or (_method(n, "get", "pop") and bool(n.args) and names_it(n.args[0]))
        for n in walk(fn)
    )


def resumes_without(node, ctx, kind: str):
    """``model.load_state_dict(state)`` in a function that resumes training without restoring an optimizer
    (kind "optimizer") or scheduler (kind "scheduler") it has; or the call of such a restoring helper of the
    module, which reads the counter back, by a function whose own optimizer (scheduler) it is not handed
    (``start_epoch, best = load_checkpoint(path, model, optimizer)`` in a ``main`` that builds the scheduler):
    reported there, at the resume the caller makes."""
    if _method(node, "load_state_dict"):
        resume = _resume(node, ctx)
        if resume is None:
            return False
        fn, roots, counter = resume
        return _missing([(*c, fn) for c in _candidates(fn, kind, ctx)], kind, counter, fn, roots, ctx)
    helper = ctx.bindings.module_function(node.func.id) if isinstance(node.func, ast.Name) else None
    caller = _scope_of(node, ctx)
    if helper is None or helper is caller or not isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for load in walk(helper):
        resume = _resume(load, ctx) if _method(load, "load_state_dict") else None
        if resume is None or not resume[2]:
            continue  # the helper must read the epoch back: the caller goes on from it
        given = {
            n.id for a in [*node.args, *(k.value for k in node.keywords)] for n in walk(a) if isinstance(n, ast.Name)
        }
        owned = [(e, h, False, caller) for e, h, _p in _candidates(caller, kind, ctx) if _name(e) not in given]
        found = _missing(owned, kind, True, helper, resume[1], ctx)
        if found:
            return found
    return False


def _resume(node, ctx):
    """(function, checkpoint roots, whether it reads a counter back) for ``model.load_state_dict(state)``
    of a checkpoint's state (not another module's live one); None otherwise."""
    if not (_method(node, "load_state_dict") and node.args and isinstance(node.func.value, (ast.Name, ast.Attribute))):
        return None
    fn = _scope_of(node, ctx)
    model = _held_in(node.func.value, fn, ctx)
    if model is None or model.kind != "module":
        return None
    arg = node.args[0]
    if _from_a_state_dict(arg, fn, ctx):
        return None
    roots = _checkpoint_roots(arg, fn, ctx)
    return fn, roots, _resumes_counter(fn, roots, ctx)


def _missing(candidates, kind: str, counter: bool, fn, roots, ctx):
    """True (or UNSURE) where a stateful optimizer (scheduler) among ``candidates`` goes on training after
    the resume and nothing restores its state."""
    found = False
    for expr, held, is_param, where in candidates:
        if not (counter or (is_param and not _used(where, expr.id))):
            continue  # a restore function that is handed it and ignores it, or a resumed epoch counter
        if kind == "scheduler" and _positioned(expr, where, ctx):
            continue
        stateful = _stateful(held, kind)
        if stateful is False:
            continue
        found = stateful if found is False or found is UNSURE else found
        if found is True:
            break
    if found is False:
        return False
    if _restores_from(kind, roots, fn) or _restored_in_file(kind, ctx, fn):
        return False
    return found


def _positioned(expr, fn, ctx) -> bool:
    """The scheduler is built at the resumed position (``last_epoch=start_epoch - 1``) or stepped to it."""
    if isinstance(expr, ast.Name) and not isinstance(fn, ast.Lambda):
        value = ctx.bindings.value_of(expr.id, _chain(fn, ctx) if not isinstance(fn, ast.Module) else (fn,), 1 << 30)
        if isinstance(value, ast.Call) and (
            _kw(value, "last_epoch") is not None or _kw(value, "last_step") is not None
        ):
            return True
    return any(_method(n, "step") and _name(n.func.value) == _name(expr) and (n.args or n.keywords) for n in walk(fn))
