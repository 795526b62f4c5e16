"""What: view/reshape asked for a tensor's own sizes in another order (an [H, W, C] image viewed as (C, H, W)).
Why: view and reshape never move data: they cut the elements, in memory order, into the new shape, so
the result has the asked shape, no error, and scrambled contents (every "channel" mixes the colours).
Fix: permute to move axes (.permute(2, 0, 1) for HWC to CHW); view/reshape only to merge or split dims in order.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _method
from torch_pitfalls.lint.walking import walk

_SAME_DIMS = frozenset(
    """to cuda cpu float double half bfloat16 long int byte bool contiguous clone detach requires_grad_
type astype copy div mul sub add div_ mul_ sub_ add_ clamp clip pin_memory numpy""".split()
)
_FACTORIES = ("zeros", "ones", "empty", "rand", "randn")
_CONVERSIONS = (
    "torch.tensor",
    "torch.as_tensor",
    "torch.from_numpy",
    "torch.asarray",
    "torch.Tensor",
    "torch.FloatTensor",
    "numpy.array",
    "numpy.asarray",
    "numpy.ascontiguousarray",
    "numpy.float32",
)
# readers that return an image as an [H, W, C] array (NumPy's order, channels last)
_HWC_READERS = (
    "imageio.imread",
    "imageio.v2.imread",
    "imageio.v3.imread",
    "skimage.io.imread",
    "matplotlib.pyplot.imread",
    "matplotlib.image.imread",
)
_PIL_KEEPS = ("resize", "crop", "rotate", "transpose", "copy", "filter")
_MAX_DEPTH = 16  # steps followed from a view back to where the array was made (.float().div_(255) are steps too)


class _Dims:
    """A tensor's dims, each a set of symbols naming its size (``("name", binding)`` for a name bound to
    it, ``("dim", binding, i)`` for ``x.size(i)``, ``("const", 3)`` for a channel count a reader fixes),
    and whether it is an image read as [H, W, C]."""

    def __init__(self, dims: list[set], hwc: bool = False):
        self.dims, self.hwc = dims, hwc


def _binding(name: ast.Name, chain, line, ctx):
    binding, where = ctx.bindings.lookup(name.id, chain, line)
    return binding, where


def _size_read(node):
    """``x.size(i)``, ``x.shape[i]``, ``x.size()[i]``: (x, i); else None."""
    if _method(node, "size") and len(node.args) == 1 and isinstance(node.args[0], (ast.Constant, ast.UnaryOp)):
        index = _int(node.args[0])
        return (node.func.value, index) if index is not None else None
    if isinstance(node, ast.Subscript):
        index = _int(node.slice)
        whole = _whole_shape(node.value)
        if index is not None and whole is not None:
            return whole, index
    return None


def _whole_shape(node):
    """``x.shape`` or ``x.size()``: x; else None."""
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return node.value
    if _method(node, "size") and not node.args and not node.keywords:
        return node.func.value
    return None


def _int(node):
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        return -value if type(value) is int else None
    return None


def _tensor_key(node, chain, line, ctx):
    """What identifies a tensor named here: its binding (the same value wherever it is read)."""
    if isinstance(node, ast.Name):
        binding, _ = _binding(node, chain, line, ctx)
        return ("b", id(binding)) if binding is not None else None
    if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "self":
        return ("self", node.attr)
    return None


def _symbol(node, chain, line, ctx, depth=0):
    """The symbols naming one size: a name's binding, a size read of a tensor (``x.size(0)``, or a name
    unpacked from ``x.shape``), a literal 1 (``"one"``) or -1 (``"rest"``); None where it is unknown."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return "one" if node.value == 1 else {("const", node.value)}
    if _int(node) == -1:
        return "rest"
    read = _size_read(node)
    if read is not None:
        key = _tensor_key(read[0], chain, line, ctx)
        return {("dim", key, read[1])} if key is not None else None
    if isinstance(node, ast.Name):
        binding, where = _binding(node, chain, line, ctx)
        if binding is None:
            return None
        symbols = {("name", id(binding), node.id)}
        value = binding.value
        if binding.how == "item" and binding.index is not None:
            whole = _whole_shape(value)
            key = _tensor_key(whole, where, binding.line, ctx) if whole is not None else None
            if key is not None:
                symbols.add(("dim", key, binding.index))
        elif binding.how == "assign":
            inner = _symbol(value, where, binding.line, ctx, depth + 1)
            if isinstance(inner, set):
                symbols |= {s for s in inner if s[0] != "const"}
        return symbols
    return None


def _shape_args(args):
    """The sizes a call gives: ``f(a, b, c)`` or ``f((a, b, c))``."""
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        return list(args[0].elts)
    return list(args)


def _dims(node, chain, line, ctx, depth=0) -> _Dims | None:  # noqa: C901 - one branch per way a tensor is made
    """The dims of the array or tensor ``node`` holds, where the code shows them; else None."""
    if depth > _MAX_DEPTH or node is None:
        return None
    if isinstance(node, ast.Name):
        binding, where = _binding(node, chain, line, ctx)
        if binding is None:
            return None
        found = _dims(binding.value, where, binding.line, ctx, depth + 1) if binding.how == "assign" else None
        unpacked = _unpacked_shape(node, binding, where, ctx)
        if found is None and unpacked is None:
            return None
        if found is None:
            found = _Dims([set() for _ in range(unpacked)])
        if unpacked is not None and unpacked != len(found.dims):
            return None
        key = ("b", id(binding))
        return _Dims([s | {("dim", key, i)} for i, s in enumerate(found.dims)], found.hwc)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult, ast.Sub, ast.Add, ast.FloorDiv)):
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(other, ast.Constant):
                return _dims(side, chain, line, ctx, depth + 1)
        return None
    if isinstance(node, ast.Subscript):  # img[:, :, ::-1], img[top : top + p, left : left + p]: every dim kept
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        inner = _dims(node.value, chain, line, ctx, depth + 1) if all(isinstance(p, ast.Slice) for p in parts) else None
        if inner is None or len(parts) > len(inner.dims):
            return None
        # a dim cut or strided has another size: only whole (or reversed) dims keep their size's names
        whole = [p.lower is None and p.upper is None and (p.step is None or _int(p.step) == -1) for p in parts]
        return _Dims([d if i >= len(parts) or whole[i] else set() for i, d in enumerate(inner.dims)], inner.hwc)
    if not isinstance(node, ast.Call):
        return None
    q = ctx.qualified(node.func) or ""
    if q.startswith("torch.") and q.rsplit(".", 1)[-1] in _FACTORIES and q.count(".") == 1:
        sizes = _shape_args(node.args)
        if not sizes or any(isinstance(s, ast.Starred) for s in sizes):
            return None
        return _Dims([_as_set(_symbol(s, chain, line, ctx)) for s in sizes])
    if q in _CONVERSIONS and node.args:
        inner = node.args[0]
        if isinstance(inner, ast.ListComp):
            return _comprehension_dims(inner, chain, line, ctx)
        if isinstance(inner, ast.Name) and isinstance(ctx.bindings.value_of(inner.id, chain, line), ast.ListComp):
            binding, where = _binding(inner, chain, line, ctx)
            return _comprehension_dims(binding.value, where, binding.line, ctx)
        if q.startswith("numpy.") and _pil_image(inner, chain, line, ctx) is not None:
            return _image(_pil_image(inner, chain, line, ctx))
        return _dims(inner, chain, line, ctx, depth + 1)
    if q == "cv2.imread":
        if len(node.args) > 1 or node.keywords:
            flag = node.args[1] if len(node.args) > 1 else node.keywords[0].value
            if ctx.qualified(flag) != "cv2.IMREAD_COLOR" and _int(flag) != 1:
                return None
        return _image({3})
    if q in _HWC_READERS and len(node.args) == 1 and not node.keywords:
        return _image({3, 4})
    if q in ("cv2.resize",) and node.args:
        return _dims(node.args[0], chain, line, ctx, depth + 1)
    if q == "cv2.cvtColor" and len(node.args) == 2:
        code = (ctx.qualified(node.args[1]) or "").rsplit(".", 1)[-1]
        if code.startswith("COLOR_") and "GRAY" not in code and code.endswith(("RGB", "BGR")):
            return _dims(node.args[0], chain, line, ctx, depth + 1)
        return None
    if isinstance(node.func, ast.Attribute):
        attr, receiver = node.func.attr, node.func.value
        if attr in _SAME_DIMS and not (attr in ("view", "type") and node.args):
            return _dims(receiver, chain, line, ctx, depth + 1)
        if attr in ("view", "reshape") and node.args:
            sizes = _shape_args(node.args)
            if any(isinstance(s, ast.Starred) for s in sizes):
                return None
            symbols = [_symbol(s, chain, line, ctx) for s in sizes]
            if any(s in ("one", "rest") for s in symbols):
                return None
            return _Dims([_as_set(s) for s in symbols])
        if attr == "permute":
            inner = _dims(receiver, chain, line, ctx, depth + 1)
            order = [_int(a) for a in _shape_args(node.args)]
            if inner is None or None in order or sorted(order) != list(range(len(inner.dims))):
                return None
            return _Dims([inner.dims[i] for i in order])
        return None
    if isinstance(node.func, ast.Name):  # a function of this module: what it returns
        fn = ctx.bindings.module_function(node.func.id)
        binding, _ = _binding(node.func, chain, line, ctx)
        if fn is None or (binding is not None and binding.value is not fn):
            return None
        returns = [n for n in walk(fn) if isinstance(n, ast.Return) and n.value is not None]
        if len(returns) != 1:
            return None
        return _dims(returns[0].value, (fn, ctx.module), returns[0].lineno + 1, ctx, depth + 1)
    return None


def _as_set(symbol) -> set:
    return symbol if isinstance(symbol, set) else set()


def _image(channels: set) -> _Dims:
    return _Dims([set(), set(), {("const", c) for c in channels}], hwc=True)


def _pil_image(node, chain, line, ctx, depth=0):
    """The channel counts of a PIL image (``Image.open(p).convert("RGB")``): {3}; None where the
    expression is not one, or is a one-channel image."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(node, ast.Name):
        value = ctx.bindings.value_of(node.id, chain, line)
        return _pil_image(value, chain, line, ctx, depth + 1) if value is not None else None
    if not isinstance(node, ast.Call):
        return None
    q = ctx.qualified(node.func) or ""
    if q == "PIL.Image.open":
        return {3, 4}
    if _method(node, "convert") and node.args and isinstance(node.args[0], ast.Constant):
        mode = node.args[0].value
        if mode in ("RGB", "RGBA", "CMYK", "YCbCr", "HSV", "LAB"):
            return {len(mode)} if _pil_image(node.func.value, chain, line, ctx, depth + 1) is not None else None
        return None
    if _method(node, *_PIL_KEEPS):
        return _pil_image(node.func.value, chain, line, ctx, depth + 1)
    return None


def _comprehension_dims(comp, chain, line, ctx) -> _Dims | None:
    """``[[[v for c in range(C)] for w in range(W)] for h in range(H)]``: [H, W, C], outermost first."""
    dims = []
    node = comp
    while isinstance(node, ast.ListComp):
        if len(node.generators) != 1:
            return None
        gen = node.generators[0]
        it = gen.iter
        if gen.ifs or not (isinstance(it, ast.Call) and getattr(it.func, "id", None) == "range" and len(it.args) == 1):
            return None
        dims.append(_as_set(_symbol(it.args[0], chain, line, ctx)))
        node = node.elt
    if isinstance(node, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
        return None
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) not in ("float", "int", "abs", "round"):
        return None
    return _Dims(dims)


def _unpacked_shape(name, binding, where, ctx) -> int | None:
    """How many dims ``h, w, c = x.shape`` (of this very binding of x) says x has; None if no such line,
    or if the lines disagree: ``b, c, h, w = x.size()`` under ``if x.dim() == 4:`` and ``h, w = x.size()``
    under ``elif x.dim() == 2:`` (piq's resize) say which dims x has on each branch, not on all."""
    counts = set()
    scope = ctx.bindings.scope(where[0])
    for bindings in scope.names.values():
        for b in bindings:
            if b.how != "item" or b.index is None:
                continue
            whole = _whole_shape(b.value)
            if isinstance(whole, ast.Name) and whole.id == name.id:
                same, _ = ctx.bindings.lookup(name.id, where, b.line)
                if same is binding:
                    stmt = next(
                        (
                            s
                            for s in walk(where[0])
                            if isinstance(s, ast.Assign) and s.lineno == b.line and s.value is b.value
                        ),
                        None,
                    )
                    target = stmt.targets[0] if stmt is not None else None
                    if isinstance(target, (ast.Tuple, ast.List)):
                        counts.add(len(target.elts))
    return counts.pop() if len(counts) == 1 else None


def _target(call, ctx):
    """The sizes a view/reshape asks for, and the tensor it is called on."""
    if _method(call, "view", "reshape") and call.args and ctx.qualified(call.func) is None:
        return _shape_args(call.args), call.func.value
    if ctx.qualified(call.func) == "torch.reshape" and len(call.args) == 2:
        return _shape_args([call.args[1]]), call.args[0]
    return None


def _expand(sizes, receiver_key, ndim, chain, line, ctx):
    """Each size as a list of symbol sets (a product ``h * w`` merges dims: several), or "one"/"rest";
    a ``*x.shape[a:b]`` of the receiver itself becomes its dims a..b. None where a size is unknown."""
    out = []
    for s in sizes:
        if isinstance(s, ast.Starred):
            sliced = s.value
            whole = _whole_shape(sliced.value) if isinstance(sliced, ast.Subscript) else _whole_shape(sliced)
            key = _tensor_key(whole, chain, line, ctx) if whole is not None else None
            if key is None or key != receiver_key or ndim is None:
                return None
            if isinstance(sliced, ast.Subscript):
                if not isinstance(sliced.slice, ast.Slice) or sliced.slice.step is not None:
                    return None
                lo = _int(sliced.slice.lower) if sliced.slice.lower is not None else 0
                hi = _int(sliced.slice.upper) if sliced.slice.upper is not None else ndim
                if lo is None or hi is None:
                    return None
                indices = range(ndim)[lo:hi]
            else:
                indices = range(ndim)
            out.extend([[{("dim", key, i)}] for i in indices])
            continue
        factors = _factors(s)
        group = []
        for f in factors:
            sym = _symbol(f, chain, line, ctx)
            if sym is None:
                return None
            if sym in ("one", "rest"):
                if len(factors) > 1:
                    return None
                group = sym
                break
            if ndim is not None:  # x.size(-1) of the receiver: its last dim
                sym = _normalise(sym, receiver_key, ndim)
            group.append(sym)
        out.append(group)
    return out


def _normalise(symbols, receiver_key, ndim):
    out = set()
    for s in symbols:
        if s[0] == "dim" and s[1] == receiver_key and s[2] < 0:
            out.add(("dim", s[1], s[2] + ndim))
        else:
            out.add(s)
    return out


def _factors(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _order(source: _Dims, wanted) -> list[int] | None:
    """The source dims the target reads, in the order it reads them; None where a size is not one of
    the source's own (or names two of them). One size that names no dim, where the source has exactly
    one dim no other size reads (``h, w, _ = img.shape`` then ``.reshape(3, h, w)``), is that dim: the
    element counts must agree."""
    dims = [d for d in source.dims]
    seq, rest_at, unknown_at = [], None, None
    for group in wanted:
        if group == "one":
            continue
        if group == "rest":
            if rest_at is not None:
                return None
            rest_at = len(seq)
            continue
        merged = []
        for sym in group:
            hits = [i for i, d in enumerate(dims) if sym & d]
            if not hits and len(group) == 1 and unknown_at is None:
                unknown_at = len(seq)
                continue
            if len(hits) != 1:
                return None
            merged.append(hits[0])
        seq.extend(sorted(merged))  # a product merges dims: w * h is h * w
    if unknown_at is not None:
        left = [i for i in range(len(dims)) if i not in seq]
        if rest_at is not None or len(left) != 1:
            return None
        seq.insert(unknown_at, left[0])
    if rest_at is not None:
        left = [i for i in range(len(dims)) if i not in seq]
        seq[rest_at:rest_at] = left
    return seq if sorted(seq) == list(range(len(dims))) else None


def _hwc_channel_first(source: _Dims, wanted) -> bool:
    """An [H, W, C] image asked for as (C, ...): the channel count (3, or ``c`` of its shape) first,
    then one or two more sizes, none of them the channel."""
    rest = [g for g in wanted if g != "one"]
    while rest and rest[0] == "rest" and len(rest) > 2:  # view(-1, 3, H, W): a batch of one
        rest = rest[1:]
    if not 2 <= len(rest) <= 3 or rest[0] in ("one", "rest") or len(rest[0]) != 1:
        return False
    channel = source.dims[2]

    def is_channel(group):
        return group not in ("one", "rest") and any(sym & channel for sym in group)

    return is_channel(rest[0]) and not any(is_channel(g) for g in rest[1:])


def _view_moves_axes(node, ctx):
    found = _target(node, ctx)
    if found is None:
        return False
    sizes, receiver = found
    if len(sizes) < 2 and not any(isinstance(s, ast.Starred) for s in sizes):
        return False
    chain, line = ctx.chain(), node.lineno
    if _padded(receiver, chain, line, ctx):
        return False
    source = _dims(receiver, chain, line, ctx)
    receiver_key = _tensor_key(receiver, chain, line, ctx)
    ndim = len(source.dims) if source is not None else None
    if source is None and receiver_key is not None:  # x.view(x.size(2), x.size(0), x.size(1)): x's own sizes
        reads = [_size_read(s) for s in sizes]
        if all(r is not None and _tensor_key(r[0], chain, line, ctx) == receiver_key and r[1] >= 0 for r in reads):
            ndim = max(r[1] for r in reads) + 1
            source = _Dims([{("dim", receiver_key, i)} for i in range(ndim)])
        else:
            source = _star_source(sizes, receiver_key, chain, line, ctx)
            ndim = len(source.dims) if source is not None else None
    if source is None:
        return False
    wanted = _expand(sizes, receiver_key, ndim, chain, line, ctx)
    if wanted is None:
        return False
    order = _order(source, wanted)
    moved = (order is not None and order != sorted(order)) or (source.hwc and _hwc_channel_first(source, wanted))
    if not moved:
        return False
    kind = ctx.kind(receiver)
    if kind == "tensor" or _into_torch(node, ctx):
        return True
    if kind is None and _method(node, "view"):  # NumPy's view takes a dtype, not sizes
        return True
    return UNSURE


def _padded(receiver, chain, line, ctx) -> bool:
    """A freshly padded tensor (``F.pad(x, ...)``): re-cutting its memory in swapped sizes is the skew
    trick of relative attention (Transformer-XL's rel_shift, Longformer's _skew), on purpose."""
    value = ctx.bindings.value_of(receiver.id, chain, line) if isinstance(receiver, ast.Name) else receiver
    return isinstance(value, ast.Call) and ctx.qualified(value.func) in (
        "torch.nn.functional.pad",
        "torch.constant_pad_nd",
    )


def _star_source(sizes, receiver_key, chain, line, ctx):
    """``x.reshape(x.shape[-1], *x.shape[:-1])`` on an x of unknown rank: a rank that makes the sizes
    all of x's dims (tried from 2 to 6, the same answer for each)."""
    if not any(isinstance(s, ast.Starred) for s in sizes):
        return None
    answers = set()
    for ndim in range(2, 7):
        source = _Dims([{("dim", receiver_key, i)} for i in range(ndim)])
        wanted = _expand(sizes, receiver_key, ndim, chain, line, ctx)
        order = _order(source, wanted) if wanted is not None else None
        answers.add(order is not None and order != sorted(order))
    return _Dims([{("dim", receiver_key, i)} for i in range(3)]) if answers == {True} else None


def _into_torch(node, ctx) -> bool:
    """The array is handed straight to torch (``torch.from_numpy(img.reshape(3, h, w))``)."""
    up = ctx.parent(node)
    return isinstance(up, ast.Call) and ctx.qualified(up.func) in _CONVERSIONS[:6]


RULE = Rule(
    "PTF217",
    ("view-instead-of-permute",),
    "view/reshape asked for the tensor's own sizes in another order: it keeps the memory order and only "
    "re-cuts it, so the result has the right shape with scrambled contents (an HWC image viewed as "
    "(C, H, W) mixes the colour planes); use permute to move axes (.permute(2, 0, 1) for HWC to CHW), "
    "view/reshape only to merge or split dims in their order",
    _view_moves_axes,
    nodes=CALL,
    calls=("view", "reshape"),
)
