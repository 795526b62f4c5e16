"""What: a float tensor scaled to pixel range ((x * 255), (x + 1) * 127.5) converted to uint8 with no clamp.
Why: float -> uint8 truncates toward zero and keeps the value modulo 256 (256.02 -> 0, -1.02 -> 255,
300 -> 44): values a little outside [0, 255] wrap around instead of saturating; rounding does not help.
Fix: clamp first: (x * 255).clamp(0, 255).to(torch.uint8) (round before the cast for nearest values).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import MODEL_OUTPUT
from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _called_name, _kw, _method
from torch_pitfalls.lint.walking import walk

_UINT8 = ("torch.uint8",)
_BYTE_TYPES = ("torch.ByteTensor", "torch.cuda.ByteTensor", "torch.uint8")
_PIXEL_SCALES = (255, 255.0, 127.5, 128, 128.0, 256, 256.0)
# methods that keep the values' range problem: rounding, copies, reshapes, moves (not a clamp)
_PASS = frozenset(
    """round floor ceil trunc round_ floor_ to cpu cuda detach clone contiguous permute transpose squeeze unsqueeze
view reshape flatten float half double add add_ sub sub_ mul mul_ div div_ numpy""".split()
)
_SHAPE = frozenset(
    "to cpu cuda detach clone contiguous permute transpose squeeze unsqueeze view reshape flatten float half double".split()
)
_AFFINE = ("add", "add_", "sub", "sub_", "div", "div_")
_CLAMPS = ("clamp", "clamp_", "clip", "clip_", "sigmoid", "softmax", "sigmoid_")
# what gives values already in [0, 1] (or integers): times 255 they stay in range
_BOUNDED = frozenset(
    """sigmoid softmax tanh rand rand_like bool long int byte argmax argmin eq ne gt lt ge le isnan isfinite
clamp clamp_ clip clip_ hardsigmoid relu6""".split()
)


def _scale_const(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value in _PIXEL_SCALES


def _converts_to_uint8(node, ctx):
    """The tensor a uint8 conversion converts: ``t.byte()``, ``t.to(torch.uint8)``, ``t.type(torch.uint8)``,
    ``torch.tensor(t, dtype=torch.uint8)``; (tensor, sure) or None."""
    if not isinstance(node, ast.Call):
        return None
    if _method(node, "byte") and not node.args and not node.keywords:
        return node.func.value, False  # .byte(): a torch tensor's method, the receiver not proven
    if _method(node, "to"):
        dtypes = [*node.args, *(k.value for k in node.keywords if k.arg == "dtype")]
        if any(ctx.qualified(a) in _UINT8 for a in dtypes):
            return node.func.value, True
    if _method(node, "type") and node.args:
        a = node.args[0]
        if ctx.qualified(a) in _BYTE_TYPES or (isinstance(a, ast.Constant) and a.value == "torch.ByteTensor"):
            return node.func.value, True
    if ctx.qualified(node.func) in ("torch.tensor", "torch.as_tensor") and node.args:
        if ctx.qualified(_kw(node, "dtype")) in _UINT8:  # from a Python list it raises on overflow: not this
            return node.args[0], True
    return None


def _strip(node, ctx):
    """Down through the rounding and copying methods to the expression that holds the values; None where a
    clamp (or another bounding op) is on the way."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        q = ctx.qualified(node.func)
        if q in ("torch.clamp", "torch.clip", "torch.sigmoid"):
            return None
        if q in ("torch.round", "torch.floor", "torch.ceil", "torch.trunc") and node.args:
            node = node.args[0]  # torch.round(x * 255)
            continue
        if q is not None:
            break
        attr = node.func.attr
        if attr in _CLAMPS:
            return None
        if attr not in _PASS or attr in ("mul", "mul_", "add", "add_", "sub", "sub_", "div", "div_"):
            break
        node = node.func.value
    if isinstance(node, ast.Call) and (
        _called_name(node) in _CLAMPS or ctx.qualified(node.func) in ("torch.clamp", "torch.clip")
    ):
        return None
    return node


def _operands(node):
    """The scale and the tensor of ``x * 255``, ``255 * x``, ``x.mul(255)``, ``(x + 1) * 127.5``,
    ``x * 127.5 + 127.5``, ``(x + 1) / 2 * 255``: the scaled tensor, or None."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):  # x * 127.5 + 127.5
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(other, ast.Constant):
                found = _operands(side)
                if found is not None:
                    return found
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        if _scale_const(node.right):
            return node.left
        if _scale_const(node.left):
            return node.right
        return None
    if _method(node, "mul", "mul_") and len(node.args) == 1 and _scale_const(node.args[0]):
        return node.func.value
    if _method(node, "add", "add_", "sub", "sub_") and len(node.args) == 1 and isinstance(node.args[0], ast.Constant):
        return _operands(node.func.value)  # x.mul(255).add_(0.5)
    return None


def _base(x):
    """``(x + 1) / 2`` -> ``x``: the tensor under an offset or a division by a constant."""
    while isinstance(x, ast.BinOp) and isinstance(x.op, (ast.Add, ast.Sub, ast.Div)):
        if isinstance(x.right, ast.Constant):
            x = x.left
        elif isinstance(x.left, ast.Constant):
            x = x.right
        else:
            break
    return x


def _bounded(x, ctx, line, depth=0, offset=False) -> bool:
    """``x`` holds values known to stay in range: a sigmoid's (softmax's, tanh's) output, a clamp's, uniform
    noise in [0, 1), integers or booleans; through names it was assigned, and a clamp_ or an in-place
    bounding of the name before ``line``."""
    if depth > 6:
        return False
    offset, x = offset or _base(x) is not x, _base(x)
    if isinstance(x, ast.Compare):
        return True
    if isinstance(x, ast.Call):
        name = _called_name(x)
        if name in _BOUNDED:
            return name != "tanh" or offset  # tanh(x) * 255 goes negative; (tanh(x) + 1) * 127.5 does not
        if _method(x, *_SHAPE) and ctx.qualified(x.func) is None:
            return _bounded(x.func.value, ctx, line, depth + 1, offset)
        if (  # x.clamp_(-1, 1).add(1).div_(2): a clamp, then an affine map by constants, stays in range
            _method(x, *_AFFINE)
            and ctx.qualified(x.func) is None
            and x.args
            and all(isinstance(a, ast.Constant) for a in x.args)
        ):
            return _bounded(x.func.value, ctx, line, depth + 1, True)
        return False
    if isinstance(x, ast.Name):
        if _clamped_in_place(x.id, ctx, line):
            return True
        held = ctx.held(x, line)
        if held is not None and held.what in ("sigmoid", "softmax", "tanh"):
            return held.what != "tanh" or offset
        value = ctx.value_of(x, line)
        return value is not None and _bounded(value, ctx, line, depth + 1, offset)
    return False


def _clamped_in_place(name, ctx, line) -> bool:
    """``x.clamp_(0, 1)`` (or ``torch.clamp(x, ..., out=x)``) as a statement of the function before ``line``."""
    for n in walk(ctx.function):
        if (
            isinstance(n, ast.Call)
            and getattr(n, "lineno", line) < line
            and _method(n, "clamp_", "clip_", "sigmoid_")
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id == name
        ):
            return True
    return False


def _wraps(node, ctx):
    found = _converts_to_uint8(node, ctx)
    if found is None:
        return False
    values, sure = found
    values = _strip(values, ctx)
    if values is None:
        return False
    line = node.lineno
    if isinstance(values, ast.Name):  # img = (x * 255).round(); img.byte()
        if _clamped_in_place(values.id, ctx, line):
            return False
        assigned = ctx.value_of(values, line)
        values = _strip(assigned, ctx) if assigned is not None else None
        if values is None:
            return False
    x = _operands(values)
    if x is None or _bounded(x, ctx, line):
        return False
    kind = ctx.kind(_base(x), line)
    if kind is not None and kind != "tensor":
        return False  # an ndarray, a module: not a tensor's cast
    if not _leaves_range(x, ctx, line):
        return UNSURE  # x * 255 of a tensor whose range the file does not show: [0, 1] by design, often
    return True if sure or kind == "tensor" else UNSURE


def _leaves_range(x, ctx, line, depth=0) -> bool:
    """The scaled values can leave the pixel range, as the code shows: a model's output (unbounded), a
    [-1, 1] output mapped by ``(x + 1) * 127.5``, or a denormalisation ``x * std + mean``, through names."""
    if depth > 4:
        return False
    if _base(x) is not x:  # (x + 1) * 127.5, (x + 1) / 2 * 255: a generator's [-1, 1] mapped to pixels
        return True
    if isinstance(x, ast.BinOp) and isinstance(x.op, (ast.Add, ast.Sub)):  # x * std + mean
        return any(isinstance(side, ast.BinOp) and isinstance(side.op, ast.Mult) for side in (x.left, x.right))
    if isinstance(x, ast.Call) and _method(x, *_SHAPE) and ctx.qualified(x.func) is None:
        return _leaves_range(x.func.value, ctx, line, depth + 1)
    if isinstance(x, ast.Subscript):  # net(x)[0]
        return _leaves_range(x.value, ctx, line, depth + 1)
    if isinstance(x, ast.Call) and ctx.kind(x.func, line) == "module":
        return True
    if isinstance(x, ast.Call) and ctx.qualified(x.func) in ("torch.tensor", "torch.as_tensor") and x.args:
        numbers = [n.value for n in walk(x.args[0]) if isinstance(n, ast.Constant) and isinstance(n.value, float)]
        numbers += [
            -n.operand.value
            for n in walk(x.args[0])
            if isinstance(n, ast.UnaryOp)
            and isinstance(n.operand, ast.Constant)
            and isinstance(n.operand.value, (int, float))
        ]
        return any(v < 0 or v > 1 for v in numbers)  # written-out data outside [0, 1]
    held = ctx.held(x, line)
    if held is not None and held.what == MODEL_OUTPUT:
        return True
    if isinstance(x, ast.Name):
        value = ctx.value_of(x, line)
        return value is not None and _leaves_range(value, ctx, line, depth + 1)
    return False


RULE = Rule(
    "PTF221",
    ("uint8-conversion-wraparound",),
    "a float tensor scaled to pixel range is cast to uint8 with no clamp: the cast truncates and keeps the "
    "value modulo 256 (256.02 -> 0, -1.02 -> 255, 300 -> 44), so values just outside [0, 255] wrap around "
    "instead of saturating (rounding does not help); clamp first: (x * 255).clamp(0, 255).to(torch.uint8)",
    _wraps,
    nodes=CALL,
    needs=("uint8", "byte(", "ByteTensor"),
)
