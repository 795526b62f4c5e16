"""What every rule is made of: the ``Rule`` record and the small matchers and name lists the
rules share (which call, which method, which keyword, which qualified name)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable

from torch_pitfalls.lint.engine import Context


@dataclass(frozen=True)
class Rule:
    id: str
    cases: tuple[str, ...]  # the cases whose broken code it flags (the first is its page)
    message: str  # what goes wrong, and the fix
    test: Callable[[ast.AST, Context], bool]
    nodes: type | tuple[type, ...] = ast.AST  # the node types it looks at (the engine offers it only those)
    # what goes wrong: "correctness" (a wrong result, an error, a warning) or "speed" (the same result,
    # slower); a speed rule is quiet in test code unless asked (harness/lint/scope.py)
    harm: str = "correctness"

    def matches(self, node: ast.AST, ctx: Context) -> bool:
        try:
            return bool(self.test(node, ctx))
        except (AttributeError, IndexError, TypeError, ValueError):  # an unusual shape of code: no finding
            return False

    @property
    def case(self) -> str:
        return self.cases[0]


# --- small matchers -----------------------------------------------------------------------
def _kw(call: ast.Call, name: str):
    return next((k.value for k in call.keywords if k.arg == name), None)


def _has_kw(call: ast.Call, name: str) -> bool:
    return any(k.arg == name for k in call.keywords) or any(k.arg is None for k in call.keywords)  # **kwargs: unknown


def _is_call_to(node, ctx, *names) -> bool:
    return isinstance(node, ast.Call) and ctx.qualified(node.func) in names


def _method(node, *names) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names


def _use_of(node, ctx, *names) -> bool:
    """A reference to one of these qualified names, outside a feature or version guard."""
    return (
        isinstance(node, (ast.Attribute, ast.Name))
        and isinstance(node.ctx, ast.Load)
        and not ctx.guarded
        and ctx.qualified(node) in names
    )


def _const(node, value) -> bool:
    return isinstance(node, ast.Constant) and node.value == value and type(node.value) is type(value)


def _called_name(node) -> str:
    """The last name of what a call calls: ``F.log_softmax`` -> ``log_softmax``."""
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Call):  # nn.Softmax(dim=1)(x)
            return _called_name(f)
        return getattr(f, "attr", getattr(f, "id", ""))
    return ""


def _in_function_calls(ctx, method: str):
    return [n for n in ast.walk(ctx.function) if _method(n, method)] if ctx.function is not None else []


TORCH_INIT_OLD = tuple(
    f"torch.nn.init.{n}"
    for n in (
        "uniform",
        "normal",
        "constant",
        "xavier_uniform",
        "xavier_normal",
        "kaiming_uniform",
        "kaiming_normal",
        "orthogonal",
        "sparse",
    )
)
LEGACY_TYPES = tuple(
    f"torch.{t}"
    for t in (
        "FloatTensor",
        "DoubleTensor",
        "HalfTensor",
        "LongTensor",
        "IntTensor",
        "ShortTensor",
        "ByteTensor",
        "CharTensor",
        "BoolTensor",
    )
)
SCHEDULERS = tuple(
    f"torch.optim.lr_scheduler.{s}"
    for s in (
        "StepLR",
        "MultiStepLR",
        "ExponentialLR",
        "CosineAnnealingLR",
        "ReduceLROnPlateau",
        "CyclicLR",
        "OneCycleLR",
        "CosineAnnealingWarmRestarts",
        "LambdaLR",
        "MultiplicativeLR",
        "LinearLR",
        "ConstantLR",
        "PolynomialLR",
        "SequentialLR",
        "ChainedScheduler",
    )
)
INTERP = ("torch.nn.functional.interpolate", "torch.nn.functional.upsample", "torch.nn.Upsample")
DROPOUTS = tuple(
    f"torch.nn.functional.{d}"
    for d in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")
)
SOFTMAXES = ("softmax", "Softmax", "sigmoid")
FUNCTORCH = tuple(
    f"functorch.{f}"
    for f in (
        "vmap",
        "grad",
        "grad_and_value",
        "vjp",
        "jvp",
        "jacrev",
        "jacfwd",
        "hessian",
        "functionalize",
        "make_functional",
        "make_functional_with_buffers",
        "combine_state_for_ensemble",
    )
)
AO_QUANTIZATION = tuple(
    f"{m}.{f}"
    for m in (
        "torch.ao.quantization",
        "torch.quantization",
        "torch.ao.quantization.quantize",
        "torch.quantization.quantize",
    )
    for f in ("quantize_dynamic", "quantize", "quantize_qat", "prepare", "prepare_qat", "convert")
) + tuple(
    f"{m}.{f}"
    for m in ("torch.ao.quantization.quantize_fx", "torch.quantization.quantize_fx")
    for f in ("prepare_fx", "prepare_qat_fx", "convert_fx")
)
CALL = ast.Call
LOOPS = (ast.For, ast.While)
IMPORTS = (ast.Import, ast.ImportFrom)
REFS = (ast.Attribute, ast.Name)  # a reference to a qualified name
