"""What: A tensor made on the CPU by a factory and then moved to the device (torch.zeros(n).cuda()).
Why: It is built on the CPU and copied over at every call. The harm is time, whose size the code does not show:
reported only with --preview (read held-out halves: 0 of 22 such copies judged to matter), and even there quiet
in test code, on an empty tensor and where it runs once (module level, construction, a first-use branch, a
cached property, setup, an epoch's edge hook, beside the loop of a function whose work is a loop).
Fix: create it there with device=...."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from torch_pitfalls.lint.package import named_elsewhere
from torch_pitfalls.lint.rules.base import CALL, Rule, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import (
    _GRAD_OFF,
    _called_name_of,
    _grad_off,
    branch_side,
    climb,
    context_at,
    helper_calls,
)
from torch_pitfalls.lint.rules.shared.modules import _construction
from torch_pitfalls.lint.rules.shared.training_loop import _enclosing_loops, _optimizer_step
from torch_pitfalls.lint.walking import walk

_DETERMINISTIC_FACTORIES = ("zeros", "ones", "empty", "full", "arange", "eye", "linspace", "logspace")


_RANDOM_FACTORIES = ("rand", "randn", "randint", "randperm")
_SHAPED_FACTORIES = ("zeros", "ones", "empty", "full", "rand", "randn")  # their arguments are the shape


_DTYPE_WORDS = (
    "float",
    "double",
    "half",
    "int",
    "long",
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "bfloat16",
    "complex64",
    "complex128",
)


def _moves_device(call, ctx) -> bool:
    """``.cuda()``, or ``.to(x)`` whose first argument is a device, not a dtype."""
    if _method(call, "cuda"):
        return True
    if not _method(call, "to") or not (call.args or _kw(call, "device") is not None):
        return False
    if _kw(call, "device") is not None:
        return True
    first = call.args[0]
    q = ctx.qualified(first) or ""
    if q.startswith("torch.") and q.split(".")[-1] in _DTYPE_WORDS:
        return False
    text = ast.unparse(first).lower()
    return "device" in text or "cuda" in text or text in ("dev", "gpu")


def _self_state(test) -> set[str]:
    """The ``self.`` attributes a test asks to be unset: ``self.x is None``, ``not self.ready``,
    ``len(self.memory) == 0``, ``not hasattr(self, "x")``."""
    if isinstance(test, ast.BoolOp):
        return set().union(*(_self_state(v) for v in test.values))
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
        if (
            isinstance(test, ast.Call)
            and getattr(test.func, "id", None) == "hasattr"
            and len(test.args) == 2
            and getattr(test.args[0], "id", None) == "self"
            and isinstance(test.args[1], ast.Constant)
        ):
            return {test.args[1].value}
    elif isinstance(test, ast.Compare) and len(test.ops) == 1:
        unset = isinstance(test.ops[0], (ast.Is, ast.Eq)) and isinstance(test.comparators[0], ast.Constant)
        test = test.left if unset and test.comparators[0].value in (None, 0, False) else None
    if isinstance(test, ast.Call) and getattr(test.func, "id", None) == "len" and len(test.args) == 1:
        test = test.args[0]
    if isinstance(test, ast.Attribute) and getattr(test.value, "id", None) == "self":
        return {test.attr}
    return set()


def _fills_state(branch, attrs: set[str]) -> bool:
    """The branch sets one of those attributes, or calls a method of the object to do it."""
    for n in (x for s in branch for x in walk(s)):
        on_self = isinstance(n, ast.Attribute) and getattr(n.value, "id", None) == "self"
        if on_self and n.attr in attrs and isinstance(n.ctx, ast.Store):
            return True
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and getattr(n.func.value, "id", None) == "self"
        ):
            return True
    return False


def _empty_local(test) -> str | None:
    """The local name a test asks to be empty: ``len(state) == 0``, ``not state``, ``"step" not in state``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test.operand
        if isinstance(inner, ast.Call) and getattr(inner.func, "id", None) == "len" and len(inner.args) == 1:
            inner = inner.args[0]
        return inner.id if isinstance(inner, ast.Name) else None
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    op, right = test.ops[0], test.comparators[0]
    if isinstance(op, ast.NotIn) and isinstance(right, ast.Name):
        return right.id
    left = test.left
    if (
        isinstance(op, ast.Eq)
        and isinstance(right, ast.Constant)
        and right.value == 0
        and isinstance(left, ast.Call)
        and getattr(left.func, "id", None) == "len"
        and len(left.args) == 1
        and isinstance(left.args[0], ast.Name)
    ):
        return left.args[0].id
    return None


def _fills_held_state(up: ast.If, fn) -> bool:
    """A per-key state the object holds, filled the first time its key is seen: ``state = self.state[p]``
    then ``if len(state) == 0: state["exp_avg"] = ...`` (an optimizer's lazy state): once per key."""
    name = _empty_local(up.test)
    if name is None:
        return False
    held = any(
        isinstance(n, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
        and isinstance(n.value, ast.Subscript)
        and isinstance(n.value.value, ast.Attribute)
        and getattr(n.value.value.value, "id", None) == "self"
        for n in walk(fn)
    )
    return held and any(
        isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and getattr(n.value, "id", None) == name
        for s in up.body
        for n in walk(s)
    )


_ONCE_DECORATORS = ("cached_property", "cache", "lru_cache")


# words of a function's name that say it runs once, before the work: it sets the process up
# (``init_distributed_environment``), warms it up or captures a CUDA graph that is then replayed
_SETUP_WORDS = frozenset(("init", "initialize", "initialise", "setup", "warmup", "capture"))


def _named_for_setup(fn) -> bool:
    name = getattr(fn, "name", "")
    return name != "__init__" and bool(_SETUP_WORDS & set(name.lower().strip("_").split("_")))


def _named_for_an_epoch_edge(fn) -> bool:
    """A hook run once at the start or end of an epoch (Lightning's ``on_train_epoch_start``,
    ``validation_epoch_end``): not the epoch's loop over batches (``train_epoch``)."""
    words = set(getattr(fn, "name", "").lower().strip("_").split("_"))
    return "epoch" in words and bool(words & {"start", "end", "begin"})


def _fills_globals(fn) -> bool:
    """The function declares module globals and assigns them: it fills a module-wide cache (OpenNMT's
    ``load_sru_mod`` compiling its kernels), work its callers run once."""
    declared = {name for n in walk(fn) if isinstance(n, ast.Global) for name in n.names}
    return bool(declared) and any(
        isinstance(n, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id in declared for target in n.targets for t in ast.walk(target))
        for n in walk(fn)
    )


def _runs_once(node, ctx) -> bool:
    """The copy is made once, not per step: at module level, under ``if __name__ == "__main__":``, while
    a class builds its object, or in a first-use branch (``if self.buf is None: self.buf = ...``)."""
    if isinstance(ctx.function, ast.Module):
        return True
    if ctx.klass is not None and getattr(ctx.function, "name", None) in _construction(ctx.klass):
        return True
    decorators = getattr(ctx.function, "decorator_list", ())
    if any(_called_name_of(d.func if isinstance(d, ast.Call) else d) in _ONCE_DECORATORS for d in decorators):
        return True  # a cached_property or a cached function computes its value once
    if _named_for_setup(ctx.function):
        return True  # init_distributed_environment's warm-up all_reduce, capture_model's CUDA-graph inputs
    if _named_for_an_epoch_edge(ctx.function) and next(_enclosing_loops(node, ctx), None) is None:
        return True  # once per epoch, outside any loop of the hook (solo-learn's on_train_epoch_start)
    if _fills_globals(ctx.function):
        return True  # a loader that sets the module's globals (``global SRU_FWD_FUNC``), called once to fill them
    for up, child in climb(node, ctx, to_module=True):
        if isinstance(up, ast.If) and branch_side(up, child) is not None:
            test = up.test
            if isinstance(test, ast.Compare) and getattr(test.left, "id", None) == "__name__":
                return True
            attrs = _self_state(test)
            if attrs and branch_side(up, child) and _fills_state(up.body, attrs):
                return True
            if branch_side(up, child) and _fills_held_state(up, ctx.function):
                return True
    return False


# calls that are not a model's work
_BUILTINS = frozenset(
    "range len enumerate zip print min max abs int float str list tuple dict set sorted isinstance".split()
)


def _grad_off_block(node) -> bool:
    """``with torch.no_grad():`` (or inference_mode())."""
    return isinstance(node, (ast.With, ast.AsyncWith)) and any(
        isinstance(i.context_expr, ast.Call) and _called_name_of(i.context_expr.func) in _GRAD_OFF for i in node.items
    )


def _batch_loop(loop, ctx) -> bool:
    """A loop that does a model's work per iteration: a backward pass, an optimizer step, or a forward
    under ``torch.no_grad()`` / ``inference_mode()``, inside the loop or around it (FourCastNet's rollout
    ``with torch.no_grad(): for i in range(steps): pred = model(pred)``)."""
    if _grad_off(loop, ctx) and any(
        isinstance(n, ast.Call) and _called_name_of(n.func) not in _BUILTINS for n in walk(loop)
    ):
        return True
    for n in walk(loop):
        if isinstance(n, ast.Call) and (_method(n, "backward") or _optimizer_step(n, ctx)):
            return True
        if _grad_off_block(n):
            return True
    return False


def _setup_before_batches(node, ctx, made=None) -> bool:
    """The copy (or the call that makes it: ``made`` is then the copied factory) is outside every loop of
    a function whose work is a loop: once per call, before (or after) the loop that runs many times. A
    loop over batches counts anywhere; outside a module's forward, so does a loop that calls a model, the
    callable the function was handed or this object's own methods at each step (a sampler's denoising
    steps, a decoder's tokens), for a vector made once per call. In a forward, the call itself is the
    step (an RNN's state made for each batch before its time loop): reported."""
    if isinstance(ctx.function, ast.Module) or next(_enclosing_loops(node, ctx), None) is not None:
        return False
    loops = [n for n in walk(ctx.function) if isinstance(n, (ast.For, ast.While))]
    if any(n.lineno > node.lineno and _batch_loop(n, ctx) for n in loops):
        return True
    made = node.func.value if made is None else made
    if getattr(ctx.function, "name", None) in ("forward", "__call__") or not _vector_sized(made):
        return False
    return any(_work_loop(n, ctx) for n in loops)


def _once_per_caller(node, ctx, made, depth: int = 0) -> bool:
    """The copy is in a helper that the file calls only where each call runs once: a method called on
    ``self`` in its class, or a function of the module called by name, whose every call is made outside
    the caller's loops, before a loop of batches or steps, in construction or at module level, or in a
    helper that is itself called so (``generate()`` pads its input through ``self.pad_tensor`` once,
    then runs thousands of decoder steps). Quiet only where every use of the helper is such a call: not
    where it is also handed on, called on another object, or named in another file of its package."""
    fn = ctx.function
    if depth > 2 or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if fn.name.startswith("__") or fn.name == "forward":
        return False  # called implicitly too (model(x), special methods): the file's calls are not all its calls
    if _in_loop(node, ctx):
        return False  # repeated in the helper's own loop, however often the helper runs
    sites = helper_calls(fn, ctx)
    if not sites or _named_elsewhere(fn.name, ctx):
        return False
    for site in sites:
        caller = context_at(site, ctx)
        if caller is None or _in_loop(site, caller):
            return False
        if not (
            _runs_once(site, caller)
            or _setup_before_batches(site, caller, made)
            or _once_per_caller(site, caller, made, depth + 1)
        ):
            return False
    return True


def _in_loop(node, ctx) -> bool:
    """Inside a loop or a comprehension of its function (at module level, a loop over a literal list of
    a few settings, such as the resolutions a converter writes, does not count)."""
    up = ctx.parent(node)
    while up is not None and up is not ctx.function:
        if isinstance(up, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return True
        if isinstance(up, (ast.For, ast.AsyncFor, ast.While)):
            if not (isinstance(ctx.function, ast.Module) and isinstance(up, ast.For) and _literal(up.iter, ctx)):
                return True
        up = ctx.parent(up)
    return False


def _literal(expr, ctx, depth: int = 0) -> bool:
    """A literal list, tuple, set or dict, its keys, values or items, a list, tuple or sorted copy of one,
    or a module-level name bound once to one (``RESOLUTIONS = list(Z_DIMS)``)."""
    if depth > 3:
        return False
    if isinstance(expr, ast.Name):
        bound = ctx.bindings.scope(ctx.module).names.get(expr.id, [])
        return len(bound) == 1 and bound[0].value is not None and _literal(bound[0].value, ctx, depth + 1)
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
        if isinstance(expr.func, ast.Name) and expr.func.id in ("list", "tuple", "sorted", "set", "reversed"):
            return _literal(expr.args[0], ctx, depth + 1)
    if isinstance(expr, ast.Call) and not expr.args and _method(expr, "keys", "values", "items"):
        return _literal(expr.func.value, ctx, depth + 1)
    return isinstance(expr, (ast.List, ast.Tuple, ast.Set, ast.Dict))


def _named_elsewhere(name: str, ctx) -> bool:
    """``name`` is a word of another file of the package: it may be called there, in a loop."""
    return ctx.path is not None and os.path.isfile(ctx.path) and named_elsewhere(Path(ctx.path), name)


def _dims(made) -> list | None:
    """The dimensions a shape-taking factory is given (``zeros(b, 1)``, ``ones((b, n))``, ``full((b,), v)``),
    or None where the code does not spell them out (``zeros(x.shape)``, ``randn(*shape)``, ``zeros(size)``)."""
    name = getattr(made.func, "attr", None) or getattr(made.func, "id", None)
    size = made.args[:1] if name == "full" else made.args  # full(size, fill_value)
    if len(size) == 1 and isinstance(size[0], (ast.Tuple, ast.List)):
        dims = size[0].elts
    elif len(size) == 1 and isinstance(size[0], ast.Name):
        return None  # a size or a whole shape: not known here
    else:
        dims = size
    if any(isinstance(d, ast.Starred) or (isinstance(d, ast.Attribute) and d.attr == "shape") for d in dims):
        return None
    return dims


def _vector_sized(made) -> bool:
    """The factory makes a vector or a scalar (``arange(n)``, ``linspace(...)``, ``zeros(b, 1)``): one small
    copy per call. A buffer of more than one dimension not 1 (``ones(bsz, seq_len)``), or of a shape the
    code does not spell out, may be large: reported."""
    name = getattr(made.func, "attr", None) or getattr(made.func, "id", None)
    if name in ("arange", "linspace", "logspace"):
        return True
    dims = _dims(made)
    return dims is not None and sum(not (isinstance(d, ast.Constant) and d.value == 1) for d in dims) <= 1


def _empty(made) -> bool:
    """A shape with a dimension of 0 (``zeros(1, 1, 0)``, an empty cache to concatenate onto): no element,
    so the move copies nothing."""
    name = getattr(made.func, "attr", None) or getattr(made.func, "id", None)
    dims = _dims(made) if name in _SHAPED_FACTORIES else None
    return dims is not None and any(isinstance(d, ast.Constant) and d.value == 0 for d in dims)


def _work_loop(loop, ctx) -> bool:
    """Each pass calls a model (``self.model(x)``, ``model_fn(x, t)``), a callable the function was
    given, or a method of this object (``self.denoise_step(...)``): the work the function repeats."""
    params = {a.arg for a in ctx.function.args.args + ctx.function.args.kwonlyargs} - {"self", "cls"}
    for n in walk(loop):
        if not isinstance(n, ast.Call):
            continue
        func = n.func
        if isinstance(func, ast.Name) and func.id in params:
            return True
        if isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self":
            return True
        if ctx.kind(func) == "module":
            return True
    return False


def _cpu_factory_moved(node, ctx) -> bool:
    """``torch.zeros(...).to(device)``: made on the CPU, then copied; pass ``device=`` to the factory."""
    if not (_moves_device(node, ctx) and isinstance(node.func.value, ast.Call)):
        return False
    made = node.func.value
    q = ctx.qualified(made.func) or ""
    # a random factory made on the CPU on purpose draws from a CPU generator= it is handed
    factories = _DETERMINISTIC_FACTORIES + (() if _kw(made, "generator") is not None else _RANDOM_FACTORIES)
    return (
        q.count(".") == 1
        and q.startswith("torch.")
        and q.split(".")[1] in factories
        and _kw(made, "device") is None
        and not any(k.arg is None for k in made.keywords)
        and not _empty(made)
        and not _runs_once(node, ctx)
        and not _setup_before_batches(node, ctx)
        and not _once_per_caller(node, ctx, made)
    )


RULE = Rule(
    "PTF020",
    ("cpu-tensor-moved-to-cuda",),
    "the tensor is made on the CPU and then copied to the device; create it there with device=...",
    _cpu_factory_moved,
    nodes=CALL,
    calls=("cuda", "to"),
    harm="speed",
    preview_only="its harm depends on sizes the code does not show",  # whether a copy costs anything depends on sizes the code does not show
    case_at_preview=(
        "the rule reports only with `--preview`, since whether a copy made at each step costs anything depends on "
        "its size and the step's, which the code does not show"
    ),
)
