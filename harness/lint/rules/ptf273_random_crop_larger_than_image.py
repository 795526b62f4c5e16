"""What: RandomCrop(size) larger than the images it gets: a torchvision dataset of fixed image size
(CIFAR 32x32, MNIST 28x28, STL10 96x96...), or an image made at a known size.
Why: RandomCrop only cuts a window out of the image; with none that fits, the data loader dies at the
first sample: "Required crop size ... is larger than input image size" ("empty range for randrange()").
Fix: RandomResizedCrop(size), a Resize before the crop, or RandomCrop(size, pad_if_needed=True).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import CALL, Rule, _kw
from torch_pitfalls.lint.rules.shared.options import default_constant

# the size (height, width) of every image of these datasets, and where each takes ``transform`` by position
DATASETS = {
    "CIFAR10": ((32, 32), 2),
    "CIFAR100": ((32, 32), 2),
    "MNIST": ((28, 28), 2),
    "FashionMNIST": ((28, 28), 2),
    "KMNIST": ((28, 28), 2),
    "EMNIST": ((28, 28), None),
    "QMNIST": ((28, 28), None),
    "USPS": ((16, 16), 2),
    "SVHN": ((32, 32), 2),
    "STL10": ((96, 96), 3),
}
# transforms that give back an image of the size they got
KEEP_SIZE = frozenset(
    """ToTensor PILToTensor ToPILImage Normalize ConvertImageDtype ColorJitter Grayscale RandomGrayscale
RandomHorizontalFlip RandomVerticalFlip RandomRotation RandomAffine RandomPerspective GaussianBlur RandomErasing RandomInvert
RandomPosterize RandomSolarize RandomAdjustSharpness RandomAutocontrast RandomEqualize AutoAugment RandAugment
TrivialAugmentWide AugMix ToImage ToImageTensor ToDtype ToPureTensor ElasticTransform RandomPhotometricDistort
GaussianNoise LinearTransformation""".split()
)
SET_SIZE = ("CenterCrop", "RandomResizedCrop")  # give an image of exactly ``size`` (CenterCrop pads a small one)


def _transform_name(call, ctx) -> str | None:
    q = ctx.qualified(call.func) if isinstance(call, ast.Call) else None
    if q and q.startswith("torchvision.transforms."):
        return q.rsplit(".", 1)[-1]
    return None


def _int(node, ctx, line):
    if isinstance(node, ast.Attribute):  # cfg.crop, args.crop: the setting's default
        node = default_constant(node, ctx, line=line)
    node = ctx.resolve(node, line) if isinstance(node, ast.Name) else node
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _size(node, ctx, line) -> tuple[int, int] | None:
    """A transform's ``size``: an int (square) or (h, w); None where it cannot be read."""
    node = ctx.resolve(node, line) if isinstance(node, ast.Name) else node
    if isinstance(node, (ast.Tuple, ast.List)):
        sides = [_int(e, ctx, line) for e in node.elts]
        if None in sides or len(sides) not in (1, 2):
            return None
        return (sides[0], sides[-1])
    side = _int(node, ctx, line)
    return (side, side) if side is not None else None


def _padding(node, ctx, line) -> tuple[int, int] | None:
    """(extra height, extra width) a padding adds: an int, (left/right, top/bottom), (l, t, r, b)."""
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return (0, 0)
    node = ctx.resolve(node, line) if isinstance(node, ast.Name) else node
    if isinstance(node, (ast.Tuple, ast.List)):
        sides = [_int(e, ctx, line) for e in node.elts]
        if None in sides:
            return None
        if len(sides) == 1:
            return (2 * sides[0], 2 * sides[0])
        if len(sides) == 2:
            return (2 * sides[1], 2 * sides[0])
        if len(sides) == 4:
            return (sides[1] + sides[3], sides[0] + sides[2])
        return None
    p = _int(node, ctx, line)
    return (2 * p, 2 * p) if p is not None else None


def _steps(transform, ctx, line, depth: int = 0) -> list | None:
    """The transform calls a pipeline applies in order: a Compose's list, or one transform; None where
    the pipeline cannot be read."""
    if depth > 4:
        return None
    if isinstance(transform, ast.Name):
        return _steps(ctx.value_of(transform, line), ctx, line, depth + 1)
    name = _transform_name(transform, ctx)
    if name == "Compose":
        items = transform.args[0] if transform.args else _kw(transform, "transforms")
        items = ctx.resolve(items, line) if isinstance(items, ast.Name) else items
        if not isinstance(items, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in items.elts):
            return None
        out = []
        for e in items.elts:
            inner = _steps(e, ctx, line, depth + 1)
            if inner is None:
                return None
            out += inner
        return out
    if name is not None:
        return [transform]
    return None


def _crop_verdict(steps, size, ctx, line) -> str | None:  # noqa: C901 - one branch per kind of transform
    """Run the image size through the pipeline: a RandomCrop larger than the image (after its padding)
    where nothing before it resized the image to fit ("large"), every RandomCrop fitting ("fits"), or
    None at the first step of unknown effect or with no RandomCrop at all. ``size`` None: an image of any size,
    known once a step sets it; a Resize to a shorter side ``s`` leaves (s, s) known as the least it can be, so a
    crop larger than ``s`` on both sides fits no image."""
    seen = False
    if size is None:
        steps = _from_first_resize(steps, ctx)
        if not steps:
            return None
        size = (0, 0)  # replaced by the first step
    any_image = size == (0, 0)  # after a Resize to a shorter side: which side is the short one is not known
    h, w = size
    for step in steps:
        name = _transform_name(step, ctx)
        if name in KEEP_SIZE:
            if name in ("RandomRotation", "RandomAffine") and _kw(step, "expand") is not None:
                return None
            continue
        if name == "RandomCrop":
            crop = _size(step.args[0] if step.args else _kw(step, "size"), ctx, line)
            pad = _padding(step.args[1] if len(step.args) > 1 else _kw(step, "padding"), ctx, line)
            fit = step.args[2] if len(step.args) > 2 else _kw(step, "pad_if_needed")
            if crop is None or pad is None or any(k.arg is None for k in step.keywords):
                return None
            if not (fit is None or (isinstance(fit, ast.Constant) and not fit.value)):
                return "fits"  # pad_if_needed: a small image is padded first
            if (crop[0] > h + pad[0] and crop[1] > w + pad[1]) or (
                not any_image and (crop[0] > h + pad[0] or crop[1] > w + pad[1])
            ):
                return "large"
            any_image = False
            h, w, seen = crop[0], crop[1], True
        elif name in SET_SIZE:
            out = _size(step.args[0] if step.args else _kw(step, "size"), ctx, line)
            if out is None:
                return None
            h, w, any_image = out[0], out[1], False
        elif name == "Resize":
            given = step.args[0] if step.args else _kw(step, "size")
            out = _size(given, ctx, line)
            if out is None or _kw(step, "max_size") is not None:
                return None
            given = ctx.resolve(given, line) if isinstance(given, ast.Name) else given
            if isinstance(given, (ast.Tuple, ast.List)) and len(given.elts) == 2:
                h, w, any_image = out[0], out[1], False
            elif h == w == 0:  # any image: its shorter side becomes s, the other at least s (either way round)
                h = w = out[0]
            else:  # an int (or [int]): the shorter side becomes it, the ratio is kept
                short = out[0]
                h, w = (short, int(short * w / h)) if h <= w else (int(short * h / w), short)
        elif name == "Pad":
            pad = _padding(step.args[0] if step.args else _kw(step, "padding"), ctx, line)
            if pad is None or (h == w == 0):
                return None
            h, w = h + pad[0], w + pad[1]
        else:
            return None
    return "fits" if seen else None


def _fits_no_image(crop, ctx) -> bool:
    """The crop is a step of a Compose written around it whose steps before it leave every image too small for
    it (reported here, at the crop, once for every use of the pipeline)."""
    listed = ctx.parent(crop)
    compose = ctx.parent(listed) if isinstance(listed, (ast.List, ast.Tuple)) else None
    if not (isinstance(compose, ast.Call) and _transform_name(compose, ctx) == "Compose"):
        return False
    steps = _steps(compose, ctx, crop.lineno) or []
    if not any(step is crop for step in steps):
        return False
    upto = steps[: next(i for i, step in enumerate(steps) if step is crop) + 1]
    return (
        _crop_verdict(upto, None, ctx, crop.lineno) == "large"
        and _crop_verdict(upto[:-1], None, ctx, crop.lineno) != "large"
    )


def _from_first_resize(steps, ctx) -> list:
    """For an image of any size: the steps from the first, which must set the size (a Resize, a crop to a size),
    past those that keep it; [] where another step comes first."""
    while steps and _transform_name(steps[0], ctx) in KEEP_SIZE:
        steps = steps[1:]
    return steps if steps and _transform_name(steps[0], ctx) in ("Resize", *SET_SIZE) else []


def _pipelines(expr, ctx, line) -> list:
    """(pipeline, from a builder function) for each pipeline an argument may be: itself, both branches of
    ``a if c else b``, an entry of a dict of pipelines (``data_transforms["train"]``), every pipeline a
    function of this module returns."""
    expr = ctx.resolve(expr, line) if isinstance(expr, ast.Name) else expr
    if isinstance(expr, ast.IfExp):
        return _pipelines(expr.body, ctx, line) + _pipelines(expr.orelse, ctx, line)
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
        table = ctx.resolve(expr.value, line) if isinstance(expr.value, ast.Name) else expr.value
        if isinstance(table, ast.Dict):
            for k, v in zip(table.keys, table.values):
                if isinstance(k, ast.Constant) and k.value == expr.slice.value:
                    return [(v, False)]
        return []
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
        fn = ctx.bindings.module_function(expr.func.id)
        if fn is not None and _transform_name(expr, ctx) is None:
            return [(v, True) for v, _ in returned_values(fn) or ()]
    return [(expr, False)]


def _image_size(expr, ctx, line) -> tuple[int, int] | None:
    """(height, width) of ``PIL.Image.new(mode, (w, h))``, directly, through a name, or returned by
    every return of a function of this module."""
    expr = ctx.resolve(expr, line) if isinstance(expr, ast.Name) else expr
    if not isinstance(expr, ast.Call):
        return None
    if ctx.qualified(expr.func) == "PIL.Image.new":
        given = expr.args[1] if len(expr.args) > 1 else _kw(expr, "size")
        if isinstance(given, (ast.Tuple, ast.List)) and len(given.elts) == 2:
            w, h = (_int(e, ctx, line) for e in given.elts)
            return (h, w) if h is not None and w is not None else None
        return None
    if isinstance(expr.func, ast.Name) and not expr.args:
        fn = ctx.bindings.module_function(expr.func.id)
        values = [v for v, _ in returned_values(fn) or ()] if fn is not None else []
        sizes = {_image_size(v, ctx, 1 << 30) for v in values}
        return sizes.pop() if len(sizes) == 1 else None
    return None


def _crop_larger_than_image(node, ctx) -> bool:
    """A torchvision dataset of fixed image size given a transform whose RandomCrop cannot fit, or a
    transform pipeline applied to an image made at a known size."""
    if not isinstance(node, ast.Call):
        return False
    q = ctx.qualified(node.func)
    if q == "torchvision.transforms.RandomCrop":  # Resize(s) then RandomCrop(c > s): no image fits, whatever it is
        return _fits_no_image(node, ctx)
    if q is not None and q.startswith("torchvision.datasets."):
        known = DATASETS.get(q.rsplit(".", 1)[-1])
        if known is None:
            return False
        size, at = known
        transform = _kw(node, "transform")
        if transform is None and at is not None and len(node.args) > at:
            transform = node.args[at]
    elif q is None and isinstance(node.func, ast.Name) and len(node.args) == 1 and not node.keywords:
        size = _image_size(node.args[0], ctx, node.lineno)
        transform = node.func
    else:
        return False
    if transform is None or size is None:
        return False
    verdicts = set()
    for pipeline, builder in _pipelines(transform, ctx, node.lineno):
        steps = _steps(pipeline, ctx, node.lineno)
        if steps and _crop_verdict(steps, None, ctx, node.lineno) == "large":
            continue  # no image fits: reported at its crop (_fits_no_image)
        verdicts.add((_crop_verdict(steps, size, ctx, node.lineno) if steps else None, builder))
    # a builder function whose other pipeline has a crop that fits picks by dataset: which one runs is not known
    return ("large", False) in verdicts or (("large", True) in verdicts and ("fits", True) not in verdicts)


RULE = Rule(
    "PTF273",
    ("random-crop-larger-than-image",),
    "RandomCrop asks for a window larger than these images (nothing before it resizes or pads them to fit): "
    "the data loader raises 'Required crop size is larger than input image size' at the first sample; use "
    "RandomResizedCrop(size), a Resize before the crop, or RandomCrop(size, pad_if_needed=True)",
    _crop_larger_than_image,
    nodes=CALL,
    needs=("RandomCrop",),
)
