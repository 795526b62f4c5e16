"""What: a batch of feature vectors (or maps) divided by one norm over the whole tensor: x / x.norm(),
x / torch.norm(x).
Why: With no dim the norm is the flattened tensor's: the batch becomes one unit vector, each vector
far shorter than 1 and dependent on its batch.
Fix: normalise each vector: F.normalize(x, dim=1), or x / x.norm(dim=-1, keepdim=True).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import Rule, _arg, _kw
from torch_pitfalls.lint.rules.shared.flow import _site_args

_L2 = (None, 2, 2.0, "fro")
_KEEP_METHODS = frozenset(
    "to cuda cpu float double half bfloat16 detach clone contiguous type_as requires_grad_ relu sigmoid tanh".split()
)
_ELEMENTWISE = frozenset("relu gelu silu elu leaky_relu sigmoid tanh softplus dropout abs exp".split())
_LIKE = frozenset(("randn_like", "rand_like", "zeros_like", "ones_like", "empty_like", "normal_like"))
_FACTORIES = frozenset(("randn", "rand", "zeros", "ones", "empty"))
_BATCH_SIZE_NAMES = frozenset(
    "b bs bsz batch batch_size batchsize n_batch nbatch num_batch n_samples num_samples".split()
)
_NORM_WRAPPERS = frozenset(("clamp", "clamp_min", "clamp_", "clamp_min_", "add", "detach", "item"))


def _value(node, ctx, line):
    """What a name was assigned just above (one step), or the expression."""
    return ctx.value_of(node, line) or node if isinstance(node, ast.Name) else node


def _scalarish(node) -> bool:
    return isinstance(node, (ast.Constant, ast.Name, ast.Attribute))


def _squared(node, ctx):
    """``x ** 2``, ``x.pow(2)``, ``torch.pow(x, 2)``, ``x * x``, ``x.square()``: the ``x``."""
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant) and node.right.value == 2:
            return node.left
        if isinstance(node.op, ast.Mult) and ast.dump(node.left) == ast.dump(node.right):
            return node.left
        return None
    if isinstance(node, ast.Call):
        q = ctx.qualified(node.func)
        if q in ("torch.square",) and node.args:
            return node.args[0]
        if q == "torch.pow" and len(node.args) == 2 and getattr(node.args[1], "value", None) == 2:
            return node.args[0]
        if isinstance(node.func, ast.Attribute) and q is None:
            if node.func.attr == "square" and not node.args:
                return node.func.value
            if node.func.attr == "pow" and len(node.args) == 1 and getattr(node.args[0], "value", None) == 2:
                return node.func.value
    return None


def _sum_of_squares(node, ctx):
    """``(x ** 2).sum()`` or ``torch.sum(x ** 2)`` over every element: the ``x``."""
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    q = ctx.qualified(node.func)
    if q == "torch.sum" and len(node.args) == 1:
        return _squared(node.args[0], ctx)
    if q is None and isinstance(node.func, ast.Attribute) and node.func.attr == "sum" and not node.args:
        return _squared(node.func.value, ctx)
    return None


def _whole_norm(node, ctx, line, depth=0):  # noqa: C901 - one branch per spelling of a norm
    """The tensor whose L2 norm over every element ``node`` is, or None."""
    if depth > 4:
        return None
    node = _value(node, ctx, line)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # norm + eps
        for a, b in ((node.left, node.right), (node.right, node.left)):
            if _scalarish(b):
                found = _whole_norm(a, ctx, line, depth + 1)
                if found is not None:
                    return found
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):  # (sum of squares) ** 0.5
        return _sum_of_squares(node.left, ctx) if getattr(node.right, "value", None) == 0.5 else None
    if not isinstance(node, ast.Call):
        return None
    q = ctx.qualified(node.func)
    func = node.func
    if isinstance(func, ast.Name) and func.id == "max" and q is None and len(node.args) == 2:  # max(norm, eps)
        return _whole_norm(node.args[0], ctx, line, depth + 1)
    if q == "torch.clamp" and node.args:
        return _whole_norm(node.args[0], ctx, line, depth + 1)
    if q == "torch.sqrt" and len(node.args) == 1:
        return _sum_of_squares(_strip_eps(node.args[0]), ctx)
    if q == "torch.norm":
        if _arg(node, 2, "dim") is not None or _has(node, "dim") or not _l2(_arg(node, 1, "p")):
            return None
        return _arg(node, 0, "input")
    if q == "torch.linalg.norm":
        if _arg(node, 2, "dim") is not None or _has(node, "dim") or not _l2(_arg(node, 1, "ord")):
            return None
        return _arg(node, 0, "A")
    if q == "torch.linalg.vector_norm":
        if _arg(node, 2, "dim") is not None or _has(node, "dim") or not _l2(_arg(node, 1, "ord")):
            return None
        return _arg(node, 0, "x")
    if q is not None or not isinstance(func, ast.Attribute):
        return None
    if func.attr == "norm":
        if _arg(node, 1, "dim") is not None or _has(node, "dim") or not _l2(_arg(node, 0, "p")):
            return None
        return func.value
    if func.attr == "sqrt" and not node.args:
        return _sum_of_squares(_strip_eps(func.value), ctx)
    if func.attr in _NORM_WRAPPERS:
        return _whole_norm(func.value, ctx, line, depth + 1)
    return None


def _strip_eps(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _scalarish(node.right):
        return node.left
    return node


def _has(call, name) -> bool:
    return any(k.arg in (name, None) for k in call.keywords)


def _l2(p) -> bool:
    return p is None or (isinstance(p, ast.Constant) and p.value in _L2 and not isinstance(p.value, bool))


def _same(a, b) -> bool:
    """The same expression (a name stored to, ``x /= ...``, is the name read), ``.detach()`` aside."""

    def text(n):
        if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "detach" and not n.args:
            n = n.func.value
        return ast.unparse(n)

    return a is not None and b is not None and text(a) == text(b)


class _Batches:
    """Whether an expression holds a batch: a module's output, a DataLoader's batch, a tensor made
    with a batch axis first, or what these become through ops that keep the batch axis."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.bindings = ctx.bindings

    def of(self, node, chain, line, klass, d=0) -> bool:  # noqa: C901 - one branch per kind of expression
        if node is None or d > 12:
            return False
        if isinstance(node, ast.Name):
            return self._name(node.id, chain, line, klass, d + 1)
        if isinstance(node, ast.Attribute):
            return node.attr == "data" and self.of(node.value, chain, line, klass, d + 1)
        if isinstance(node, ast.Subscript):  # x[:k], x[a:b, ...]: still a batch; x[0]: one sample
            index = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) and node.slice.elts else node.slice
            return isinstance(index, ast.Slice) and self.of(node.value, chain, line, klass, d + 1)
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.MatMult):
                return self.of(node.left, chain, line, klass, d + 1)
            return self.of(node.left, chain, line, klass, d + 1) or self.of(node.right, chain, line, klass, d + 1)
        if isinstance(node, ast.UnaryOp):
            return self.of(node.operand, chain, line, klass, d + 1)
        if isinstance(node, ast.Call):
            return self._call(node, chain, line, klass, d + 1)
        return False

    def _name(self, name, chain, line, klass, d) -> bool:
        binding, where = self.bindings.lookup(name, chain, line)
        if binding is None:
            return False
        if binding.how == "assign":
            return self.of(binding.value, where, binding.line, klass, d)
        if binding.how == "item":
            fn = self.bindings._local_function(binding.value, where, binding.line)
            if fn is not None:
                return binding.index is not None and self._returned(fn, binding.index, d)
            return self._loader_batch(binding.value, where, binding.line, klass) or (
                binding.index == 0 and self._torch_module_call(binding.value, where, binding.line, klass)
            )
        if binding.how == "iter":
            held = self.bindings.held(ast.Name(id=name, ctx=ast.Load()), chain, line, klass)
            return held is not None and held.what == "batch"
        if binding.how == "param":
            sites = _call_sites(where[0], name, self.bindings)
            return bool(sites) and all(self.of(v, c, at, k, d) for v, c, at, k in sites)
        return False

    def _returned(self, fn, index, d) -> bool:
        values = returned_values(fn, index)
        return bool(values) and all(self.of(v, (fn, self.bindings.tree), at + 1, None, d) for v, at in values)

    def _loader_batch(self, node, chain, line, klass) -> bool:
        held = self.bindings.held(node, chain, line, klass)
        return held is not None and held.kind == "tensor" and held.what == "batch"

    def _torch_module_call(self, call, chain, line, klass) -> bool:
        """``out, state = self.lstm(x)``: the output of a torch.nn layer that returns a tuple."""
        if not isinstance(call, ast.Call):
            return False
        held = self.bindings.held(call.func, chain, line, klass)
        return held is not None and held.kind == "module" and (held.what or "").startswith("torch.nn.")

    def _call(self, call, chain, line, klass, d) -> bool:  # noqa: C901 - one branch per kind of op
        if self._loader_batch(call, chain, line, klass):
            return True
        q = self.ctx.qualified(call.func) or ""
        last = q.rsplit(".", 1)[-1]
        first = call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else None
        if q.startswith("torch.") and last in _LIKE:
            return self.of(first, chain, line, klass, d)
        if q.startswith("torch.") and q.count(".") == 1 and last in _FACTORIES:
            return self._made_as_batch(call, chain, line, klass, d)
        if q.startswith(("torch.nn.functional.", "torch.")) and (
            last in _ELEMENTWISE or last.startswith(("avg_pool", "max_pool", "adaptive_"))
        ):
            return self.of(first, chain, line, klass, d)
        if q in ("torch.cat", "torch.concat", "torch.concatenate"):
            seq = _arg(call, 0, "tensors")
            return (
                isinstance(seq, (ast.List, ast.Tuple))
                and bool(seq.elts)
                and all(self.of(e, chain, line, klass, d) for e in seq.elts)
            )
        if q:
            return False
        func = call.func
        if isinstance(func, ast.Attribute):
            receiver = func.value
            if func.attr in _KEEP_METHODS:
                return self.of(receiver, chain, line, klass, d)
            if func.attr in ("view", "reshape") and call.args:
                return self._batch_size(call.args[0], chain, line, klass, d) and self.of(
                    receiver, chain, line, klass, d
                )
            if func.attr == "flatten":
                start = _arg(call, 0, "start_dim")
                return isinstance(start, ast.Constant) and start.value == 1 and self.of(receiver, chain, line, klass, d)
            if func.attr == "forward":
                held = self.bindings.held(receiver, chain, line, klass)
                return held is not None and held.kind == "module" and not self._one_sample(call, chain, line)
        fn = self.bindings._local_function(call, chain, line)
        if fn is not None:
            return self._returned(fn, None, d)
        held = self.bindings.held(func, chain, line, klass)
        if held is None or held.kind != "module" or not call.args:
            return False
        return not self._one_sample(call, chain, line)  # what a model returns for its input batch

    def _one_sample(self, call, chain, line) -> bool:
        """A module called on one sample: ``x.unsqueeze(0)``, ``x[None]``, ``x.view(1, ...)``, a 1-D tensor."""
        arg = call.args[0] if call.args else None
        for _ in range(3):
            if isinstance(arg, ast.Name):
                binding, where = self.bindings.lookup(arg.id, chain, line)
                if binding is None or binding.how != "assign":
                    return False
                arg, chain, line = binding.value, where, binding.line
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute):
            name, args = arg.func.attr, arg.args
            if name in ("unsqueeze", "unsqueeze_") and args and getattr(args[0], "value", None) == 0:
                return True
            if name in ("view", "reshape", "expand") and args and getattr(args[0], "value", None) == 1:
                return True
            q = self.ctx.qualified(arg.func) or ""
            if q.startswith("torch.") and q.rsplit(".", 1)[-1] in _FACTORIES:
                sizes = _sizes(arg)
                return sizes is not None and (len(sizes) == 1 or getattr(sizes[0], "value", None) == 1)
        if isinstance(arg, ast.Subscript):
            index = arg.slice.elts[0] if isinstance(arg.slice, ast.Tuple) and arg.slice.elts else arg.slice
            return isinstance(index, ast.Constant) and index.value is None
        return False

    def _made_as_batch(self, call, chain, line, klass, d) -> bool:
        """``torch.randn(4, 3, 32, 32)`` (N x C x H x W data: four or more dims, not a parameter), or
        ``torch.randn(batch_size, dim)`` (the first size a batch size)."""
        if _true(_kw(call, "requires_grad")):
            return False
        if isinstance(self.ctx.function, ast.FunctionDef) and "init" in self.ctx.function.name:
            return False  # weights being built
        sizes = _sizes(call)
        if not sizes or len(sizes) < 2 or getattr(sizes[0], "value", None) == 1:
            return False
        return len(sizes) >= 4 or self._batch_size(sizes[0], chain, line, klass, d)

    def _batch_size(self, node, chain, line, klass, d) -> bool:
        """``batch_size``, ``bs``, ``x.size(0)``, ``x.shape[0]`` or ``len(x)`` of a batch."""
        name = getattr(node, "id", getattr(node, "attr", None))
        if isinstance(node, (ast.Name, ast.Attribute)) and (name or "").lower() in _BATCH_SIZE_NAMES:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size":
            return len(node.args) == 1 and _zero(node.args[0]) and self.of(node.func.value, chain, line, klass, d)
        if isinstance(node, ast.Subscript) and _zero(node.slice) and isinstance(node.value, ast.Attribute):
            return node.value.attr == "shape" and self.of(node.value.value, chain, line, klass, d)
        return False


def _call_sites(fn, param, bindings):
    """(value, caller's scopes, line, caller's class) for what each call of the module passes."""
    sites = bindings.passed(fn, param)
    if sites is not None:
        return sites
    return [(v, c, at, None) for v, c, at in _site_args(fn, param, bindings) or ()]


def _zero(node) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and type(node.value) is int


def _true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _sizes(call):
    args = call.args
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = args[0].elts
    if not args or any(isinstance(a, ast.Starred) for a in args):
        return None
    if len(args) == 1 and not isinstance(args[0], ast.Constant):
        return None  # torch.zeros(shape): a size object
    return args


def _division(node, ctx):
    """(what is divided, the divisor) for ``a / b``, ``a /= b``, ``a.div(b)``, ``torch.div(a, b)``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return node.left, node.right
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div):
        return node.target, node.value
    if isinstance(node, ast.Call) and len(node.args) >= 1:
        q = ctx.qualified(node.func)
        if q in ("torch.div", "torch.true_divide") and len(node.args) == 2:
            return node.args[0], node.args[1]
        if q is None and isinstance(node.func, ast.Attribute) and node.func.attr in ("div", "div_", "true_divide"):
            return node.func.value, node.args[0]
    return None


def _whole_tensor_l2_of_a_batch(node, ctx) -> bool:
    found = _division(node, ctx)
    if found is None:
        return False
    x, divisor = found
    line = getattr(node, "lineno", 1 << 30)
    normed = _whole_norm(divisor, ctx, line)
    if not _same(normed, x):
        return False
    return _Batches(ctx).of(x, ctx.chain(), line, ctx.klass)


RULE = Rule(
    "PTF219",
    ("l2-normalize-all-dims",),
    "a batch divided by one norm over the whole tensor (x / x.norm(): no dim): the batch becomes one unit "
    "vector, each feature vector far shorter than 1 and dependent on the rest of the batch; normalise each "
    "vector: F.normalize(x, dim=1), or x / x.norm(dim=-1, keepdim=True)",
    _whole_tensor_l2_of_a_batch,
    nodes=(ast.BinOp, ast.AugAssign, ast.Call),
)
