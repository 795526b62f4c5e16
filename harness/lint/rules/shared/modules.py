"""nn.Module classes as several rules read them: a module's own method, what runs while it is
built, the layers that hold no state."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import MODULE_SELF_METHODS, returned_values
from torch_pitfalls.lint.rules.base import _const, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _site_args, context_at
from torch_pitfalls.lint.walking import kept_on, walk


def _module_method(ctx) -> bool:
    """The code is a method of an nn.Module subclass (``forward`` or a helper it calls)."""
    return (
        ctx.klass is not None
        and isinstance(ctx.function, (ast.FunctionDef, ast.AsyncFunctionDef))
        and ctx.function in ctx.klass.body
        and ctx.bindings.is_module_class(ctx.klass)
        and not any(getattr(d, "id", None) == "staticmethod" for d in ctx.function.decorator_list)
    )


# modules without parameters or buffers: the same instance twice shares nothing that matters
_STATELESS = frozenset(
    """ReLU ReLU6 GELU SiLU Tanh Sigmoid LeakyReLU ELU SELU CELU Mish Hardswish Hardsigmoid Hardtanh
Softplus Softsign Softmax LogSoftmax Identity Dropout Dropout1d Dropout2d Dropout3d AlphaDropout MaxPool1d MaxPool2d
MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d
AdaptiveMaxPool2d AdaptiveMaxPool3d Flatten Unflatten Upsample PixelShuffle PixelUnshuffle ZeroPad2d ReflectionPad2d
ReplicationPad2d ConstantPad2d Tanhshrink Softshrink Hardshrink GLU Threshold""".split()
)


def _construction(klass) -> set[str]:
    """``__init__`` and the methods it calls on ``self``: what has run before any other method."""
    init = next((m for m in klass.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
    if init is None:
        return set()
    return {"__init__"} | {
        n.func.attr
        for n in walk(init)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and getattr(n.func.value, "id", None) == "self"
    }


def _sets_eval(call) -> bool:
    """``x.eval()`` or ``x.train(False)``."""
    if _method(call, "eval") and not call.args and not call.keywords:
        return True
    if _method(call, "train"):
        mode = call.args[0] if call.args else _kw(call, "mode")
        return _const(mode, False)
    return False


def _by_base_name(tree) -> dict:
    """Base name -> the classes of the file that name it among their bases."""
    found: dict = {}
    for n in walk(tree):
        if isinstance(n, ast.ClassDef):
            for base in n.bases:
                name = getattr(base, "id", getattr(base, "attr", None))
                if name:
                    found.setdefault(name, []).append(n)
    return found


def subclasses(klass, ctx) -> list:
    """The classes of the file that derive from ``klass``, directly or through one another (by base name)."""
    by_base, out, todo = kept_on(ctx.module, "_subclasses_by_base", _by_base_name), [], [klass]
    while todo:
        k = todo.pop()
        for sub in by_base.get(k.name, ()):
            if sub not in out and sub is not klass:
                out.append(sub)
                todo.append(sub)
    return out


def built_here(classes, ctx) -> bool:
    """The file names one of these module classes outside their own bodies (``Net()``, ``fit(Net)``): it
    builds a model of them, where what it then does to the model (train it, move it) can be read."""
    names = {k.name for k in classes}

    def inside(tree) -> frozenset:
        return frozenset(id(n) for k in walk(tree) if isinstance(k, ast.ClassDef) for n in walk(k))

    bodies = kept_on(ctx.module, "_class_body_nodes", inside)
    return any(
        isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) and id(n) not in bodies
        for n in walk(ctx.module)
    )


def with_holders(classes, ctx, depth: int = 3) -> list:
    """These module classes and the module classes of the file that build one of them as a part (a
    ``RunningNorm`` made in a policy's ``__init__``), and theirs, a few levels up: a model of any of them
    holds one."""
    found = list(classes)
    for _ in range(depth):
        names = {k.name for k in found}
        more = [
            k
            for k in ctx.bindings.classes().values()
            if k not in found
            and ctx.bindings.is_module_class(k)
            and any(isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) for n in walk(k))
        ]
        if not more:
            break
        found += more
    return found


def file_calls(ctx, *methods: str) -> bool:
    """Anything in the file calls one of these methods (``backward``, ``to``): kept per file and name."""
    return any(kept_on(ctx.module, f"_calls_{m}", lambda t, m=m: any(_method(n, m) for n in walk(t))) for m in methods)


def constructions(expr, chain, line, klass, ctx, through: tuple = (), depth: int = 0) -> list | None:
    """(call, its scopes) for every place the module ``expr`` holds may have been built: the calls at the
    end of names, ``self.`` attributes, moves (``.to(device)``, ``.train()``), parameters (the module's own
    calls of the function), tuple elements and returns of functions of this module, and the first argument of the
    wrappers named in ``through`` (``torch.compile(model)``); None where one cannot be told. What each call builds
    is the asker's to judge (an nn.LSTM, a torchvision builder, a class of the file)."""
    if depth > 8:
        return None
    bindings = ctx.bindings
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in MODULE_SELF_METHODS:
            return constructions(expr.func.value, chain, line, klass, ctx, through, depth + 1)
        if through and expr.args and ctx.qualified(expr.func) in through:
            return constructions(expr.args[0], chain, line, klass, ctx, through, depth + 1)
        fn = bindings._local_function(expr, chain, line)
        return _returned_constructions(fn, None, ctx, through, depth) if fn is not None else [(expr, chain)]
    if isinstance(expr, ast.Attribute) and getattr(expr.value, "id", None) == "self" and klass is not None:
        return _every(
            [
                (value, (method, ctx.module), at + 1, klass)
                for method, value, at in bindings.self_attributes(klass).get(expr.attr) or []
            ],
            ctx,
            through,
            depth,
        )
    if not isinstance(expr, ast.Name):
        return None
    binding, where = bindings.lookup(expr.id, chain, line)
    if binding is None:
        return None
    if binding.how == "assign":
        return constructions(binding.value, where, binding.line, klass, ctx, through, depth + 1)
    if binding.how == "item" and binding.index is not None:
        fn = bindings._local_function(binding.value, where, binding.line)
        return _returned_constructions(fn, binding.index, ctx, through, depth) if fn is not None else None
    if binding.how == "param":
        sites = _site_args(where[0], expr.id, bindings) or []
        return _every([(value, caller, at, None) for value, caller, at in sites], ctx, through, depth)
    return None


def _every(sources, ctx, through, depth) -> list | None:
    """The constructions of every (expression, scopes, line, class); None where one is unknown or none given."""
    out = []
    for value, chain, line, klass in sources:
        found = constructions(value, chain, line, klass, ctx, through, depth + 1)
        if found is None:
            return None
        out += found
    return out or None


def _returned_constructions(fn, index, ctx, through, depth) -> list | None:
    returns = returned_values(fn, index) or []
    return _every([(value, (fn, ctx.module), at + 1, None) for value, at in returns], ctx, through, depth)


def forward_arguments(klass, index: int, ctx) -> list:
    """(argument, a context at the call, line) for each call in the file of a model built from module class
    ``klass`` (``model(x)`` where ``model`` holds ``ActivityGRU(...)``, through names, moves and parameters):
    what its ``forward`` receives as its ``index``-th argument after ``self``; calls with ``*args`` are left out."""
    out = []
    for call in walk(ctx.module):
        if not (isinstance(call, ast.Call) and isinstance(call.func, (ast.Name, ast.Attribute))):
            continue
        if ctx.qualified(call.func) or len(call.args) <= index or any(isinstance(a, ast.Starred) for a in call.args):
            continue
        at = context_at(call, ctx)
        if at is None:
            continue
        built = constructions(call.func, at.chain(), call.lineno, at.klass, at)
        if built and all(getattr(made.func, "id", None) == klass.name for made, _chain in built):
            out.append((call.args[index], at, call.lineno))
    return out
