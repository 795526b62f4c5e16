"""What: an H×W×C image array (cv2.imread, imageio, PIL via np.array, a (..., H, W, 3) reshape) made a tensor and
fed to a Conv2d or a torchvision model with its channel axis still last.
Why: PyTorch convolutions read axis 1 (axis 0 unbatched) as the channels: the layer raises "expected input[N, H, W, 3]
to have 3 channels, but got H channels", or, where the sizes happen to fit, convolves over the wrong axes.
Fix: move the channel axis first: image.permute(2, 0, 1) (batch.permute(0, 3, 1, 2)), or transforms.ToTensor().
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import NDARRAY, TENSOR, returned_values
from torch_pitfalls.lint.rules.base import CALL, Rule, _kw
from torch_pitfalls.lint.rules.shared.flow import _scopes_of, _values

# readers that return an H×W×C array
_READERS = (
    "cv2.imread",
    "imageio.imread",
    "imageio.v2.imread",
    "imageio.v3.imread",
    "skimage.io.imread",
    "matplotlib.pyplot.imread",
    "matplotlib.image.imread",
    "PIL.Image.open",
)
# calls that keep the array's axes: conversions to a tensor or array, image edits in the same layout
_KEEP_CALLS = (
    "torch.from_numpy",
    "torch.tensor",
    "torch.as_tensor",
    "torch.asarray",
    "torch.Tensor",
    "torch.FloatTensor",
    "numpy.array",
    "numpy.asarray",
    "numpy.ascontiguousarray",
    "numpy.float32",
    "cv2.resize",
    "cv2.cvtColor",
)
# methods that keep the axes (of a tensor, an array or a PIL image)
_KEEP_METHODS = frozenset(
    """to cuda cpu float double half contiguous clone detach astype copy div mul sub add div_ mul_ sub_ add_
convert requires_grad_ unsqueeze unsqueeze_""".split()
)
_STACKS = ("numpy.stack", "torch.stack")
_CONVS = ("torch.nn.Conv2d", "torch.nn.LazyConv2d", "torch.nn.modules.conv.Conv2d")
_SEQUENTIAL = ("torch.nn.Sequential", "torch.nn.modules.container.Sequential")
_COLOR_TO_GRAY = "GRAY"


def _is_three(node, ctx) -> bool:
    if isinstance(node, ast.Name):
        found = _values(node.id, _scopes_of(node, ctx), node.lineno, ctx.bindings)
        return bool(found) and all(_is_three(v, ctx) for v in found if v is not node)
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == 3


def _channels_last(expr, ctx, depth: int = 0) -> bool:
    """``expr`` holds an image array (or a tensor made from one) whose last axis is its 3 colour channels,
    every step from the reader to here known to keep the axes; False where any step is unknown."""
    if depth > 12 or expr is None:
        return False
    if isinstance(expr, ast.Name):
        found = _name_values(expr, ctx)
        if not found or any(v is expr or isinstance(v, ast.Name) and v.id == expr.id for v in found):
            return False
        return all(_channels_last(v, ctx, depth + 1) for v in found)
    if isinstance(expr, ast.BinOp):
        left = expr.left
        return _channels_last(expr.right if isinstance(left, ast.Constant) else left, ctx, depth + 1)
    if isinstance(expr, ast.Subscript):
        return _keeps_axes(expr.slice) and _channels_last(expr.value, ctx, depth + 1)
    return isinstance(expr, ast.Call) and _call_channels_last(expr, ctx, depth)


def _call_channels_last(expr, ctx, depth: int) -> bool:
    """A call that reads an H×W×C image, or that keeps the channels last of what it is given."""
    q = ctx.qualified(expr.func) or ""
    if q in _READERS:
        flag = expr.args[1] if len(expr.args) > 1 else _kw(expr, "flags")
        return flag is None or (ctx.qualified(flag) or "") == "cv2.IMREAD_COLOR"
    if q in _KEEP_CALLS:
        if q == "cv2.cvtColor" and _COLOR_TO_GRAY in ast.unparse(expr.args[1] if len(expr.args) > 1 else expr):
            return False
        return bool(expr.args) and _channels_last(expr.args[0], ctx, depth + 1)
    if q in _STACKS and expr.args and not expr.keywords and len(expr.args) == 1:  # a batch of images: (N, H, W, C)
        items = expr.args[0]
        if isinstance(items, ast.ListComp):
            return _channels_last(items.elt, ctx, depth + 1)
        return (
            isinstance(items, (ast.List, ast.Tuple))
            and bool(items.elts)
            and all(_channels_last(e, ctx, depth + 1) for e in items.elts)
        )
    if q == "numpy.expand_dims" and len(expr.args) > 1:
        return _const_int(expr.args[1]) == 0 and _channels_last(expr.args[0], ctx, depth + 1)
    func = expr.func
    if isinstance(func, ast.Attribute) and not q:
        return _method_channels_last(expr, ctx, depth)
    if isinstance(func, ast.Name):
        fn = ctx.bindings.module_function(func.id)
        if fn is not None:
            returned = returned_values(fn) or []
            return bool(returned) and all(_channels_last(v, ctx, depth + 1) for v, _ in returned)
    return False


def _method_channels_last(expr, ctx, depth: int) -> bool:
    func = expr.func
    if func.attr in ("reshape", "view") and len(expr.args) >= 3 and _is_three(expr.args[-1], ctx):
        return _array_or_tensor(func.value, ctx)  # arr.reshape(n, h, w, 3)
    if func.attr in ("unsqueeze", "unsqueeze_") and not (expr.args and _const_int(expr.args[0]) == 0):
        return False
    return func.attr in _KEEP_METHODS and _channels_last(func.value, ctx, depth + 1)


def _name_values(name, ctx) -> list | None:
    """What a name holds where it is read: its last assignment above, or for a parameter what every call
    site of the module passes."""
    scopes = _scopes_of(name, ctx)
    binding, _ = ctx.bindings.lookup(name.id, scopes, name.lineno)
    if binding is None:
        return None
    if binding.how == "assign":
        return [binding.value]
    if binding.how == "param":
        return _values(name.id, scopes, name.lineno, ctx.bindings)
    return None


def _const_int(node):
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _array_or_tensor(node, ctx) -> bool:
    """What is reshaped is data made here: an array or a tensor op, not another object's method."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not ctx.qualified(node.func):
        node = node.func.value
    if isinstance(node, ast.BinOp):
        return True
    if isinstance(node, ast.Name):
        held = ctx.bindings.held(node, _scopes_of(node, ctx), node.lineno)
        return held is not None and held.kind in (NDARRAY, TENSOR)
    q = ctx.qualified(node.func) if isinstance(node, ast.Call) else None
    return bool(q) and q.startswith(("numpy.", "torch."))


def _keeps_axes(index) -> bool:
    """``img[None]``, ``img[np.newaxis]``, ``img[..., ::-1]``, ``img[y0:y1, x0:x1]``: the channel axis is still last."""
    if isinstance(index, ast.Constant) and index.value is None:
        return True
    if isinstance(index, ast.Attribute) and index.attr == "newaxis":
        return True
    if isinstance(index, ast.Tuple):
        parts = index.elts
        if parts and isinstance(parts[0], ast.Constant) and parts[0].value is Ellipsis:
            return all(isinstance(p, ast.Slice) for p in parts[1:])
        return all(isinstance(p, ast.Slice) for p in parts) and len(parts) <= 2
    return isinstance(index, ast.Slice)


def _first_layer_conv(func, ctx) -> bool:
    """``func`` holds a Conv2d, a Sequential whose first layer is one, or a torchvision/timm image model."""
    held = ctx.held(func)
    if held is None or held.kind != "module":
        return False
    what = held.what or ""
    if what in _CONVS:
        return True
    if what.startswith("torchvision.models.") and what.count(".") == 2 and what.rsplit(".", 1)[-1][:1].islower():
        return True
    if what in _SEQUENTIAL and isinstance(func, ast.Name):
        ctor = ctx.value_of(func, func.lineno)
        while isinstance(ctor, ast.Call) and isinstance(ctor.func, ast.Attribute) and ctor.func.attr in ("to", "cuda"):
            ctor = ctor.func.value
        if isinstance(ctor, ast.Call) and ctx.qualified(ctor.func) in _SEQUENTIAL and ctor.args:
            first = ctor.args[0]
            return isinstance(first, ast.Call) and ctx.qualified(first.func) in _CONVS
    return False


def _hwc_into_conv(node, ctx) -> bool:
    """A call of a Conv2d (F.conv2d, a Sequential starting with one, a torchvision model) on an image whose
    channels are its last axis."""
    if not (
        isinstance(node, ast.Call)
        and node.args
        and isinstance(node.args[0], (ast.Name, ast.Call, ast.BinOp, ast.Subscript))
    ):
        return False
    if ctx.qualified(node.func) == "torch.nn.functional.conv2d":
        pass
    elif not (isinstance(node.func, (ast.Name, ast.Attribute)) and _first_layer_conv(node.func, ctx)):
        return False
    return _channels_last(node.args[0], ctx)


RULE = Rule(
    "PTF269",
    ("channels-last-image-into-conv",),
    "this image reaches the convolution with its colour channels last (H×W×C, as cv2/PIL/imageio give it): Conv2d "
    "reads axis 1 as the channels and raises, or convolves the wrong axes; move them first with "
    "permute(2, 0, 1) (permute(0, 3, 1, 2) for a batch) or transforms.ToTensor()",
    _hwc_into_conv,
    nodes=CALL,
    needs=("Conv2d", "conv2d", "torchvision"),
)
