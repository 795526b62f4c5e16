"""nn.Module classes as several rules read them: a module's own method, what runs while it is
built, the layers that hold no state."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import _const, _kw, _method
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


def file_calls(ctx, *methods: str) -> bool:
    """Anything in the file calls one of these methods (``backward``, ``to``): kept per file and name."""
    return any(kept_on(ctx.module, f"_calls_{m}", lambda t, m=m: any(_method(n, m) for n in walk(t))) for m in methods)
