"""What: A tensor made on the CPU by a factory and then moved to the device (torch.zeros(n).cuda()).
Why: It is built on the CPU and copied over. The harm is time, so the rule is quiet in test code.
Fix: create it there with device=....
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _kw, _method

_DETERMINISTIC_FACTORIES = ("zeros", "ones", "empty", "full", "arange", "eye", "linspace", "logspace")


_RANDOM_FACTORIES = ("rand", "randn", "randint", "randperm")


_DTYPE_WORDS = (
    "float",
    "double",
    "half",
    "int",
    "long",
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "bfloat16",
    "complex64",
    "complex128",
)


def _moves_device(call, ctx) -> bool:
    """``.cuda()``, or ``.to(x)`` whose first argument is a device, not a dtype."""
    if _method(call, "cuda"):
        return True
    if not _method(call, "to") or not (call.args or _kw(call, "device") is not None):
        return False
    if _kw(call, "device") is not None:
        return True
    first = call.args[0]
    q = ctx.qualified(first) or ""
    if q.startswith("torch.") and q.split(".")[-1] in _DTYPE_WORDS:
        return False
    text = ast.unparse(first).lower()
    return "device" in text or "cuda" in text or text in ("dev", "gpu")


def _cpu_factory_moved(node, ctx) -> bool:
    """``torch.zeros(...).to(device)``: made on the CPU, then copied; pass ``device=`` to the factory."""
    if not (_moves_device(node, ctx) and isinstance(node.func.value, ast.Call)):
        return False
    made = node.func.value
    q = ctx.qualified(made.func) or ""
    # a random factory made on the CPU on purpose draws from a CPU generator= it is handed
    factories = _DETERMINISTIC_FACTORIES + (() if _kw(made, "generator") is not None else _RANDOM_FACTORIES)
    return (
        q.count(".") == 1
        and q.startswith("torch.")
        and q.split(".")[1] in factories
        and _kw(made, "device") is None
        and not any(k.arg is None for k in made.keywords)
    )


RULE = Rule(
    "PTF020",
    ("cpu-tensor-moved-to-cuda",),
    "the tensor is made on the CPU and then copied to the device; create it there with device=...",
    _cpu_factory_moved,
    nodes=CALL,
    harm="speed",
)
