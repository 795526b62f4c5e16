"""What: a tensor's ``.device`` compared for equality with ``torch.device("cuda")``, the string ``"cuda"`` or a
device named by its type alone (``torch.device(t.type)``); or that index-less device compared with ``cuda:0``.
Why: a GPU tensor's device carries its index, ``cuda:0``, which is not equal to the index-less ``cuda``
(and a torch.device never equals a string): the test is False on every CUDA run.
Fix: compare types, ``x.device.type == "cuda"`` (or ``x.is_cuda``), or compare with an indexed device.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import UNSURE, Rule, receiver_holds
from torch_pitfalls.lint.rules.shared.flow import _values

_MOVES = ("to", "cuda")


def _strings(node, ctx, line: int, depth: int = 0) -> list | None:
    """The string constants an expression may hold (through names bound once, ``a if c else b``)."""
    if depth > 4:
        return None
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else None
    if isinstance(node, ast.IfExp):
        a, b = _strings(node.body, ctx, line, depth + 1), _strings(node.orelse, ctx, line, depth + 1)
        return a + b if a is not None and b is not None else None
    if isinstance(node, ast.Name) and ctx.module is not None:
        values = _values(node.id, ctx.chain(), line, ctx.bindings)
        if not values or any(isinstance(v, ast.Name) for v in values):
            return None
        out = []
        for v in values:
            found = _strings(v, ctx, line, depth + 1)
            if found is None:
                return None
            out += found
        return out
    return None


def _device_call(node, ctx) -> bool:
    return isinstance(node, ast.Call) and ctx.qualified(node.func) == "torch.device"


def _indexless(node, ctx, line: int, depth: int = 0) -> bool:
    """An expression that is (or may be, on a CUDA run) the index-less ``cuda`` device: the string
    ``"cuda"``, ``torch.device("cuda")``, ``torch.device(x.type)`` (a device named by its type), or a
    name bound to one."""
    if depth > 4:
        return False
    if isinstance(node, ast.Name) and ctx.module is not None:
        values = _values(node.id, ctx.chain(), line, ctx.bindings)
        if values and not any(isinstance(v, ast.Name) for v in values):
            return any(_indexless(v, ctx, line, depth + 1) for v in values)
        return False
    strings = _strings(node, ctx, line)
    if strings is not None:
        return "cuda" in strings
    if not _device_call(node, ctx) or len(node.args) != 1 or node.keywords:
        return False  # torch.device("cuda", 0), torch.device(type="cuda", index=i): indexed
    arg = node.args[0]
    if isinstance(arg, ast.Attribute) and arg.attr == "type":
        return True  # torch.device(x.device.type): the type alone, no index
    found = _strings(arg, ctx, line)
    return found is not None and "cuda" in found


def _indexed(node, ctx, line: int) -> bool:
    """A device that carries an index: ``torch.device("cuda:0")``, ``torch.device("cuda", i)``."""
    if isinstance(node, ast.Name) and ctx.module is not None:
        values = _values(node.id, ctx.chain(), line, ctx.bindings)
        return bool(values) and all(not isinstance(v, ast.Name) and _indexed(v, ctx, line) for v in values)
    if not _device_call(node, ctx):
        return False
    if len(node.args) == 2 or any(k.arg == "index" for k in node.keywords):
        return True
    found = _strings(node.args[0], ctx, line) if len(node.args) == 1 else None
    return bool(found) and all(s.startswith("cuda:") for s in found)


def _tensor_device(node, ctx):
    """``x.device`` of a tensor (True), of something unknown (UNSURE), or not a tensor's device (False);
    ``str(x.device)`` is read as the device."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "str" and len(node.args) == 1:
        node = node.args[0]
    if not (isinstance(node, ast.Attribute) and node.attr == "device"):
        return False
    if ctx.qualified(node.value) is not None:
        return False  # a module's attribute: some_lib.device
    held = receiver_holds(node, ctx, "tensor")
    return held


def _moves_only(compare, ctx) -> bool:
    """``if x.device != device: x = x.to(device)``: the test only guards a move, which ``.to`` makes a
    no-op where the tensor is already there: the always-true test costs nothing."""
    parent = ctx.parent(compare)
    if not (isinstance(parent, ast.If) and parent.test is compare and not parent.orelse):
        return False
    return all(
        isinstance(s, (ast.Assign, ast.Expr))
        and isinstance(s.value, ast.Call)
        and isinstance(s.value.func, ast.Attribute)
        and s.value.func.attr in _MOVES
        for s in parent.body
    )


def _compares_cuda_without_index(node, ctx):
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq))):
        return False
    left, right = node.left, node.comparators[0]
    line = node.lineno
    for a, b in ((left, right), (right, left)):
        if not _indexless(b, ctx, line):
            continue
        if _indexed(a, ctx, line):
            return True
        device = _tensor_device(a, ctx)
        if device is False or (device is UNSURE and _strings(b, ctx, line) is not None):
            continue  # args.device == "cuda": a config string, most often, where the object is not known
        if isinstance(node.ops[0], ast.NotEq) and _moves_only(node, ctx):
            return False
        return device if device is UNSURE else True
    return False


RULE = Rule(
    "PTF245",
    ("device-cuda-vs-cuda0",),
    'a CUDA tensor\'s .device is cuda:0, never equal to torch.device("cuda") (or the string "cuda"): the '
    'comparison is always False on the GPU; compare x.device.type == "cuda" (or use x.is_cuda)',
    _compares_cuda_without_index,
    nodes=ast.Compare,
    needs=("cuda", ".type"),
)
