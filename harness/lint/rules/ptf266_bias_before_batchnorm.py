"""What: a convolution with its bias on (the default) whose output goes straight into a BatchNorm.
Why: BatchNorm subtracts each channel's mean, so the per-channel bias cancels: a parameter that is stored, updated
and checkpointed, with a gradient of rounding noise, and changes nothing.
Fix: build the convolution that feeds a BatchNorm with bias=False (as torchvision's ResNet does).
"""

from __future__ import annotations

import ast
import re

from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _arg, _method
from torch_pitfalls.lint.rules.shared.flow import _scopes_of, _values
from torch_pitfalls.lint.rules.shared.modules import _sets_eval
from torch_pitfalls.lint.walking import kept_on, walk

# the layer -> the position of ``bias`` among its positional parameters. Convolutions only, as the Performance
# Tuning Guide names them: a Linear before a BatchNorm1d wastes its bias the same way, but the corpus's own fixed
# programs (batchnorm-batch-of-one, train-eval-mode, ...) keep that spelling, so it is left out.
_BIASED = {
    "Conv1d": 7,
    "Conv2d": 7,
    "Conv3d": 7,
    "ConvTranspose1d": 7,
    "ConvTranspose2d": 7,
    "ConvTranspose3d": 7,
    "LazyConv1d": 6,
    "LazyConv2d": 6,
    "LazyConv3d": 6,
    "LazyConvTranspose1d": 6,
    "LazyConvTranspose2d": 6,
    "LazyConvTranspose3d": 6,
}
_LAYER = re.compile(r"^torch\.nn\.(modules\.conv\.)?(\w+)$")
# the norms that subtract each channel's batch mean (not LayerNorm, GroupNorm: they subtract a mean over
# other axes, which a per-channel bias does not cancel in)
_BN = re.compile(r"^torch\.nn\.(modules\.batchnorm\.)?(Lazy)?(Sync)?BatchNorm([123]d)?$")
_SEQUENTIAL = ("torch.nn.Sequential", "torch.nn.modules.container.Sequential")
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _layer(call, ctx) -> str | None:
    """The torch.nn convolution with a bias that ``call`` builds (``Conv2d``), else None."""
    if not isinstance(call, ast.Call):
        return None
    name = getattr(call.func, "attr", getattr(call.func, "id", None))
    if name not in _BIASED:
        return None
    m = _LAYER.match(ctx.qualified(call.func) or "")
    return m.group(2) if m and m.group(2) == name else None


def _bias(call, layer, ctx) -> str | None:
    """How the layer is built with its bias: "explicit" (True, or a name every value of which is True),
    "default" (not given), else None (off, or unknown)."""
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return None  # **kwargs / *args: unknown
    value = _arg(call, _BIASED[layer], "bias")
    if value is None:
        return "default"
    if isinstance(value, ast.Constant):
        return "explicit" if value.value is True else None
    if isinstance(value, ast.Name):
        found = _values(value.id, _scopes_of(value, ctx), value.lineno, ctx.bindings)
        if found and all(isinstance(v, ast.Constant) and v.value is True for v in found):
            return "explicit"
    return None


def _is_bn(node, ctx, line: int) -> bool:
    """``node`` builds a BatchNorm: ``nn.BatchNorm2d(c)``, or a name bound to one, or ``norm_layer(c)`` where
    every value of ``norm_layer`` is a BatchNorm class."""
    if isinstance(node, ast.Name):
        node = ctx.bindings.value_of(node.id, _scopes_of(node, ctx), line)
    if not isinstance(node, ast.Call):
        return False
    if _BN.match(ctx.qualified(node.func) or ""):
        return True
    if isinstance(node.func, ast.Name):
        found = _values(node.func.id, _scopes_of(node.func, ctx), node.lineno, ctx.bindings)
        return bool(found) and all(_BN.match(ctx.qualified(v) or "") for v in found)
    return False


def _followed_by_bn(element, ctx) -> bool:
    """``element`` (the layer, or a name or ``self.`` attribute holding it) sits in a Sequential (its
    arguments, or a list that is unpacked into one in the same function) right before a BatchNorm."""
    parent = ctx.parent(element)
    if isinstance(parent, ast.Call) and element in parent.args:
        items = parent.args
        if ctx.qualified(parent.func) not in _SEQUENTIAL:
            return False
    elif isinstance(parent, (ast.List, ast.Tuple)):
        items = parent.elts
        if not _into_sequential(parent, ctx):
            return False
    else:
        return False
    i = next(i for i, e in enumerate(items) if e is element)
    return i + 1 < len(items) and _is_bn(items[i + 1], ctx, element.lineno)


def _into_sequential(listed, ctx) -> bool:
    """The list literal is a Sequential's layers: ``nn.Sequential(*[...])``, or it is assigned, added
    (``+=``) or ``extend``-ed to a name that the same function unpacks into ``nn.Sequential(*layers)``."""
    parent = ctx.parent(listed)
    if isinstance(parent, ast.Starred):
        call = ctx.parent(parent)
        return isinstance(call, ast.Call) and ctx.qualified(call.func) in _SEQUENTIAL
    name = None
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
        name = getattr(parent.targets[0], "id", None)
    elif isinstance(parent, ast.AugAssign) and isinstance(parent.op, ast.Add):
        name = getattr(parent.target, "id", None)
    elif isinstance(parent, ast.Call) and getattr(parent.func, "attr", None) == "extend":
        name = getattr(parent.func.value, "id", None)
    if name is None:
        return False
    fn = _function_of(listed, ctx)
    return name in kept_on(fn, "_ptf266_unpacked", lambda f: _unpacked_into_sequential(f, ctx))


def _unpacked_into_sequential(fn, ctx) -> set[str]:
    return {
        a.value.id
        for n in walk(fn)
        if isinstance(n, ast.Call) and ctx.qualified(n.func) in _SEQUENTIAL
        for a in n.args
        if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name)
    }


def _function_of(node, ctx):
    up = ctx.parent(node)
    while up is not None and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        up = ctx.parent(up)
    return up if up is not None else ctx.module


def _uses(fn, key):
    """The loads of a name (``key`` a str) or a ``self.`` attribute (``("self", attr)``) in ``fn``."""
    table = kept_on(fn, "_ptf266_loads", _loads)
    return table.get(key, [])


def _loads(fn) -> dict:
    found: dict = {}
    for n in walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            found.setdefault(n.id, []).append(n)
        elif (
            isinstance(n, ast.Attribute)
            and isinstance(n.ctx, ast.Load)
            and isinstance(n.value, ast.Name)
            and n.value.id == "self"
        ):
            found.setdefault(("self", n.attr), []).append(n)
    return found


def _feeds_bn(ref, ctx) -> bool | None:
    """What one reference to the layer does: True where it is placed right before a BatchNorm in a
    Sequential, or called with its output handed straight to a BatchNorm (``self.bn(self.conv(x))``,
    ``x = self.conv(x)`` then ``x = self.bn(x)``); False where its output goes anywhere else; None for a
    reference that runs nothing (``self.conv.weight``, ``init(self.conv)``)."""
    parent = ctx.parent(ref)
    if isinstance(parent, (ast.List, ast.Tuple)) or (isinstance(parent, ast.Call) and ref in parent.args):
        if _followed_by_bn(ref, ctx):
            return True
        if isinstance(parent, ast.Call) and ctx.qualified(parent.func) not in _SEQUENTIAL:
            return None  # handed to a function (an init, a fuse): not a use of its output
        return False
    if not (isinstance(parent, ast.Call) and parent.func is ref):
        return None
    return _output_into_bn(parent, ctx)


def _output_into_bn(call, ctx) -> bool:
    """The result of calling the layer goes straight into a BatchNorm module's call, and nowhere else."""
    parent = ctx.parent(call)
    if isinstance(parent, ast.Call) and parent.args == [call] and not parent.keywords:
        return _bn_module(parent.func, call, ctx)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    fn = _function_of(call, ctx)
    later = sorted(
        (n for n in _uses(fn, name) if (n.lineno, n.col_offset) > (parent.end_lineno, parent.end_col_offset)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    scope = ctx.bindings.scope(fn)
    rebound = [b.line for b in scope.names.get(name, []) if b.line > parent.lineno]
    until = min(rebound) if rebound else 1 << 30
    reads = [n for n in later if n.lineno <= until]
    if len(reads) != 1 or _only_on_a_branch(reads[0], parent, ctx):
        return False
    user = ctx.parent(reads[0])
    return (
        isinstance(user, ast.Call)
        and user.args == [reads[0]]
        and not user.keywords
        and _bn_module(user.func, reads[0], ctx)
    )


def _only_on_a_branch(read, assign, ctx) -> bool:
    """The BatchNorm is applied under an ``if`` the convolution is not (``if self.bn: out = self.bn1(out)``,
    DPT's residual units): without it the output goes on with its bias, which the model then needs."""
    outer = set()
    up = ctx.parent(assign)
    while up is not None:
        outer.add(id(up))
        up = ctx.parent(up)
    up = ctx.parent(read)
    while up is not None and id(up) not in outer:
        if isinstance(up, (ast.If, ast.IfExp)):
            return True
        up = ctx.parent(up)
    return False


def _bn_module(func, near, ctx) -> bool:
    """``func`` holds a BatchNorm module: a ``self.`` attribute or a name built from one."""
    if isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self":
        klass = _class_of(func, ctx)
        values = ctx.bindings.self_attributes(klass).get(func.attr) if klass is not None else None
        return bool(values) and all(_is_bn(v, ctx, at + 1) for _m, v, at in values)
    if isinstance(func, ast.Name):
        value = ctx.bindings.value_of(func.id, _scopes_of(func, ctx), func.lineno)
        return value is not None and _is_bn(value, ctx, func.lineno)
    return False


def _class_of(node, ctx):
    up = ctx.parent(node)
    while up is not None and not isinstance(up, ast.ClassDef):
        up = ctx.parent(up)
    return up


def _feeds_only_bn(node, ctx) -> bool:
    """Every use of the convolution ``node`` builds feeds a BatchNorm directly."""
    parent = ctx.parent(node)
    if isinstance(parent, (ast.List, ast.Tuple)) or (isinstance(parent, ast.Call) and node in parent.args):
        return _followed_by_bn(node, ctx)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1):
        return False
    target = parent.targets[0]
    if isinstance(target, ast.Name):  # conv = nn.Conv2d(...); layers += [conv, nn.BatchNorm2d(c)]
        fn = _function_of(node, ctx)
        refs = [n for n in _uses(fn, target.id) if n.lineno > parent.lineno]
    elif isinstance(target, ast.Attribute) and getattr(target.value, "id", None) == "self":
        klass = _class_of(node, ctx)
        if klass is None or len(ctx.bindings.self_attributes(klass).get(target.attr, [])) != 1:
            return False
        refs = _uses(klass, ("self", target.attr))
    else:
        return False
    verdicts = [_feeds_bn(r, ctx) for r in refs]
    return any(v is True for v in verdicts) and not any(v is False for v in verdicts)


def _freezes_a_part(ctx) -> bool:
    """The file puts a part of a model in eval mode (``net.bn.eval()``, ``self.backbone.eval()``, ``m.eval()`` for
    ``m`` in ``model.modules()``): a BatchNorm kept in eval mode while training normalises with fixed statistics,
    and a bias before it is not cancelled."""

    def scan(tree):
        loops = {
            n.target.id
            for n in walk(tree)
            if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and _method(n.iter, "modules", "children")
        }
        return any(
            _sets_eval(n) and (isinstance(n.func.value, ast.Attribute) or getattr(n.func.value, "id", None) in loops)
            for n in walk(tree)
            if isinstance(n, ast.Call)
        )

    return kept_on(ctx.module, "_ptf266_freezes", lambda tree: [scan(tree)])[0]


def _wasted_bias(node, ctx):
    """A torch.nn convolution built with its bias, every use of which feeds a BatchNorm directly, in a file
    that keeps no part of a model in eval mode. Sure where the code turns the bias on itself (``bias=True``, a
    flag every call sets to True); UNSURE for the default: that spelling is everywhere, and maintainers
    asked about it answer that it costs next to nothing (huawei-noah/VanillaNet#32)."""
    layer = _layer(node, ctx)
    bias = _bias(node, layer, ctx) if layer is not None else None
    if bias is None or not _feeds_only_bn(node, ctx) or _freezes_a_part(ctx):
        return False
    return True if bias == "explicit" else UNSURE


RULE = Rule(
    "PTF266",
    ("bias-before-batchnorm",),
    "this convolution's bias feeds straight into a BatchNorm, which subtracts each channel's mean: the bias cancels "
    "and is a wasted parameter (its gradient is rounding noise); build it with bias=False",
    _wasted_bias,
    nodes=CALL,
    harm="speed",
    needs=("BatchNorm",),
)
