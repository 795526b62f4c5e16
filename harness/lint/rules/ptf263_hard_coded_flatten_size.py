"""What: feature maps flattened with a hard-coded size, x.view(-1, 16 * 5 * 5) (or reshape); only with --preview:
on a fixed-size dataset the written N is right (read halves: 0 of 8 such findings harmful).
Why: -1 is inferred from the element count: an input larger than the one N was worked out for folds its extra
features into the first dimension (4 images come back as 16 rows of predictions), without an error.
Fix: keep the batch and flatten the rest: torch.flatten(x, 1), x.view(x.size(0), -1) or nn.Flatten();
put an nn.AdaptiveAvgPool2d before it to accept any input size.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _kw, _method
from torch_pitfalls.lint.testcode import in_test_code
from torch_pitfalls.lint.walking import kept_on, walk

# what keeps a feature map a feature map: elementwise functions, normalisations, dropout
_ELEMENTWISE = frozenset(
    """relu relu_ relu6 leaky_relu leaky_relu_ elu elu_ selu celu gelu silu mish hardswish hardtanh sigmoid tanh
softplus prelu dropout dropout1d dropout2d dropout3d alpha_dropout batch_norm instance_norm group_norm
local_response_norm""".split()
)
_ELEMENTWISE_MODULES = frozenset(
    """ReLU ReLU6 LeakyReLU ELU SELU CELU GELU SiLU Mish Hardswish Hardtanh Sigmoid Tanh Softplus PReLU Dropout
Dropout1d Dropout2d Dropout3d AlphaDropout BatchNorm1d BatchNorm2d BatchNorm3d InstanceNorm1d InstanceNorm2d
InstanceNorm3d GroupNorm LocalResponseNorm Identity""".split()
)
# layers whose output keeps spatial extents that depend on the input size
_SPATIAL = frozenset(
    """conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d max_pool1d max_pool2d max_pool3d
avg_pool1d avg_pool2d avg_pool3d lp_pool1d lp_pool2d""".split()
)
_SPATIAL_MODULES = frozenset(
    """Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d MaxPool1d MaxPool2d MaxPool3d AvgPool1d
AvgPool2d AvgPool3d LPPool1d LPPool2d""".split()
)
_KEEP_METHODS = frozenset("contiguous float double half to cuda cpu clone detach relu sigmoid tanh".split())


def _literal_size(node) -> int | None:
    """An int literal, or a product of them (``16 * 5 * 5``): its value."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        a, b = _literal_size(node.left), _literal_size(node.right)
        return a * b if a is not None and b is not None else None
    return None


def _factors(node) -> int:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return 1


def _minus_one(node) -> bool:
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and node.operand.value == 1
    )


def _torch_layer(q: str | None) -> str | None:
    """The last name of a torch.nn layer class (``torch.nn.Conv2d`` -> ``Conv2d``), else None."""
    if q and q.startswith("torch.nn.") and not q.startswith("torch.nn.functional."):
        return q.rsplit(".", 1)[-1]
    return None


def _global_kernel(call) -> bool:
    """A pooling whose kernel is the input's own size (``F.avg_pool2d(x, x.size()[2:])``): 1 x 1 out."""
    kernel = call.args[1] if len(call.args) > 1 else _kw(call, "kernel_size")
    return kernel is not None and any(
        (isinstance(n, ast.Attribute) and n.attr == "shape") or (_method(n, "size")) for n in walk(kernel)
    )


def _layer_kind(name: str | None) -> str | None:
    if name in _SPATIAL_MODULES:
        return "spatial"
    if name in _ELEMENTWISE_MODULES:
        return "keep"
    return None


def _sequential_ends_spatial(ctor, ctx) -> bool:
    """``nn.Sequential(conv, relu, pool)``: the last layer that is not elementwise is a convolution or
    a (non-adaptive) pooling."""
    for layer in reversed(ctor.args):
        if not isinstance(layer, ast.Call):
            return False
        kind = _layer_kind(_torch_layer(ctx.qualified(layer.func)))
        if kind == "spatial":
            return True
        if kind != "keep":
            return False
    return False


def _module_constructor(func, ctx):
    """The call that built the module ``func`` names (``self.features`` or a local name)."""
    if isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self" and ctx.klass is not None:
        assigned = ctx.bindings.self_attributes(ctx.klass).get(func.attr) or []
        return assigned[0][1] if len(assigned) == 1 and isinstance(assigned[0][1], ast.Call) else None
    if isinstance(func, ast.Name):
        value = ctx.value_of(func, func.lineno)
        return value if isinstance(value, ast.Call) else None
    return None


def _spatial(expr, ctx, line: int, depth: int = 0) -> bool:
    """``expr`` is the output of a convolution or pooling (through elementwise layers): a batch of
    feature maps whose height and width follow the input's."""
    if depth > 8:
        return False
    if isinstance(expr, ast.Name):
        binding, _ = ctx.bindings.lookup(expr.id, ctx.chain(), line)
        if binding is None or binding.how != "assign":
            return False
        return _spatial(binding.value, ctx, binding.line, depth + 1)
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    q = ctx.qualified(func)
    if q is not None:
        last = q.rsplit(".", 1)[-1]
        if q.startswith(("torch.nn.functional.", "torch.")) and q.count(".") <= 3:
            if last in _SPATIAL and (q.startswith("torch.nn.functional.") or q.count(".") == 1):
                return not (last.startswith(("max_pool", "avg_pool", "lp_pool")) and _global_kernel(expr))
            if last in _ELEMENTWISE and expr.args:
                return _spatial(expr.args[0], ctx, line, depth + 1)
        return False
    if isinstance(func, ast.Call):  # nn.AvgPool2d(kernel_size=14)(maps)
        kind = _layer_kind(_torch_layer(ctx.qualified(func.func)))
    else:
        held = ctx.held(func)
        if held is None or held.kind != "module":
            if isinstance(func, ast.Attribute) and func.attr in _KEEP_METHODS:  # x.contiguous(), x.relu()
                return _spatial(func.value, ctx, line, depth + 1)
            return False
        name = _torch_layer(held.what)
        kind = _layer_kind(name)
        if name == "Sequential":
            ctor = _module_constructor(func, ctx)
            return ctor is not None and _sequential_ends_spatial(ctor, ctx)
    if kind == "spatial":
        return True
    if kind == "keep" and expr.args:
        return _spatial(expr.args[0], ctx, line, depth + 1)
    return False


def _conv_head_sizes(module) -> frozenset:
    """The in_features of every nn.Linear written as a product of literals (``nn.Linear(16 * 5 * 5, 10)``)
    in a class of this file that also builds a convolution: the flattened size of its feature maps."""
    return kept_on(module, "_ptf263_heads", _find_conv_heads)


def _find_conv_heads(module):
    sizes = set()
    for klass in (n for n in walk(module) if isinstance(n, ast.ClassDef)):
        calls = [n for n in walk(klass) if isinstance(n, ast.Call)]
        names = {getattr(c.func, "attr", getattr(c.func, "id", None)) for c in calls}
        if not names & {"Conv1d", "Conv2d", "Conv3d"}:
            continue
        for c in calls:
            if getattr(c.func, "attr", getattr(c.func, "id", None)) == "Linear" and c.args:
                if _factors(c.args[0]) >= 2 and _literal_size(c.args[0]) is not None:
                    sizes.add(_literal_size(c.args[0]))
    return frozenset(sizes)


def _hard_coded_flatten(node, ctx):
    """``x.view(-1, N)`` / ``x.reshape(-1, N)``, N a literal, on the output of a convolution or pooling;
    or, on a function's parameter, N written as a product of literals that is the flattened size a CNN
    of this file builds its head for. UNSURE: a C*H*W product on a tensor of unknown origin."""
    if not (_method(node, "view", "reshape") and len(node.args) == 2 and not node.keywords):
        return False
    first, size = node.args
    if not _minus_one(first) or _literal_size(size) is None:
        return False
    if in_test_code(ctx.path):
        return False
    receiver = node.func.value
    while _method(receiver, "contiguous"):
        receiver = receiver.func.value
    if _spatial(receiver, ctx, node.lineno):
        return True
    if _factors(size) < 2 or ctx.function is ctx.module:
        return False
    if isinstance(receiver, ast.Name):
        binding, _ = ctx.bindings.lookup(receiver.id, ctx.chain(), node.lineno)
        if binding is not None and binding.how == "param":
            if _literal_size(size) in _conv_head_sizes(ctx.module):
                return True
            return UNSURE if _factors(size) >= 3 else False
    return False


RULE = Rule(
    "PTF263",
    ("hard-coded-flatten-size",),
    "view(-1, N) with N written in: on an input larger than the one N was worked out for, -1 folds the "
    "extra features into the batch dimension (more rows than images, no error); flatten with "
    "torch.flatten(x, 1) or x.view(x.size(0), -1)",
    _hard_coded_flatten,
    nodes=CALL,
    calls=("view", "reshape"),
    needs=("view", "reshape"),
    preview_only="its harm depends on sizes the code does not show",  # harmful only on an input larger than N was worked out for, which the code does not show
    case_at_preview=(
        "the rule reports only with `--preview`, since the folding happens only on an input larger than the one the "
        "size was worked out for, which the code does not show"
    ),
)
