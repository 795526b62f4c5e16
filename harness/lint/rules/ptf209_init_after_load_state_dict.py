"""What: A module initialised after load_state_dict.
Why: The init overwrites the loaded weights, and load_state_dict still reported every key matched.
Fix: initialise first, load last.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _called_name, _method
from torch_pitfalls.lint.rules.shared.flow import _before, _dead, _exclusive, _own_calls, _own_code
from torch_pitfalls.lint.walking import kept_on, walk

_INPLACE_INIT = ("normal_", "uniform_", "zero_", "fill_", "constant_", "xavier_uniform_", "kaiming_normal_")


def _initialises(fn, ctx) -> bool:
    """A function (or lambda) that writes initial values: nn.init.*, ``reset_parameters()``, or an
    in-place fill of a ``.weight``/``.bias``/``.data``."""
    for n in walk(fn):
        if not isinstance(n, ast.Call):
            continue
        q = ctx.qualified(n.func) or ""
        if q.startswith("torch.nn.init.") or q.endswith(".trunc_normal_"):
            return True
        if _method(n, "reset_parameters"):
            return True
        if _method(n, *_INPLACE_INIT) and getattr(n.func.value, "attr", None) in ("weight", "bias", "data"):
            return True
    return False


def _init_function(expr, ctx, line: int):
    """The function ``m.apply(...)`` is handed, when this module defines it: a module-level or nested
    function, ``self.<method>`` of this class, a lambda, or ``functools.partial(fn, ...)``."""
    if isinstance(expr, ast.Lambda):
        return expr
    if isinstance(expr, ast.Call) and _called_name(expr) == "partial" and expr.args:
        return _init_function(expr.args[0], ctx, line)
    if isinstance(expr, ast.Name):
        binding, _ = ctx.bindings.lookup(expr.id, ctx.chain(), line)
        value = binding.value if binding is not None else None
        return value if isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if isinstance(expr, ast.Attribute) and getattr(expr.value, "id", None) == "self" and ctx.klass is not None:
        return next((m for m in ctx.klass.body if isinstance(m, ast.FunctionDef) and m.name == expr.attr), None)
    return None


def _reinitialised(call, ctx):
    """The module ``call`` re-initialises whole: ``m.apply(init_fn)`` (init_fn initialising),
    ``m.reset_parameters()``, ``nn.init.*_(m.weight)`` of the module itself, or ``nn.init.*_(p)`` over
    ``for p in m.parameters()``. None otherwise."""
    if _method(call, "apply") and len(call.args) == 1:
        fn = _init_function(call.args[0], ctx, call.lineno)
        return call.func.value if fn is not None and _initialises(fn, ctx) else None
    if _method(call, "reset_parameters") and not call.args:
        return call.func.value
    if isinstance(call.func, ast.Attribute) and not call.args and _whole_init_method(call.func.attr, ctx):
        return call.func.value  # model.initialize(), a method of the file's model class re-drawing every weight
    q = ctx.qualified(call.func) or ""
    if q.startswith("torch.nn.init.") and q.endswith("_") and call.args:
        tensor = call.args[0]
        if isinstance(tensor, ast.Attribute) and tensor.attr in ("weight", "bias"):
            return tensor.value
        if isinstance(tensor, ast.Name):
            binding, _ = ctx.bindings.lookup(tensor.id, ctx.chain(), call.lineno)
            source = binding.value if binding is not None and binding.how == "iter" else None
            if _method(source, "parameters", "named_parameters"):
                return source.func.value
    return None


_WHOLE = ("modules", "apply", "parameters", "named_parameters", "named_modules", "children")


def _whole_init_method(name: str, ctx) -> bool:
    """Every method of this name in the file's module classes initialises the whole module: it writes initial
    values (nn.init, reset_parameters, an in-place fill) over ``self.modules()``/``self.parameters()`` or through
    ``self.apply(...)``; a method that re-initialises one part (``self.head``) is not. Each name read once per file."""
    methods, answers = kept_on(ctx.module, "_ptf209_methods", lambda module: (_module_methods(ctx), {}))
    if name not in methods:
        return False
    if name not in answers:
        answers[name] = all(_initialises_whole(m, ctx) for m in methods[name])
    return answers[name]


def _module_methods(ctx) -> dict:
    """The methods of the file's module classes, by name (their bodies are read only when a name is asked)."""
    methods: dict[str, list] = {}
    for klass in ctx.bindings.classes().values():
        if ctx.bindings.is_module_class(klass):
            for m in klass.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.args.args:
                    methods.setdefault(m.name, []).append(m)
    return methods


def _initialises_whole(m, ctx) -> bool:
    me = m.args.args[0].arg
    return _initialises(m, ctx) and any(
        _method(n, *_WHOLE) and getattr(n.func.value, "id", None) == me for n in walk(m)
    )


def _in_handler_of(a, b, ctx) -> bool:
    """``a`` in a ``try`` body and ``b`` in one of its ``except`` handlers (or the reverse): the handler
    runs when the body failed."""
    for n in walk(ctx.function):
        if isinstance(n, ast.Try):
            body = {id(x) for s in n.body for x in walk(s)}
            handlers = {id(x) for h in n.handlers for x in walk(h)}
            if (id(a) in body and id(b) in handlers) or (id(b) in body and id(a) in handlers):
                return True
    return False


def _rebound_between(root: str, a, b, ctx) -> bool:
    """The name ``root`` is assigned again between ``a`` and ``b`` (a new model)."""
    return any(
        isinstance(n, ast.Assign)
        and a.lineno < n.lineno <= b.lineno
        and any(isinstance(x, ast.Name) and x.id == root for t in n.targets for x in walk(t))
        for n in walk(ctx.function)
    )


def _init_after_load(node, ctx) -> bool:
    """In one function, ``m.load_state_dict(...)`` and then ``m.apply(init_weights)`` (an init function of
    this module), ``m.reset_parameters()`` or nn.init on the module's own weights: the
    initialisation overwrites what was just loaded, and the loaded keys still report a perfect match.
    Quiet where the two sit in different branches of an if (load or initialise), in a try and its
    except, or where the init touches only a part of the module (a new head, re-initialised on
    purpose). The fix: initialise first, load last."""
    if not isinstance(node, ast.Call) or ctx.function is None:
        return False
    module = _reinitialised(node, ctx)
    if module is None or not _own_code(node, ctx) or _dead(node, ctx):
        return False
    text = ast.unparse(module)
    root = next((n.id for n in walk(module) if isinstance(n, ast.Name)), None)
    for load in _own_calls(ctx, "load_state_dict"):
        if not (ast.unparse(load.func.value) == text and _before(load, node)):
            continue
        if _exclusive(load, node, ctx.function) or _in_handler_of(load, node, ctx):
            continue
        if root is not None and _rebound_between(root, load, node, ctx):
            continue
        return True
    return False


RULE = Rule(
    "PTF209",
    ("init-after-load-state-dict",),
    "the module is initialised after load_state_dict: the init overwrites the loaded weights (and "
    "load_state_dict still reported every key matched); initialise first, load last",
    _init_after_load,
    nodes=CALL,
)
