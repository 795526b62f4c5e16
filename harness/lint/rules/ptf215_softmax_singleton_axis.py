"""What: a softmax (or log_softmax) over an axis the code made size 1: a conv or Linear with one
output, a keepdim reduction, an unsqueeze.
Why: Each slice holds one element: exp(x)/exp(x) = 1 whatever x is, with a derivative of 0: the
weights are all ones and nothing before them gets a gradient.
Fix: softmax over the axis that holds the alternatives (flatten H x W, softmax, reshape back), or a
sigmoid gate.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _kw
from torch_pitfalls.lint.rules.shared.flow import _site_args, branch_side, climb

_SOFTMAX_FUNCTIONS = (
    "torch.nn.functional.softmax",
    "torch.nn.functional.log_softmax",
    "torch.softmax",
    "torch.log_softmax",
    "torch.special.softmax",
    "torch.special.log_softmax",
)
# softmax modules, with the dim a Softmax2d takes (the channels of C x H x W / N x C x H x W)
_SOFTMAX_MODULES = {"torch.nn.Softmax": None, "torch.nn.LogSoftmax": None, "torch.nn.Softmax2d": -3}
_IMPLICIT = object()  # F.softmax(x) without dim: picked from the rank (0 for 0-, 1- and 3-D input, else 1)

_FACTORIES = ("randn", "rand", "zeros", "ones", "empty")
# ops that keep the shape of their first argument
_ELEMENTWISE = frozenset(
    """relu relu6 gelu silu elu selu celu leaky_relu sigmoid tanh softplus hardtanh hardswish hardsigmoid mish
dropout exp abs neg clamp clip""".split()
)
_KEEP_METHODS = frozenset(
    """float double half bfloat16 to cuda cpu contiguous clone detach requires_grad_ type_as
sigmoid tanh relu exp abs neg clamp clamp_min clamp_max sigmoid_ relu_ tanh_""".split()
)
_SCALAR_METHODS = frozenset(("mul", "div", "add", "sub", "true_divide"))
# reductions: keepdim=True keeps the reduced dims as size 1
_REDUCTIONS = frozenset("mean sum amax amin logsumexp prod nansum nanmean std var norm".split())
_TUPLE_REDUCTIONS = frozenset(("max", "min", "median", "mode"))  # (values, indices)
# layers that keep the shape (and the rank) of their input
_SHAPE_KEEPING_LAYERS = frozenset(
    """ReLU ReLU6 GELU SiLU ELU SELU CELU LeakyReLU PReLU Sigmoid Tanh Softplus Hardtanh Hardswish Hardsigmoid Mish
Identity Dropout Dropout1d Dropout2d Dropout3d AlphaDropout BatchNorm1d BatchNorm2d BatchNorm3d InstanceNorm1d
InstanceNorm2d InstanceNorm3d GroupNorm LayerNorm""".split()
)


@dataclass(frozen=True)
class Shape:
    """What is known of a tensor's shape: its rank (None: unknown) and the axes of size 1, each from
    the start (0, 1, ...) or from the end (-1, -2, ...); both forms once the rank is known."""

    rank: int | None
    ones: frozenset

    @staticmethod
    def of(rank, ones) -> Shape:
        found = set(ones)
        if rank is not None:
            found = {a % rank for a in found if -rank <= a < rank}
            found |= {a - rank for a in found}
        return Shape(rank, frozenset(found))

    def one_at(self, dim: int) -> bool:
        return dim in self.ones


def _meet(shapes) -> Shape | None:
    """What several values a name may hold all have: the axes of size 1 in every one."""
    shapes = list(shapes)
    if not shapes or any(s is None for s in shapes):
        return None
    ranks = {s.rank for s in shapes}
    ones = frozenset.intersection(*(s.ones for s in shapes))
    return Shape.of(ranks.pop() if len(ranks) == 1 else None, ones)


def _int(node) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int(node.operand)
        return None if inner is None else -inner
    return None


def _dims(node) -> list[int] | None:
    """``1`` or ``(2, 3)``: the literal dims a reduction is given."""
    if isinstance(node, (ast.Tuple, ast.List)):
        found = [_int(e) for e in node.elts]
        return None if not found or None in found else found
    one = _int(node)
    return None if one is None else [one]


def _true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


class _Shapes:
    """The shapes of expressions in one module, followed through names, ``self.`` attributes, a
    parameter's call sites and what a function of the module returns."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.bindings = ctx.bindings

    # --- names ----------------------------------------------------------------------------
    def of(self, node, chain, line, klass, d=0) -> Shape | None:
        if node is None or d > 14:
            return None
        if isinstance(node, ast.Name):
            return self._name(node.id, chain, line, klass, d + 1)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, chain, line, klass, d + 1)
        if isinstance(node, ast.Call):
            return self._call(node, chain, line, klass, d + 1)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, chain, line, klass, d + 1)
        if isinstance(node, ast.BinOp):
            return self._binop(node, chain, line, klass, d + 1)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return self.of(node.operand, chain, line, klass, d + 1)
        return None

    def _name(self, name, chain, line, klass, d) -> Shape | None:
        binding, where = self.bindings.lookup(name, chain, line)
        if binding is None:
            return None
        if binding.how == "assign":
            return self.of(binding.value, where, binding.line, klass, d)
        if binding.how == "item" and binding.index is not None:
            value = binding.value
            fn = self.bindings._local_function(value, where, binding.line)
            if fn is not None:  # features, weight, logits = attention_logits(device)
                return self._returned(fn, binding.index, d)
            if binding.index in (0, 1) and self._tuple_reduction(value):  # max_out, _ = x.max(1, keepdim=True)
                return self._reduction(value, where, binding.line, klass, d)
            return None
        if binding.how == "param":
            sites = self.bindings.passed(where[0], name)  # with the caller's class
            if sites is None:
                sites = [(v, c, at, None) for v, c, at in _site_args(where[0], name, self.bindings) or ()]
            if not sites:
                return None
            return _meet(self.of(v, c, at, k, d) for v, c, at, k in sites)
        return None

    def _attribute(self, node, chain, line, klass, d) -> Shape | None:
        if node.attr == "values" and self._tuple_reduction(node.value):
            return self._reduction(node.value, chain, line, klass, d)
        if klass is not None and isinstance(node.value, ast.Name) and node.value.id == "self":
            assigned = self.bindings.self_attributes(klass).get(node.attr) or []
            return _meet(self.of(v, (m, self.bindings.tree), at + 1, klass, d) for m, v, at in assigned)
        return None

    def _returned(self, fn, index, d) -> Shape | None:
        values = returned_values(fn, index)
        if values is None:
            return None
        return _meet(self.of(v, (fn, self.bindings.tree), at + 1, None, d) for v, at in values)

    def constructor(self, node, chain, line, klass) -> ast.Call | None:
        """The call that built what a name or ``self.`` attribute holds (the one value it is given)."""
        if isinstance(node, ast.Call):
            return node
        if isinstance(node, ast.Name):
            binding, _ = self.bindings.lookup(node.id, chain, line)
            value = binding.value if binding is not None and binding.how == "assign" else None
            return value if isinstance(value, ast.Call) else None
        if isinstance(node, ast.Attribute) and klass is not None and getattr(node.value, "id", None) == "self":
            assigned = self.bindings.self_attributes(klass).get(node.attr) or []
            calls = {ast.dump(v) for _, v, _ in assigned}
            return assigned[0][1] if len(calls) == 1 and isinstance(assigned[0][1], ast.Call) else None
        return None

    # --- calls ----------------------------------------------------------------------------
    def _call(self, call, chain, line, klass, d) -> Shape | None:  # noqa: C901 - one branch per kind of op
        q = self.ctx.qualified(call.func) or ""
        last = q.rsplit(".", 1)[-1]
        first = call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else None
        if q in tuple(f"torch.{f}" for f in _FACTORIES):
            return _sizes(call.args)
        if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return self.of(_arg(call, 0, "data"), chain, line, klass, d)
        if q.startswith(("torch.nn.functional.", "torch.")) and last in _ELEMENTWISE and q.count(".") <= 3:
            return self.of(first, chain, line, klass, d)
        if q in ("torch.nn.functional.conv1d", "torch.nn.functional.conv2d", "torch.nn.functional.conv3d") or q in (
            "torch.conv1d",
            "torch.conv2d",
            "torch.conv3d",
        ):
            weight = self.of(_arg(call, 1, "weight"), chain, line, klass, d)
            if weight is None or not weight.one_at(0):
                return None
            return _conv_output(int(last[-2]), self.of(first, chain, line, klass, d))
        if q == "torch.nn.functional.linear":
            weight = self.of(_arg(call, 1, "weight"), chain, line, klass, d)
            if weight is None or not weight.one_at(0):
                return None
            inner = self.of(first, chain, line, klass, d)
            return Shape.of(inner.rank if inner else None, {-1})
        if q == "torch.matmul":
            return self._matmul(first, _arg(call, 1, "other"), chain, line, klass, d)
        if q in ("torch.cat", "torch.concat", "torch.concatenate"):
            return self._cat(call, chain, line, klass, d)
        if q == "torch.unsqueeze":
            return _unsqueezed(self.of(first, chain, line, klass, d), _int(_arg(call, 1, "dim")))
        if q.startswith("torch.") and q.count(".") == 1 and last in _REDUCTIONS:
            return self._reduction(call, chain, line, klass, d)
        if isinstance(call.func, ast.Attribute) and not q:
            found = self._method(call, chain, line, klass, d)
            if found is not None:
                return found
        fn = self.bindings._local_function(call, chain, line)
        if fn is not None:
            return self._returned(fn, None, d)
        return self._module_call(call, chain, line, klass, d)

    def _method(self, call, chain, line, klass, d) -> Shape | None:
        attr, receiver = call.func.attr, call.func.value
        if attr in _KEEP_METHODS:
            return self.of(receiver, chain, line, klass, d)
        if attr in _SCALAR_METHODS and len(call.args) == 1 and self.scalar(call.args[0], chain, line, klass):
            return self.of(receiver, chain, line, klass, d)
        if attr == "unsqueeze":
            return _unsqueezed(self.of(receiver, chain, line, klass, d), _int(_arg(call, 0, "dim")))
        if attr in _REDUCTIONS:
            return self._reduction(call, chain, line, klass, d)
        if attr in ("view", "reshape"):
            args = call.args
            if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
                args = args[0].elts
            if not args or any(isinstance(a, ast.Starred) for a in args) or call.keywords:
                return None
            if len(args) == 1 and _int(args[0]) is None:
                return None  # x.view(shape): a size object, not a list of sizes
            return Shape.of(len(args), {i for i, a in enumerate(args) if _int(a) == 1})
        if attr == "matmul" and call.args:
            return self._matmul(receiver, call.args[0], chain, line, klass, d)
        return None

    def _module_call(self, call, chain, line, klass, d) -> Shape | None:
        """A call of an nn.Conv*/nn.Linear with one output (or a Sequential ending in one)."""
        ctor = self.constructor(call.func, chain, line, klass)
        if ctor is None or not call.args:
            return None
        inner = self.of(call.args[0], chain, line, klass, d) if not isinstance(call.args[0], ast.Starred) else None
        return self._layer(ctor, inner)

    def _layer(self, ctor, inner: Shape | None) -> Shape | None:
        q = self.ctx.qualified(ctor.func) or ""
        if not q.startswith("torch.nn."):
            return None
        last = q.rsplit(".", 1)[-1]
        if last in _SHAPE_KEEPING_LAYERS:  # self.bn(self.conv(x)): a norm or activation keeps the conv's shape
            return inner
        if last == "Sequential":
            layers = ctor.args
            if not layers or any(not isinstance(x, ast.Call) for x in layers):
                return None
            shape = inner
            for layer in layers:
                name = (self.ctx.qualified(layer.func) or "").rsplit(".", 1)[-1]
                if name in _SHAPE_KEEPING_LAYERS:
                    continue
                shape = (
                    self._layer(layer, shape) if name.startswith(("Conv", "Linear", "LazyConv", "LazyLinear")) else None
                )
                if shape is None:
                    return None
            return shape if shape is not inner and shape.ones else None
        if last in ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"):
            out = _arg(ctor, 1, "out_channels")
        elif last in ("LazyConv1d", "LazyConv2d", "LazyConv3d"):
            out = _arg(ctor, 0, "out_channels")
        elif last == "Linear":
            out = _arg(ctor, 1, "out_features")
        elif last == "LazyLinear":
            out = _arg(ctor, 0, "out_features")
        else:
            return None
        ones = _int(out) == 1
        if last.endswith("Linear"):
            return Shape.of(inner.rank if inner else None, {-1} if ones else ())
        found = _conv_output(int(last[-2]), inner)
        return found if ones else Shape.of(found.rank, ())

    def _reduction(self, call, chain, line, klass, d) -> Shape | None:
        """``x.mean(dim=1, keepdim=True)``, ``torch.amax(x, 1, keepdim=True)``, ``x.max(1, keepdim=True)``."""
        method = isinstance(call.func, ast.Attribute) and not self.ctx.qualified(call.func)
        name = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        shift = 0 if method else 1
        receiver = call.func.value if method else (call.args[0] if call.args else None)
        if name == "norm":  # norm(p, dim, keepdim)
            dim, keep = _arg(call, 1 + shift, "dim"), _arg(call, 2 + shift, "keepdim")
        elif name in ("std", "var"):
            dim, keep = _arg(call, shift, "dim"), _kw(call, "keepdim")
        else:
            dim, keep = _arg(call, shift, "dim"), _arg(call, 1 + shift, "keepdim")
        dims = _dims(dim)
        if dims is None or not _true(keep):
            return None
        inner = self.of(receiver, chain, line, klass, d)
        rank = inner.rank if inner else None
        return Shape.of(rank, (inner.ones if inner else frozenset()) | set(dims))

    def _tuple_reduction(self, call) -> bool:
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            return False
        name = call.func.attr
        q = self.ctx.qualified(call.func)
        if name not in _TUPLE_REDUCTIONS or (q is not None and q != f"torch.{name}"):
            return False
        shift = 1 if q else 0
        return _dims(_arg(call, shift, "dim")) is not None and _true(_arg(call, 1 + shift, "keepdim"))

    def _cat(self, call, chain, line, klass, d) -> Shape | None:
        seq, dim = _arg(call, 0, "tensors"), _int(_arg(call, 1, "dim") or ast.Constant(0))
        if not isinstance(seq, (ast.List, ast.Tuple)) or not seq.elts or dim is None:
            return None
        shapes = [self.of(e, chain, line, klass, d) for e in seq.elts]
        known = [s for s in shapes if s is not None and s.rank is not None]
        rank = known[0].rank if known else None
        if None in shapes:
            return Shape.of(rank, ()) if rank is not None else None
        met = _meet(shapes)
        if rank is None:
            ones = met.ones - {dim}
        else:
            ones = {a for a in Shape.of(rank, met.ones).ones if a % rank != dim % rank}
        return Shape.of(rank, ones)

    def _matmul(self, a, b, chain, line, klass, d) -> Shape | None:
        """``x @ w`` with ``w`` of shape (..., 1): the result's last axis has size 1."""
        right = self.of(b, chain, line, klass, d)
        if right is None or right.rank is None or right.rank < 2 or not right.one_at(-1):
            return None
        left = self.of(a, chain, line, klass, d)
        rank = max(left.rank, right.rank) if left and left.rank is not None and left.rank >= 2 else None
        return Shape.of(rank, {-1})

    def _subscript(self, node, chain, line, klass, d) -> Shape | None:
        if _int(node.slice) == 0 and self._tuple_reduction(node.value):  # x.max(1, keepdim=True)[0]
            return self._reduction(node.value, chain, line, klass, d)
        index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not any(_is_none(i) for i in index):
            return None
        inner = self.of(node.value, chain, line, klass, d)
        return _indexed(inner, index)

    def _binop(self, node, chain, line, klass, d) -> Shape | None:
        if isinstance(node.op, ast.MatMult):
            return self._matmul(node.left, node.right, chain, line, klass, d)
        if self.scalar(node.right, chain, line, klass):
            return self.of(node.left, chain, line, klass, d)
        if self.scalar(node.left, chain, line, klass):
            return self.of(node.right, chain, line, klass, d)
        left, right = self.of(node.left, chain, line, klass, d), self.of(node.right, chain, line, klass, d)
        if left is None or right is None:
            return None
        # broadcasting: an axis is 1 where it is 1 in both, the axes aligned from the end
        ones = {a for a in left.ones & right.ones if a < 0}
        if left.rank is not None and left.rank == right.rank:
            ones |= left.ones & right.ones
        return Shape.of(left.rank if left.rank == right.rank else None, ones)

    def scalar(self, node, chain, line, klass, d=0) -> bool:
        """A plain number: a literal, arithmetic of numbers and names, ``math.sqrt(d)``, or a name or
        ``self.`` attribute assigned one."""
        if d > 6:
            return False
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        if isinstance(node, ast.UnaryOp):
            return self.scalar(node.operand, chain, line, klass, d + 1)
        if isinstance(node, ast.BinOp):
            sides = [self.scalar(s, chain, line, klass, d + 1) for s in (node.left, node.right)]
            named = [isinstance(s, (ast.Name, ast.Attribute)) for s in (node.left, node.right)]
            return any(sides) and all(s or n for s, n in zip(sides, named))  # dim ** -0.5
        if isinstance(node, ast.Call):
            q = self.ctx.qualified(node.func) or getattr(node.func, "id", "")
            return q in ("math.sqrt", "float", "int", "numpy.sqrt", "np.sqrt")
        if isinstance(node, ast.Name):
            binding, where = self.bindings.lookup(node.id, chain, line)
            return (
                binding is not None
                and binding.how == "assign"
                and self.scalar(binding.value, where, binding.line, klass, d + 1)
            )
        if isinstance(node, ast.Attribute) and klass is not None and getattr(node.value, "id", None) == "self":
            assigned = self.bindings.self_attributes(klass).get(node.attr) or []
            return bool(assigned) and all(
                self.scalar(v, (m, self.bindings.tree), at + 1, klass, d + 1) for m, v, at in assigned
            )
        return False


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _sizes(args) -> Shape | None:
    """``torch.randn(1, 2, 3, 3)`` or ``torch.zeros((n, 1))``: the rank, and the literal 1s."""
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = args[0].elts
    if not args or any(isinstance(a, ast.Starred) for a in args):
        return None
    if len(args) == 1 and _int(args[0]) is None:
        return None  # torch.zeros(shape): a size object
    return Shape.of(len(args), {i for i, a in enumerate(args) if _int(a) == 1})


def _conv_output(n: int, inner: Shape | None) -> Shape:
    """A convolution with one output channel: the channel axis is 1 (axis 0 of an unbatched input,
    else axis 1: a batched N x C x ... input is taken where the rank is unknown)."""
    rank = inner.rank if inner is not None and inner.rank in (n + 1, n + 2) else n + 2
    return Shape.of(rank, {rank - n - 1})


def _unsqueezed(inner: Shape | None, dim: int | None) -> Shape | None:
    if dim is None:
        return None
    if inner is None or inner.rank is None:
        return Shape.of(None, {dim})
    rank = inner.rank + 1
    at = dim % rank
    moved = {a + 1 if a >= at else a for a in inner.ones if a >= 0}
    return Shape.of(rank, moved | {at})


def _indexed(inner: Shape | None, index) -> Shape | None:
    """``x[:, None]``, ``x[..., None]``: full slices and new axes only."""
    ellipsis = [i for i, e in enumerate(index) if isinstance(e, ast.Constant) and e.value is Ellipsis]
    if len(ellipsis) > 1:
        return None
    for e in index:
        full = isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None
        if not (full or _is_none(e) or (isinstance(e, ast.Constant) and e.value is Ellipsis)):
            return None
    split = ellipsis[0] if ellipsis else len(index)
    head, tail = index[:split], index[split + 1 :] if ellipsis else []
    ones = {i for i, e in enumerate(head) if _is_none(e)}
    ones |= {i - len(tail) for i, e in enumerate(tail) if _is_none(e)}
    added = sum(_is_none(e) for e in index)
    rank = inner.rank + added if inner is not None and inner.rank is not None else None
    if rank is not None and not ellipsis:
        kept = {a + sum(_is_none(e) for e in head[: a + 1]) for a in inner.ones if a >= 0}
        ones |= {a for a in kept if a >= len(head) or not _is_none(head[a])}
    return Shape.of(rank, ones)


def _softmax_call(node, ctx):
    """(the tensor, its dim) for a softmax or log_softmax call; None for any other call."""
    q = ctx.qualified(node.func)
    if q in _SOFTMAX_FUNCTIONS:
        dim = _arg(node, 1, "dim")
        return _arg(node, 0, "input"), (_IMPLICIT if dim is None and "functional" in q else dim)
    func = node.func
    if node.args and not isinstance(node.args[0], ast.Starred):
        ctor = (
            func if isinstance(func, ast.Call) else _Shapes(ctx).constructor(func, ctx.chain(), node.lineno, ctx.klass)
        )
        kind = ctx.qualified(ctor.func) if ctor is not None else None
        if kind in _SOFTMAX_MODULES:  # nn.Softmax(dim=1)(x), self.softmax(x)
            if _SOFTMAX_MODULES[kind] is not None:
                return node.args[0], ast.Constant(_SOFTMAX_MODULES[kind])
            dim = _arg(ctor, 0, "dim")
            return node.args[0], (_IMPLICIT if dim is None else dim)
    if isinstance(func, ast.Attribute) and q is None and func.attr in ("softmax", "log_softmax"):
        dim = _arg(node, 0, "dim")  # x.softmax(dim): the tensor method, whose dim is required
        return (func.value, dim) if dim is not None else None
    return None


def _softmax_over_singleton(node, ctx) -> bool:
    found = _softmax_call(node, ctx)
    if found is None:
        return False
    tensor, dim = found
    shape = _Shapes(ctx).of(tensor, ctx.chain(), node.lineno, ctx.klass)
    if shape is None:
        return False
    if dim is _IMPLICIT:
        if shape.rank is None:
            return False
        return shape.one_at(0 if shape.rank in (0, 1, 3) else 1)
    axis = _int(dim)
    return axis is not None and shape.one_at(axis) and not _size_tested(node, tensor, axis, ctx)


def _size_tested(node, tensor, axis: int, ctx) -> bool:
    """The softmax runs under a test of that axis's size (``if logits.shape[1] == 1: sigmoid ... else:
    softmax(logits, dim=1)``): the code tells the one-column case apart itself."""
    want = ast.dump(tensor)

    def reads_size(test) -> bool:
        for n in ast.walk(test):
            if (  # x.shape[axis]
                isinstance(n, ast.Subscript)
                and isinstance(n.value, ast.Attribute)
                and n.value.attr == "shape"
                and ast.dump(n.value.value) == want
                and _int(n.slice) == axis
            ):
                return True
            if (  # x.size(axis)
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr == "size"
                and ast.dump(n.func.value) == want
                and n.args
                and _int(n.args[0]) == axis
            ):
                return True
        return False

    return any(branch_side(up, child) is not None and reads_size(up.test) for up, child in climb(node, ctx))


RULE = Rule(
    "PTF215",
    ("softmax-singleton-axis",),
    "softmax over an axis of size 1 (the code made it so: a conv or Linear with one output, a keepdim "
    "reduction, an unsqueeze): every weight is exactly 1 and no gradient flows back; take the softmax over "
    "the axis that holds the alternatives (flatten H x W, softmax over it, reshape back) or use a sigmoid gate",
    _softmax_over_singleton,
    nodes=CALL,
    needs=("oftmax",),
)
