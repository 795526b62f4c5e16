"""What: a torchvision pipeline holding ``ToTensor()`` applied to an image that is already a tensor
(``torchvision.io.read_image``, ``decode_image``, a tensor the file made).
Why: ``ToTensor`` converts a PIL image or an ndarray; given a tensor it raises "TypeError: pic should be PIL Image
or ndarray" at the first item.
Fix: drop ``ToTensor`` for tensor input; convert the dtype instead (``ConvertImageDtype(torch.float)``, or v2's
``ToDtype(torch.float32, scale=True)``), or read the image with PIL.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import CALL, Rule

_TO_TENSOR = ("torchvision.transforms.ToTensor", "torchvision.transforms.transforms.ToTensor")
_COMPOSE = ("torchvision.transforms.Compose", "torchvision.transforms.transforms.Compose")
_TENSOR_READERS = (
    "torchvision.io.read_image",
    "torchvision.io.decode_image",
    "torchvision.io.decode_jpeg",
    "torchvision.io.decode_png",
    "torchvision.io.image.read_image",
    "torchvision.io.image.decode_image",
)


def _converts_with_to_tensor(value, ctx, chain, line: int, depth: int = 0) -> bool:
    """Every value ``value`` may hold is a ``ToTensor()`` or a ``Compose([...])`` holding one: through names,
    ``self.`` attributes, parameters (what the file's calls pass) and the file's functions' returns."""
    if depth > 6 or value is None:
        return False
    found = _values(value, ctx, chain, line)
    return bool(found) and all(
        _is_pipeline_with_to_tensor(v, ctx)
        if isinstance(v, ast.Call) and ctx.qualified(v.func) in _COMPOSE + _TO_TENSOR
        else _converts_with_to_tensor(v, ctx, c, at, depth + 1)
        for v, c, at in found
    )


def _values(value, ctx, chain, line: int) -> list:
    """[(expression, scopes, line)] that ``value`` may stand for, one step back; [] where not known."""
    if isinstance(value, ast.Call):
        if ctx.qualified(value.func) in _COMPOSE + _TO_TENSOR:
            return [(value, chain, line)]
        fn = ctx.bindings._local_function(value, chain, line)
        returned = returned_values(fn) if fn is not None else None
        return [(v, (fn, ctx.module), at + 1) for v, at in returned or ()]
    if isinstance(value, ast.Attribute) and getattr(value.value, "id", None) == "self" and chain:
        klass = ctx.bindings._owner_class(chain[0]) if isinstance(chain[0], ast.FunctionDef) else None
        assigned = ctx.bindings.self_attributes(klass).get(value.attr) if klass is not None else None
        return [(v, (m, ctx.module), at + 1) for m, v, at in assigned or ()]
    if isinstance(value, ast.Name):
        binding, where = ctx.bindings.lookup(value.id, chain, line)
        if binding is None:
            return []
        if binding.how == "assign":
            return [(binding.value, where, binding.line + 1)]
        if binding.how == "param":
            return [(v, c, at) for v, c, at, _ in ctx.bindings.passed(where[0], value.id) or ()]
    return []


def _is_pipeline_with_to_tensor(call, ctx) -> bool:
    if ctx.qualified(call.func) in _TO_TENSOR:
        return True
    steps = call.args[0] if call.args else None
    return isinstance(steps, (ast.List, ast.Tuple)) and any(
        isinstance(s, ast.Call) and ctx.qualified(s.func) in _TO_TENSOR for s in steps.elts
    )


def _a_tensor_image(expr, ctx) -> bool:
    """An image already a tensor: read by ``torchvision.io`` (here or through a name), or a tensor by the bindings."""
    if isinstance(expr, ast.Name) and ctx.function is not None:
        value = ctx.bindings.value_of(expr.id, ctx.chain(), expr.lineno)
        if isinstance(value, ast.Call) and ctx.qualified(value.func) in _TENSOR_READERS:
            return True
    if isinstance(expr, ast.Call) and ctx.qualified(expr.func) in _TENSOR_READERS:
        return True
    return ctx.kind(expr) == "tensor"


def _to_tensor_on_a_tensor(node, ctx) -> bool:
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
        return False
    if not _a_tensor_image(node.args[0], ctx):
        return False
    return _converts_with_to_tensor(node.func, ctx, ctx.chain(), node.lineno)


RULE = Rule(
    id="PTF284",
    cases=("transforms-expect-pil",),
    message=(
        "this torchvision pipeline holds ToTensor(), which takes a PIL image or an ndarray, and is given an image "
        "that is already a tensor: TypeError 'pic should be PIL Image or ndarray'; convert the dtype instead "
        "(ConvertImageDtype(torch.float), v2.ToDtype(torch.float32, scale=True))"
    ),
    test=_to_tensor_on_a_tensor,
    nodes=CALL,
    needs=("ToTensor",),
)
