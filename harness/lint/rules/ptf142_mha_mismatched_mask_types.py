"""What: nn.MultiheadAttention (or an nn.Transformer* module) called with a float attention mask and a
bool key padding mask (or the other way round).
Why: Since torch 2.0 every such call warns: "Support for mismatched key_padding_mask and attn_mask is
deprecated. Use same type for both instead."
Fix: give both masks one type; bool (True = do not attend) is quiet on every release from 1.13.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import CALL, Rule, _kw
from torch_pitfalls.lint.rules.shared.flow import context_at
from torch_pitfalls.lint.walking import walk

FLOAT, BOOL = "float", "bool"
_MHA = ("MultiheadAttention",)
_ENCODER_LAYER = ("TransformerEncoderLayer",)
_ENCODER = ("TransformerEncoder",)
_DECODER = ("TransformerDecoder", "TransformerDecoderLayer")
_TRANSFORMER = ("Transformer",)
# module class -> (its forward's positional parameters, the (attention mask, padding mask) pairs)
SIGNATURES = {
    _MHA: (
        ("query", "key", "value", "key_padding_mask", "need_weights", "attn_mask"),
        (("attn_mask", "key_padding_mask"),),
    ),
    _ENCODER_LAYER: (("src", "src_mask", "src_key_padding_mask"), (("src_mask", "src_key_padding_mask"),)),
    _ENCODER: (("src", "mask", "src_key_padding_mask"), (("mask", "src_key_padding_mask"),)),
    _DECODER: (
        ("tgt", "memory", "tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask"),
        (("tgt_mask", "tgt_key_padding_mask"), ("memory_mask", "memory_key_padding_mask")),
    ),
    _TRANSFORMER: (
        (
            "src",
            "tgt",
            "src_mask",
            "tgt_mask",
            "memory_mask",
            "src_key_padding_mask",
            "tgt_key_padding_mask",
            "memory_key_padding_mask",
        ),
        (
            ("src_mask", "src_key_padding_mask"),
            ("tgt_mask", "tgt_key_padding_mask"),
            ("memory_mask", "memory_key_padding_mask"),
        ),
    ),
}
PADDING_KEYWORDS = ("key_padding_mask", "src_key_padding_mask", "tgt_key_padding_mask", "memory_key_padding_mask")
FLOAT_DTYPES = ("float", "float32", "float16", "float64", "half", "double", "bfloat16")
DTYPES = (*FLOAT_DTYPES, "bool", "uint8", "int8", "int16", "int32", "int64", "long", "int", "short")
DEFAULT_FLOAT_FACTORIES = ("zeros", "ones", "empty", "rand", "randn")


def _signature(node, ctx):
    """The forward signature of the torch.nn attention module a call calls, or None."""
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "forward":
        func = func.value
    held = ctx.held(func)
    if held is None or held.kind != "module" or not (held.what or "").startswith("torch.nn."):
        return None
    last = held.what.rsplit(".", 1)[-1]
    return next((sig for names, sig in SIGNATURES.items() if last in names), None)


def _dtype_name(node) -> str | None:
    """``torch.bool`` -> bool, ``torch.float32`` -> float (by the attribute's name)."""
    name = getattr(node, "attr", None)
    if name == "bool":
        return BOOL
    if name in FLOAT_DTYPES:
        return FLOAT
    return None


def _literal_type(node) -> str | None:
    """A nested list of bool (or float) literals."""
    if isinstance(node, (ast.List, ast.Tuple)):
        kinds = {_literal_type(e) for e in node.elts}
        return kinds.pop() if len(kinds) == 1 else None
    if isinstance(node, ast.Constant):
        return BOOL if type(node.value) is bool else FLOAT if type(node.value) is float else None
    return None


def _float_value(node) -> bool:
    """``float("-inf")``, ``-1e9``, ``-math.inf``, ``0.0``: a float fill value."""
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.Constant):
        return type(node.value) is float
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "float":
        return True
    return getattr(node, "attr", None) == "inf"


def _mask_type(expr, ctx, chain, line: int, depth: int = 0) -> str | None:  # noqa: C901 - one branch per spelling
    """FLOAT or BOOL where how the mask is built shows it, else None."""
    if depth > 8 or expr is None:
        return None
    bindings = ctx.bindings
    if isinstance(expr, ast.Name):
        binding, where = bindings.lookup(expr.id, chain, line)
        if binding is not None and binding.how == "param":
            return _passed_type(expr.id, where[0], ctx, depth)
        if binding is not None and binding.how == "item" and isinstance(binding.value, ast.Tuple):
            elts = binding.value.elts  # mask, pad = causal_mask(t), ids == PAD
            index = binding.index
            return _mask_type(elts[index], ctx, where, binding.line, depth + 1) if index < len(elts) else None
        if binding is None or binding.how != "assign":
            return None
        if isinstance(binding.value, (ast.List, ast.Tuple)):
            return None  # a Python list is not a mask; torch.tensor(...) of it is read below
        return _mask_type(binding.value, ctx, where, binding.line, depth + 1)
    if isinstance(expr, ast.Compare) and not any(
        isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in expr.ops
    ):
        return BOOL
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Invert):
        return BOOL if _mask_type(expr.operand, ctx, chain, line, depth + 1) == BOOL else None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.BitOr, ast.BitAnd)):
        sides = {_mask_type(s, ctx, chain, line, depth + 1) for s in (expr.left, expr.right)}
        return BOOL if sides == {BOOL} else None
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    q = ctx.qualified(func) or ""
    if isinstance(func, ast.Attribute) and not q.startswith("torch."):
        attr = func.attr
        if attr == "bool" and not expr.args:
            return BOOL
        if attr in ("float", "half", "double", "bfloat16") and not expr.args:
            return FLOAT
        if attr in ("to", "type"):
            dtype = _kw(expr, "dtype") or next((a for a in expr.args if getattr(a, "attr", None) in DTYPES), None)
            if dtype is not None:
                return _dtype_name(dtype)
            return _mask_type(func.value, ctx, chain, line, depth + 1)  # .to(device) keeps the type
        if attr in (
            "masked_fill",
            "masked_fill_",
            "triu",
            "tril",
            "triu_",
            "tril_",
            "transpose",
            "t",
            "unsqueeze",
            "squeeze",
            "view",
            "reshape",
            "expand",
            "repeat",
            "contiguous",
            "clone",
            "detach",
            "cuda",
            "cpu",
        ):
            return _mask_type(func.value, ctx, chain, line, depth + 1)
        if attr == "generate_square_subsequent_mask":
            return _subsequent_mask(expr, ctx)
        return None
    if q.startswith("torch."):
        last = q.rsplit(".", 1)[-1]
        if last == "generate_square_subsequent_mask":
            return _generated_mask(expr)
        dtype = _kw(expr, "dtype")
        if last in ("tensor", "as_tensor"):
            if dtype is not None:
                return _dtype_name(dtype)
            data = expr.args[0] if expr.args else None
            if isinstance(data, ast.Name):
                data = bindings.value_of(data.id, chain, line)
            return _literal_type(data)
        if last in DEFAULT_FLOAT_FACTORIES or last in ("zeros_like", "ones_like", "full", "eye"):
            if dtype is not None:
                return _dtype_name(dtype)
            if last == "full":
                fill = expr.args[1] if len(expr.args) > 1 else _kw(expr, "fill_value")
                if isinstance(fill, ast.Constant) and type(fill.value) is bool:
                    return BOOL
                return FLOAT if _float_value(fill) else None
            return FLOAT if last in DEFAULT_FLOAT_FACTORIES or last == "eye" else None
        if last in ("triu", "tril") and expr.args:
            return _mask_type(expr.args[0], ctx, chain, line, depth + 1)
        return None
    if isinstance(func, ast.Name):  # a function of this module: what every return of it builds
        fn = bindings.module_function(func.id)
        binding, _ = bindings.lookup(func.id, chain, line)
        if fn is None or (binding is not None and binding.value is not fn):
            return None
        returned = returned_values(fn) or []
        kinds = {_mask_type(v, ctx, (fn, ctx.module), at + 1, depth + 1) for v, at in returned}
        return kinds.pop() if len(kinds) == 1 else None
    return None


def _passed_type(param: str, fn, ctx, depth: int) -> str | None:
    """The mask type every call of ``fn`` in the file passes for ``param``, when they agree: a function's or a
    method's calls (bindings.passed), or for the ``forward`` of a module class of the file, the calls of its
    instances (``for block in self.blocks: x = block(x, mask, pad)``)."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    sites = ctx.bindings.passed(fn, param)
    if sites is None and fn.name == "forward":
        sites = _instance_calls(fn, param, ctx)
    kinds = {_mask_type(value, ctx, chain, at, depth + 1) for value, chain, at, _ in sites or ()}
    return kinds.pop() if len(kinds) == 1 else None


def _instance_calls(forward, param: str, ctx) -> list | None:
    """What the file's calls of instances of ``forward``'s module class pass for ``param``: [(value, scopes,
    line, class)]; None where a call passes ``*args``/``**kw`` or none is found."""
    klass = ctx.bindings._owner_class(forward)
    names = [a.arg for a in forward.args.args[1:]]
    if klass is None or param not in names or not ctx.bindings.is_module_class(klass):
        return None
    out = []
    for node in walk(ctx.module):
        if not (isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))):
            continue
        site = context_at(node, ctx)
        held = site.held(node.func, node.lineno) if site is not None else None
        if held is None or held.kind != "module" or held.what != klass.name:
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        given = dict(zip(names, node.args)) | {k.arg: k.value for k in node.keywords}
        if param in given:
            out.append((given[param], site.chain(), node.lineno, site.klass))
    return out or None


def _subsequent_mask(call, ctx) -> str | None:
    """``x.generate_square_subsequent_mask(n)``: torch's (nn.Transformer's) returns a float 0 / -inf mask;
    a method of a class of this file is read from its returns."""
    receiver = call.func.value
    if isinstance(receiver, ast.Name) and receiver.id == "self" and ctx.klass is not None:
        method = next((m for m in ctx.klass.body if isinstance(m, ast.FunctionDef) and m.name == call.func.attr), None)
        if method is None:
            return None
        kinds = {_mask_type(v, ctx, (method, ctx.module), at + 1) for v, at in returned_values(method) or []}
        return kinds.pop() if len(kinds) == 1 else None
    held = ctx.held(receiver)
    return _generated_mask(call) if held is not None and (held.what or "").startswith("torch.nn.Transformer") else None


def _generated_mask(call) -> str | None:
    """torch's ``generate_square_subsequent_mask``: a float 0 / -inf mask, or the ``dtype=`` it is asked
    for (``dtype=torch.bool`` gives a bool mask; one read from a variable is unknown)."""
    dtype = _kw(call, "dtype")
    return FLOAT if dtype is None else _dtype_name(dtype)


def _mismatched_masks(node, ctx) -> bool:
    if not (
        isinstance(node, ast.Call) and (any(k.arg in PADDING_KEYWORDS for k in node.keywords) or len(node.args) > 3)
    ):
        return False
    sig = _signature(node, ctx)
    if sig is None:
        return False
    params, pairs = sig
    given = dict(zip(params, node.args))
    given.update({k.arg: k.value for k in node.keywords if k.arg is not None})
    chain = ctx.chain()
    for attn, padding in pairs:
        if attn in given and padding in given:
            kinds = {
                _mask_type(given[attn], ctx, chain, node.lineno),
                _mask_type(given[padding], ctx, chain, node.lineno),
            }
            if kinds == {FLOAT, BOOL}:
                return True
    return False


RULE = Rule(
    "PTF142",
    ("mha-mismatched-mask-types",),
    "an attention mask and a key padding mask of different types (one float, one bool) make "
    "nn.MultiheadAttention warn on every call since torch 2.0 (mismatched key_padding_mask and attn_mask is "
    "deprecated); build both as bool (True = do not attend)",
    _mismatched_masks,
    nodes=CALL,
    upgrade=True,
    needs=("MultiheadAttention", "Transformer"),
)
