"""What: An in-place write to a tensor made by torch.from_numpy from an array that is still used.
Why: The tensor shares memory with the NumPy array: the write changes the array too.
Fix: copy first (torch.tensor(arr)) or write it out of place (x = x - m).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import arguments
from torch_pitfalls.lint.rules.base import Rule, _arg, _const, _is_call_to, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _BUILTINS
from torch_pitfalls.lint.walking import walk

_INPLACE_METHODS = (
    "add_",
    "sub_",
    "mul_",
    "div_",
    "clamp_",
    "clip_",
    "fill_",
    "zero_",
    "copy_",
    "normal_",
    "uniform_",
    "masked_fill_",
    "pow_",
    "sqrt_",
    "exp_",
    "log_",
    "abs_",
    "neg_",
    "round_",
)


def _shares_numpy_memory(name: ast.Name, ctx, line: int) -> bool:
    value = ctx.value_of(name, line)
    if not (_is_call_to(value, ctx, "torch.from_numpy") and value.args):
        return False
    array = value.args[0]
    if _fresh_array(array, ctx):
        return False
    return not _local_array_done_with(array, value, ctx)


def _local_array_done_with(array, call, ctx) -> bool:
    """``torch.from_numpy(buf)`` where ``buf`` is an array this function made itself (``np.full(...)``,
    then filled) and never reads again after handing it over: the tensor is the array's only user, so
    writing through it changes nothing anyone else sees. A module-level name is a global: anyone
    (a notebook, an importer) may read it later."""
    if not isinstance(array, ast.Name) or not isinstance(ctx.function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    made = ctx.value_of(array, call.lineno)
    if made is None or not _fresh_array(made, ctx):
        return False
    return not any(
        isinstance(n, ast.Name)
        and n.id == array.id
        and isinstance(n.ctx, ast.Load)
        and (n.lineno, n.col_offset) > (call.end_lineno or call.lineno, call.end_col_offset or 0)
        for n in walk(ctx.function)
    )


# what a NumPy random generator (np.random.default_rng(seed), RandomState(seed)) is made by: its
# sampling methods (rng.integers, rng.normal, ...) return a new array each call
_NUMPY_GENERATORS = ("numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator")


_NUMPY_PASS_THROUGH = ("numpy.asarray", "numpy.ascontiguousarray", "numpy.asanyarray", "numpy.require")


# a random generator's sampling methods (NumPy's RandomState and Generator): each call returns a new array
_SAMPLERS = frozenset(
    (
        "rand",
        "randn",
        "randint",
        "random",
        "random_sample",
        "uniform",
        "normal",
        "integers",
        "choice",
        "permutation",
        "standard_normal",
        "binomial",
        "poisson",
        "beta",
        "exponential",
        "multinomial",
    )
)


def _fresh_array(expr, ctx) -> bool:
    """An array made for this call that no one else holds: ``a.astype(t)`` (a copy unless copy=False),
    ``a.copy()``, ``np.array(a)`` (copy=True by default), and np.ascontiguousarray/np.asarray of one of
    those (they pass an array through, so only a fresh one stays fresh). A name, a view or a slice
    is the caller's array: writing through the tensor changes it. Arithmetic and comparisons make a
    new array (``rng.rand(n) < p``), and so does a function called by plain name (``load_image(p)``,
    ``ensure_rng(r).rand(n)``'s helper) or through another library's module (``filters.mel(...)``) as
    far as this file can tell: no one else holds its result."""
    if isinstance(expr, (ast.Compare, ast.BinOp, ast.UnaryOp)):
        return True
    if not isinstance(expr, ast.Call):
        return False
    q = ctx.qualified(expr.func) or ""
    if isinstance(expr.func, ast.Name) and expr.func.id not in _BUILTINS and not q.startswith("numpy."):
        return True  # bbox_overlaps(a, b), load_image(p): another module's function returns its own array
    if isinstance(expr.func, ast.Attribute) and q and not q.startswith(("numpy.", "torch.")):
        return True  # librosa.filters.mel(...), cv2.imread(p): the same, through the module's name
    if isinstance(expr.func, ast.Attribute) and not q and expr.func.attr in _SAMPLERS:
        return True  # rng.randint(...), whatever made rng: a sample is a new array
    if _method(expr, "copy") and not expr.args:
        return True
    if _method(expr, "astype"):
        copy = _arg(expr, 3, "copy")
        return copy is None or not _const(copy, False)
    q = ctx.qualified(expr.func) or ""
    if isinstance(expr.func, ast.Attribute) and isinstance(expr.func.value, ast.Name) and not q:
        maker = ctx.value_of(expr.func.value, expr.lineno)  # rng.integers(...) on rng = np.random.default_rng()
        return isinstance(maker, ast.Call) and ctx.qualified(maker.func) in _NUMPY_GENERATORS
    if q in _NUMPY_PASS_THROUGH:
        return bool(expr.args) and _fresh_array(expr.args[0], ctx)
    if q in ("numpy.array", "numpy.copy"):
        copy = _kw(expr, "copy")
        return copy is None or not _const(copy, False)
    return q in _NUMPY_MAKERS or q.startswith("numpy.random.")


# NumPy functions that always return a new array (not np.reshape, np.transpose, np.flip...: views)
_NUMPY_MAKERS = frozenset(
    f"numpy.{f}"
    for f in """arange zeros ones empty full linspace logspace eye identity
concatenate stack vstack hstack zeros_like ones_like empty_like full_like""".split()
)


def _inplace_on_from_numpy(node, ctx) -> bool:
    """An in-place write to a tensor made by torch.from_numpy: the NumPy array changes with it. The
    write may be in a function of this module the tensor is handed to (``normalize_(x, mean, std)``,
    which does ``x.sub_(mean)``): reported at the call."""
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return _shares_numpy_memory(node.target, ctx, node.lineno)
    if isinstance(node, ast.Call) and _method(node, *_INPLACE_METHODS) and isinstance(node.func.value, ast.Name):
        return _shares_numpy_memory(node.func.value, ctx, node.lineno)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        helper = ctx.bindings.module_function(node.func.id)
        return helper is not None and any(
            isinstance(value, ast.Name)
            and _shares_numpy_memory(value, ctx, node.lineno)
            and _writes_in_place(helper, param)
            for param, value in arguments(node, helper).items()
        )
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Subscript)
        and isinstance(node.targets[0].value, ast.Name)
    ):
        return _shares_numpy_memory(node.targets[0].value, ctx, node.lineno)
    return False


def _writes_in_place(fn, param: str) -> bool:
    """``fn`` writes into the tensor its parameter ``param`` holds: an in-place method on it or on what
    iterating it yields (its rows are views: ``for t, m in zip(x, mean): t.sub_(m)``), an item
    assignment, an augmented assignment. A parameter the function rebinds first (``x = x.clone()``)
    is not the caller's tensor any more: not counted."""
    if any(
        isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == param for t in n.targets)
        for n in walk(fn)
    ):
        return False
    views = {param}
    for loop in walk(fn):  # for t in x / for t, m, s in zip(x, mean, std)
        if isinstance(loop, ast.For):
            it, target = loop.iter, loop.target
            if isinstance(it, ast.Name) and it.id == param and isinstance(target, ast.Name):
                views.add(target.id)
            elif isinstance(it, ast.Call) and getattr(it.func, "id", None) == "zip" and isinstance(target, ast.Tuple):
                views.update(
                    t.id
                    for a, t in zip(it.args, target.elts)
                    if isinstance(a, ast.Name) and a.id == param and isinstance(t, ast.Name)
                )
    for n in walk(fn):
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id == param:
            return True
        if isinstance(n, ast.Call) and _method(n, *_INPLACE_METHODS) and getattr(n.func.value, "id", None) in views:
            return True
        if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Subscript) and getattr(t.value, "id", None) == param for t in n.targets
        ):
            return True
    return False


RULE = Rule(
    "PTF028",
    ("from-numpy-shares-memory",),
    "a tensor made by torch.from_numpy shares memory with the NumPy array: this in-place write changes "
    "the array too; copy first (torch.tensor(arr)) or write it out of place (x = x - m)",
    _inplace_on_from_numpy,
    nodes=(ast.AugAssign, ast.Call, ast.Assign),
)
