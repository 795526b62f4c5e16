"""What every rule is made of: the ``Rule`` record and the small matchers and name lists the
rules share (which call, which method, which keyword, which qualified name)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable

from torch_pitfalls.lint.engine import Context


class _Unsure:
    """A check's third answer: the pattern is there, on an object the bindings cannot prove to be
    torch's (a method name on a receiver of unknown type). False in a boolean test, so ``a and
    unsure`` stays quiet; reported only with ``--preview``, labelled (engine.py). As ``a and b``
    returns the first falsy operand, a check puts the part that may be UNSURE last."""

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "UNSURE"


UNSURE = _Unsure()
# what each kind of harm costs; a rule whose harm is a cost (time, memory) is quiet in test code,
# where one small run pays it once and no result changes (scope.py, --costs-in-tests)
COST_HARMS = ("speed", "memory")


@dataclass(frozen=True)
class Rule:
    id: str
    cases: tuple[str, ...]  # the cases whose broken code it flags (the first is its page)
    message: str  # what goes wrong, and the fix
    test: Callable[[ast.AST, Context], bool]
    nodes: type | tuple[type, ...] = ast.AST  # the node types it looks at (the engine offers it only those)
    # what goes wrong: "correctness" (a wrong result, an error, a warning), "speed" (the same result,
    # slower) or "memory" (the same result, more memory held); a cost is quiet in test code unless
    # asked (COST_HARMS, harness/lint/scope.py)
    harm: str = "correctness"

    def matches(self, node: ast.AST, ctx: Context):
        """True, False, or UNSURE (the pattern on an object not known to be torch's)."""
        try:
            found = self.test(node, ctx)
        except (AttributeError, IndexError, TypeError, ValueError):  # an unusual shape of code: no finding
            return False
        return found if found is UNSURE else bool(found)

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


def receiver_holds(call_or_attr, ctx, *kinds):
    """Whether the object a method is called on (or an attribute read from) holds one of ``kinds``
    (bindings.py: "tensor", "module", "optimizer", ...): True where the bindings prove it, False
    where they prove something else or it is an imported module other than torch, UNSURE where
    nothing is known (a parameter, another library's object)."""
    func = call_or_attr.func if isinstance(call_or_attr, ast.Call) else call_or_attr
    receiver = func.value
    q = ctx.qualified(receiver)
    if q is not None:
        return q.startswith("torch.") and "tensor" in kinds and q in TENSOR_NAMES_OF_TORCH
    kind = ctx.kind(receiver)
    if kind is None:
        return UNSURE
    return kind in kinds


TENSOR_NAMES_OF_TORCH = ("torch.Tensor",)  # Tensor.cholesky(x): the method through the class


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
