"""The upgrade cases' rules, PTF101 on: an API that a release removed, deprecated or changed."""

from __future__ import annotations

import ast
from dataclasses import replace

from torch_pitfalls.lint.guards import deliberate
from torch_pitfalls.lint.rules.base import (
    AO_QUANTIZATION,
    CALL,
    FUNCTORCH,
    IMPORTS,
    REFS,
    SCHEDULERS,
    UNSURE,
    Rule,
    _const,
    _has_kw,
    _is_call_to,
    _kw,
    _method,
    _use_of,
    receiver_holds,
)

# typing's names that torch/__init__.py imported plainly, and so exported, until 2.5
TYPING_NAMES = ("Any", "Callable", "Dict", "List", "Optional", "Set", "Tuple", "Union")
TORCH_TYPING = tuple(f"torch.{name}" for name in TYPING_NAMES)


def _annotated_with(fn, ctx, names) -> bool:
    """A parameter or return annotation of ``fn`` names one of ``names``: Python evaluates it when
    the ``def`` runs (unless the module defers annotations: ``from __future__ import annotations``)."""
    args = fn.args
    annotations = [
        a.annotation
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
        if a is not None
    ]
    named = any(
        isinstance(node, ast.Attribute) and _use_of(node, ctx, *names)
        for annotation in (*annotations, fn.returns)
        if annotation is not None
        for node in ast.walk(annotation)
    )
    return named and not any(  # the module's imports are read only for a function that names one
        isinstance(s, ast.ImportFrom) and s.module == "__future__" and any(a.name == "annotations" for a in s.names)
        for s in ctx.module.body
    )


def _receiver_may_be_tensor(call: ast.Call, ctx):
    """Whether the object a method is called on is a tensor: True where the bindings prove it,
    UNSURE where they cannot tell (``lazy_covar.cholesky()``, ``td.refine_names(...)``: other
    libraries' objects have these methods too), False for an imported module other than torch
    (``torch_scatter.scatter(..., reduce=...)``), an object known to be something else, or ``self``
    in a class that defines the method itself (``self.storage()`` of a storage-backend class)."""
    receiver = call.func.value
    if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls") and ctx.klass is not None:
        if any(
            isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == call.func.attr for s in ctx.klass.body
        ):
            return False
    return receiver_holds(call, ctx, "tensor")


def _is_grad(node) -> bool:
    """``p.grad`` or ``p.grad.data``."""
    if getattr(node, "attr", None) == "data":
        node = node.value
    return getattr(node, "attr", None) == "grad"


def _checks_grad_none(function) -> bool:
    """``if p.grad is not None`` / ``if p.grad is None: continue`` somewhere in the function."""
    return any(
        isinstance(n, ast.Compare) and _is_grad(n.left) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops)
        for n in ast.walk(function)
    )


def _zero_grad_then_use(node, ctx) -> bool:
    """``zero_grad()`` (set_to_none left at its default, or True) and, later in the same function, an
    in-place write into ``.grad``, which is None by then; unless the function checks for None."""
    if not (_method(node, "zero_grad") and not node.args) or ctx.kind(node.func.value) not in (
        None,
        "optimizer",
        "module",
        "loss",
    ):
        return False
    set_to_none = _kw(node, "set_to_none")
    if (set_to_none is not None and not _const(set_to_none, True)) or any(k.arg is None for k in node.keywords):
        return False
    # a backward() between the zero_grad() and the write has filled .grad again: nothing is None there
    backwards = [n.lineno for n in ast.walk(ctx.function) if _method(n, "backward") and n.lineno > node.lineno]
    writes = any(
        (
            (isinstance(n, ast.AugAssign) and _is_grad(n.target))
            or (_method(n, "add_", "mul_", "copy_", "zero_", "sub_", "div_") and _is_grad(n.func.value))
        )
        and n.lineno > node.lineno
        and not any(b < n.lineno for b in backwards)
        for n in ast.walk(ctx.function)
    )
    return writes and not _checks_grad_none(ctx.function)


def _prefetch_without_workers(node, ctx) -> bool:
    if not (
        _is_call_to(node, ctx, "torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")
        and _kw(node, "prefetch_factor") is not None
    ):
        return False
    workers = _kw(node, "num_workers")
    if workers is None:
        return True
    value = ctx.resolve(workers, node.lineno)
    if isinstance(value, ast.Name) and ctx.function is not None:
        # a parameter: 0 when every call site in the module passes 0 (or leaves its default of 0)
        passed = ctx.bindings.passed_values(value.id, ctx.chain(), node.lineno)
        return bool(passed) and all(_const(v, 0) for v in passed)
    return _const(value, 0)


def _super_init_with_data_source(node, ctx) -> bool:
    if ctx.klass is None or not (_method(node, "__init__") and node.args):
        return False
    receiver = node.func.value
    is_super = isinstance(receiver, ast.Call) and getattr(receiver.func, "id", None) == "super"
    bases = {ctx.qualified(b) for b in ctx.klass.bases}
    samplers = {"torch.utils.data.Sampler", "torch.utils.data.sampler.Sampler"}
    return is_super and bool(bases & samplers)


def _cross_without_dim(node, ctx) -> bool:
    if _is_call_to(node, ctx, "torch.cross"):
        return len(node.args) < 3 and not _has_kw(node, "dim")
    return (
        _method(node, "cross") and ctx.qualified(node.func) is None and len(node.args) == 1 and not _has_kw(node, "dim")
    )


def _generator_reused(node, ctx) -> bool:
    if not (
        _is_call_to(
            node,
            ctx,
            "torch.nn.utils.clip_grad_norm_",
            "torch.nn.utils.clip_grad_value_",
            "torch.nn.utils.clip_grad.clip_grad_norm_",
        )
        and node.args
    ):
        return False
    if isinstance(node.args[0], ast.Attribute):
        return _self_generator_reused(node.args[0], ctx)
    if not isinstance(node.args[0], ast.Name):
        return False
    value = ctx.value_of(node.args[0], node.lineno)
    if not _method(value, "parameters"):
        return False
    uses = [
        n
        for n in ast.walk(ctx.function)
        if isinstance(n, ast.Name) and n.id == node.args[0].id and isinstance(n.ctx, ast.Load)
    ]
    return len(uses) > 1


def _self_generator_reused(target, ctx) -> bool:
    """``self.params = self.net.parameters()`` (set once in the class) read more than once in the class:
    a generator kept on the object is spent by its first reader (the optimizer built in ``__init__``),
    so a later ``clip_grad_norm_(self.params)`` in another method clips nothing."""
    fn = ctx.function
    if ctx.klass is None or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.args.args:
        return False
    if getattr(target.value, "id", None) != fn.args.args[0].arg:
        return False
    sets = ctx.bindings.self_attributes(ctx.klass).get(target.attr, [])
    if len(sets) != 1 or not _method(sets[0][1], "parameters"):
        return False
    reads = 0
    for method in ctx.klass.body:
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.args.args:
            me = method.args.args[0].arg
            reads += sum(
                1
                for n in ast.walk(method)
                if isinstance(n, ast.Attribute)
                and n.attr == target.attr
                and isinstance(n.ctx, ast.Load)
                and getattr(n.value, "id", None) == me
            )
    return reads > 1


def _no_grad_on_class(node, ctx) -> bool:
    return isinstance(node, ast.ClassDef) and any(
        _is_call_to(d, ctx, "torch.no_grad", "torch.enable_grad", "torch.inference_mode")
        or ctx.qualified(d) in ("torch.no_grad", "torch.enable_grad")
        for d in node.decorator_list
    )


def _makes_list(node) -> bool:
    """An expression whose value is a list: a literal or comprehension, ``list(...)``, and ``+``/``*``
    of those. A ``+`` with a tuple in it (``(slice(None),) * n + (i,)``) makes a tuple (or fails)."""
    if isinstance(node, (ast.List, ast.ListComp)):
        return True
    if isinstance(node, ast.Call):
        return getattr(node.func, "id", None) == "list"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
        sides = (node.left, node.right)
        if any(isinstance(s, (ast.Tuple, ast.GeneratorExp)) or _makes_tuple(s) for s in sides):
            return False
        return any(_makes_list(s) for s in sides)
    return False


def _makes_tuple(node) -> bool:
    return isinstance(node, ast.Tuple) or (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tuple")


def _index_items(value):
    """What a list expression holds: a literal's elements, a comprehension's element."""
    for n in ast.walk(value):
        if isinstance(n, ast.List):
            yield from n.elts
        elif isinstance(n, ast.ListComp):
            yield n.elt


def _list_of_slices_index(node, ctx) -> bool:
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Name):
        return False
    value = ctx.value_of(node.slice, node.lineno)
    return (
        value is not None
        and _makes_list(value)
        and any(
            (isinstance(n, ast.Call) and getattr(n.func, "id", None) == "slice")
            or _const(n, None)
            or isinstance(n, ast.Constant)
            and n.value is Ellipsis
            for n in _index_items(value)
        )
    )


def _transformer_nested_with_norm_first(node, ctx) -> bool:
    if not (_is_call_to(node, ctx, "torch.nn.TransformerEncoder") and not _has_kw(node, "enable_nested_tensor")):
        return False
    return any(
        _is_call_to(n, ctx, "torch.nn.TransformerEncoderLayer") and _const(_kw(n, "norm_first"), True)
        for n in ast.walk(ctx.module)
    )


def _state_dict_positional(node, ctx) -> bool:
    """``x.state_dict(dest, prefix)``, except in a class with a ``state_dict`` of its own that is not a
    Module's (other parameters, or a class with no bases): there the call is most likely that API."""
    if not (_method(node, "state_dict") and node.args) or ctx.kind(node.func.value) not in (None, "module", "loss"):
        return False  # an optimizer's, a scheduler's or a tensor's is not Module.state_dict
    args = node.args
    if isinstance(args[0], ast.Name) and args[0].id == "self":
        args = args[1:]  # Base.state_dict(self, ...): the instance, not an argument
    if all(isinstance(a, ast.Starred) for a in args):
        return False  # super().state_dict(*args, **kwargs): passes on what its own caller passed
    klass = ctx.klass
    own = (
        next(
            (
                s
                for s in klass.body
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "state_dict"
            ),
            None,
        )
        if klass is not None
        else None
    )
    if own is None:
        return True
    params = [a.arg for a in [*own.args.posonlyargs, *own.args.args]][1:]
    return bool(klass.bases) and params[:1] == ["destination"]


def _names_of_tensor(node, ctx):
    """Named tensors: ``names=`` to a torch factory, ``.refine_names``/``.align_to``/``.rename_`` or
    reading ``.names`` on what the bindings prove a tensor (UNSURE on anything else: TensorDict and
    torchrl specs have their own ``names`` and ``refine_names``)."""
    if (
        isinstance(node, ast.Call)
        and (ctx.qualified(node.func) or "").startswith("torch.")
        and _kw(node, "names") is not None
    ):
        return True
    if _method(node, "refine_names", "align_to", "rename_"):
        return receiver_holds(node, ctx, "tensor")
    if not (
        isinstance(node, ast.Attribute)
        and node.attr == "names"
        and isinstance(node.ctx, ast.Load)
        and not ctx.guarded
        and ctx.qualified(node) is None
    ):
        return False
    return receiver_holds(node, ctx, "tensor")


def _stft_without_return_complex(node, ctx) -> bool:
    """``torch.stft(x, n_fft, ...)`` with no ``return_complex`` (the tenth parameter): on a real signal
    a RuntimeError since 2.0. Only the qualified function: a method named ``stft`` may be anyone's."""
    return (
        _is_call_to(node, ctx, "torch.stft", "torch.functional.stft")
        and len(node.args) < 10
        and not _has_kw(node, "return_complex")
    )


# torch.load without weights_only (PTF126). On 2.4-2.5 every such load warns (FutureWarning,
# torch-load-weights-only-warning); from 2.6 the default is weights_only=True, which refuses only
# what is not tensors, primitives and their containers (torch-load-weights-only-default). So where
# the code runs only on >= 2.6 (--torch, the installed torch, or the package's declared range), a
# load that visibly reads tensors is right as written: its result goes to ``load_state_dict``, or
# the same file was written in the same function from a ``.state_dict()`` or a tensor.
WEIGHTS_ONLY_WARNS = ">=2.4,<2.6"  # the range of torch-load-weights-only-warning (the FutureWarning)


def _load_without_weights_only(node, ctx) -> bool:
    if not (_is_call_to(node, ctx, "torch.load", "torch.serialization.load") and not _has_kw(node, "weights_only")):
        return False
    if "TypeError" in ctx.caught:  # the fallback for a torch without weights_only (before 1.13)
        return False
    return ctx.releases.meets((WEIGHTS_ONLY_WARNS,)) or not _loads_tensors(node, ctx)


def _loads_tensors(load: ast.Call, ctx) -> bool:
    parent = ctx.parent(load)
    if _method(parent, "load_state_dict") and load in parent.args:
        return True
    calls = [n for n in ast.walk(ctx.function) if isinstance(n, ast.Call)] if ctx.function is not None else []
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id  # sd = torch.load(f); ...; model.load_state_dict(sd)
        if any(
            _method(c, "load_state_dict")
            and c.lineno >= load.lineno
            and c.args
            and isinstance(c.args[0], ast.Name)
            and c.args[0].id == name
            for c in calls
        ):
            return True
    if not load.args:
        return False
    source = _file_of(load.args[0])
    return any(
        _is_call_to(c, ctx, "torch.save")
        and len(c.args) >= 2
        and c.lineno <= load.lineno
        and _file_of(c.args[1]) == source
        and _holds_tensors(c.args[0], ctx)
        for c in calls
    )


def _file_of(node) -> str:
    """What names the file: ``f`` for ``f`` and ``f.name`` (a temporary file's path), else the code."""
    if isinstance(node, ast.Attribute) and node.attr == "name" and isinstance(node.value, ast.Name):
        node = node.value
    return ast.dump(node)


def _holds_tensors(node, ctx) -> bool:
    return _method(node, "state_dict") or ctx.kind(node, node.lineno) == "tensor"


ATTN_MASK_KWARGS = ("attn_mask", "src_mask", "tgt_mask", "memory_mask")


def _byte_tensor(node, ctx) -> bool:
    """An expression that makes a uint8 tensor: ``m.byte()``, ``m.to(torch.uint8)``, ``m.type(torch.uint8)``,
    a factory with ``dtype=torch.uint8``, ``torch.ByteTensor(...)``."""
    if not isinstance(node, ast.Call):
        return False
    if _method(node, "byte") and not node.args:
        return True
    dtype = _kw(node, "dtype") or (node.args[0] if _method(node, "to", "type") and node.args else None)
    return getattr(dtype, "attr", None) == "uint8" or ctx.qualified(node.func) == "torch.ByteTensor"


def _byte_attention_mask(node, ctx) -> bool:
    return isinstance(node, ast.Call) and any(
        k.arg in ATTN_MASK_KWARGS and _byte_tensor(ctx.resolve(k.value, node.lineno), ctx) for k in node.keywords
    )


def _local_rank_underscore_only(node, ctx) -> bool:
    """``parser.add_argument("--local_rank", ...)`` without the dashed spelling in the same call."""
    if not _method(node, "add_argument"):
        return False
    names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return "--local_rank" in names and "--local-rank" not in names


UPGRADE_RULES: tuple[Rule, ...] = (
    Rule(
        "PTF101",
        ("zero-grad-set-to-none",),
        "since torch 2.0 zero_grad() sets .grad to None, so writing into .grad afterwards fails; pass "
        "set_to_none=False where the code needs zeros",
        _zero_grad_then_use,
        nodes=CALL,
    ),
    Rule(
        "PTF102",
        ("torch-six-removed",),
        "torch._six was removed in torch 2.0; use math.inf, str and collections.abc",
        lambda n, c: (
            isinstance(n, (ast.Import, ast.ImportFrom))
            and any(
                (getattr(n, "module", None) or "").startswith("torch._six") or a.name.startswith("torch._six")
                for a in n.names
            )
        ),
        nodes=IMPORTS,
    ),
    Rule(
        "PTF103",
        ("dataloader-prefetch-factor-without-workers",),
        "since torch 2.0 DataLoader raises ValueError when prefetch_factor is given with num_workers=0; pass it "
        "only when num_workers > 0",
        _prefetch_without_workers,
        nodes=CALL,
    ),
    Rule(
        "PTF104",
        ("stft-return-complex-false-deprecated",),
        "stft(return_complex=False) is deprecated since torch 2.0; use return_complex=True and torch.view_as_real",
        lambda n, c: (
            (_is_call_to(n, c, "torch.stft", "torch.functional.stft") or _method(n, "stft"))
            and _const(_kw(n, "return_complex"), False)
        ),
        nodes=CALL,
    ),
    Rule(
        "PTF105",
        ("functorch-deprecated",),
        "functorch is deprecated since torch 2.0 (warns; FutureWarning from 2.4); use torch.func, guarded by "
        "hasattr(torch, 'func') where torch 1.13 must still work",
        lambda n, c: _use_of(n, c, *FUNCTORCH),
        nodes=REFS,
    ),
    Rule(
        "PTF106",
        ("typed-storage-deprecated",),
        "Tensor.storage() returns a TypedStorage, deprecated since torch 2.0 (warns); use "
        "untyped_storage() (guarded by hasattr for torch 1.13)",
        lambda n, c: (
            _method(n, "storage") and not n.args and not n.keywords and not c.guarded and _receiver_may_be_tensor(n, c)
        ),
        nodes=CALL,
    ),
    Rule(
        "PTF107",
        ("no-grad-decorating-class",),
        "decorating a class with torch.no_grad() is deprecated since torch 2.0 (it turns the class into a "
        "function on some releases); decorate its methods",
        _no_grad_on_class,
        nodes=ast.ClassDef,
    ),
    Rule(
        "PTF108",
        ("stateless-functional-call",),
        "torch.nn.utils.stateless.functional_call is deprecated since torch 2.0; use "
        "torch.func.functional_call (with an ImportError fallback for 1.13)",
        lambda n, c: _use_of(n, c, "torch.nn.utils.stateless.functional_call"),
        nodes=REFS,
    ),
    Rule(
        "PTF109",
        ("scatter-reduce-argument",),
        "scatter's reduce= with a tensor src is deprecated since torch 2.0; use scatter_add_ or "
        "scatter_reduce_(..., reduce='sum'|'prod'|'amax'|'amin'|'mean')",
        lambda n, c: (
            _kw(n, "reduce") is not None
            and (
                _is_call_to(n, c, "torch.scatter")
                or (_method(n, "scatter", "scatter_") and _receiver_may_be_tensor(n, c))
            )
        ),
        nodes=CALL,
    ),
    Rule(
        "PTF110",
        ("set-default-tensor-type",),
        "torch.set_default_tensor_type is deprecated since torch 2.1; use torch.set_default_dtype (and "
        "torch.set_default_device)",
        lambda n, c: _is_call_to(n, c, "torch.set_default_tensor_type"),
        nodes=CALL,
    ),
    Rule(
        "PTF111",
        ("weight-norm-deprecated",),
        "torch.nn.utils.weight_norm is deprecated since torch 2.1; use "
        "torch.nn.utils.parametrizations.weight_norm (guarded for older torch)",
        lambda n, c: (
            _is_call_to(n, c, "torch.nn.utils.weight_norm", "torch.nn.utils.weight_norm.weight_norm") and not c.guarded
        ),
        nodes=CALL,
    ),
    Rule(
        "PTF112",
        ("checkpoint-use-reentrant",),
        "torch.utils.checkpoint without use_reentrant warns since torch 2.1 (the default is to change); pass "
        "use_reentrant=False",
        lambda n, c: (
            _is_call_to(n, c, "torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential")
            and not _has_kw(n, "use_reentrant")
        ),
        nodes=CALL,
    ),
    Rule(
        "PTF113",
        ("sampler-data-source",),
        "Sampler.__init__ stopped taking data_source (a warning in torch 2.1, a TypeError since 2.10); do not "
        "pass it to super().__init__()",
        _super_init_with_data_source,
        nodes=CALL,
    ),
    Rule(
        "PTF114",
        ("lr-scheduler-verbose",),
        "the schedulers' verbose= is deprecated since torch 2.2 and removed in 2.7 (TypeError); log "
        "scheduler.get_last_lr() yourself",
        lambda n, c: _is_call_to(n, c, *SCHEDULERS) and _kw(n, "verbose") is not None,
        nodes=CALL,
    ),
    Rule(
        "PTF115",
        ("cross-without-dim",),
        "torch.cross without dim picks the first dimension of size 3 and warns since torch 2.2; pass dim "
        "(or use torch.linalg.cross)",
        _cross_without_dim,
        nodes=CALL,
    ),
    Rule(
        "PTF116",
        ("clip-grad-norm-exhausted-generator",),
        "model.parameters() is a generator: once iterated (by an optimizer), clip_grad_norm_ sees nothing "
        "(a zero norm from torch 2.8); pass a list",
        _generator_reused,
        nodes=CALL,
    ),
    Rule(
        "PTF117",
        ("clip-grad-norm-without-underscore",),
        "torch.nn.utils.clip_grad_norm is a deprecated alias (FutureWarning since torch 2.4); call clip_grad_norm_",
        lambda n, c: _is_call_to(n, c, "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad.clip_grad_norm"),
        nodes=CALL,
    ),
    Rule(
        "PTF118",
        ("concat-dataset-cummulative-sizes",),
        "ConcatDataset.cummulative_sizes is a misspelt alias (FutureWarning since torch 2.4); read cumulative_sizes",
        lambda n, c: isinstance(n, ast.Attribute) and n.attr == "cummulative_sizes",
        nodes=ast.Attribute,
    ),
    Rule(
        "PTF119",
        ("cpu-amp-autocast-deprecated",),
        "torch.cpu.amp.autocast is deprecated since torch 2.4; use torch.autocast('cpu', ...)",
        lambda n, c: _use_of(n, c, "torch.cpu.amp.autocast", "torch.cpu.amp.autocast_mode.autocast"),
        nodes=REFS,
    ),
    Rule(
        "PTF120",
        ("cuda-amp-custom-fwd-deprecated",),
        "torch.cuda.amp.custom_fwd/custom_bwd are deprecated since torch 2.4; use torch.amp.custom_fwd("
        "device_type='cuda') (guarded by hasattr(torch.amp, 'custom_fwd'))",
        lambda n, c: _use_of(
            n,
            c,
            "torch.cuda.amp.custom_fwd",
            "torch.cuda.amp.custom_bwd",
            "torch.cuda.amp.autocast_mode.custom_fwd",
            "torch.cuda.amp.autocast_mode.custom_bwd",
        ),
        nodes=REFS,
    ),
    Rule(
        "PTF121",
        ("cuda-amp-gradscaler-deprecated",),
        "torch.cuda.amp.GradScaler is deprecated since torch 2.4; use torch.amp.GradScaler('cuda', ...) "
        "(guarded by hasattr(torch.amp, 'GradScaler'))",
        lambda n, c: _use_of(n, c, "torch.cuda.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler"),
        nodes=REFS,
    ),
    Rule(
        "PTF122",
        ("distribution-sample-n",),
        "Distribution.sample_n(n) is deprecated (FutureWarning since torch 2.4); call sample((n,))",
        lambda n, c: _method(n, "sample_n") and receiver_holds(n, c, "distribution"),
        nodes=CALL,
    ),
    Rule(
        "PTF123",
        ("named-tensors-removed",),
        "named tensors were removed in torch 2.13; keep dimension names beside the tensor",
        _names_of_tensor,
        nodes=(ast.Call, ast.Attribute),
    ),
    Rule(
        "PTF124",
        ("non-tuple-sequence-indexing",),
        "indexing a tensor with a list of slices (or None/Ellipsis) warns since torch 2.8 (UserWarning, observed "
        "through 2.15, where it is still read as a tuple; the warning announces it will be read as an index "
        "tensor); index with tuple(...)",
        _list_of_slices_index,
        nodes=ast.Subscript,
    ),
    Rule(
        "PTF125",
        ("state-dict-positional-args",),
        "state_dict's positional arguments are deprecated (FutureWarning since torch 2.4); pass "
        "destination=, prefix=, keep_vars= by keyword",
        _state_dict_positional,
        nodes=CALL,
    ),
    Rule(
        "PTF126",
        ("torch-load-weights-only-default", "torch-load-weights-only-warning", "weights-only-numpy-in-checkpoint"),
        "torch.load without weights_only warns in torch 2.4-2.5 and, since 2.6, refuses any non-tensor object "
        "(weights_only=True by default); pass weights_only= explicitly",
        _load_without_weights_only,
        nodes=CALL,
    ),
    Rule(
        "PTF127",
        ("torchscript-deprecated",),
        "torch.jit.script (and trace) are deprecated since torch 2.10 (DeprecationWarning; FutureWarning from 2.14); use "
        "torch.compile or torch.export",
        lambda n, c: (
            _is_call_to(n, c, "torch.jit.script", "torch.jit.trace", "torch.jit.trace_module")
            or (
                isinstance(n, (ast.FunctionDef, ast.ClassDef))
                and any(c.qualified(d) == "torch.jit.script" for d in n.decorator_list)
            )
        ),
        nodes=(ast.Call, ast.FunctionDef, ast.ClassDef),
    ),
    Rule(
        "PTF129",
        ("torch-load-pickle-args-ignored",),
        "since torch 2.11 torch.load warns that pickle arguments (encoding=, ...) only work with "
        "weights_only=False; drop them, or pass weights_only=False for a file you trust",
        lambda n, c: (
            _is_call_to(n, c, "torch.load", "torch.serialization.load")
            and not _has_kw(n, "weights_only")
            and any(k.arg in ("encoding", "errors", "fix_imports") for k in n.keywords)
        ),
        nodes=CALL,
    ),
    Rule(
        "PTF128",
        ("transformer-norm-first-nested-tensor",),
        "TransformerEncoder with norm_first=True layers cannot use nested tensors and warns; pass "
        "enable_nested_tensor=False",
        _transformer_nested_with_norm_first,
        nodes=CALL,
    ),
    Rule(
        "PTF130",
        ("stft-without-return-complex",),
        "torch.stft on a real signal without return_complex raises a RuntimeError since torch 2.0 (a warning "
        "before); pass return_complex=True, and torch.view_as_real(...) where the old (..., 2) layout is needed",
        _stft_without_return_complex,
        nodes=CALL,
    ),
    Rule(
        "PTF131",
        ("mha-uint8-attn-mask",),
        "a byte (uint8) attention mask is refused by MultiheadAttention and the Transformer layers since torch "
        "2.0 (AssertionError; a deprecation warning before); build the mask as bool (True = do not attend)",
        _byte_attention_mask,
        nodes=CALL,
    ),
    Rule(
        "PTF132",
        ("distributed-launch-local-rank",),
        "torch.distributed.launch passes --local-rank since torch 2.0, so a parser that only declares "
        "--local_rank exits with 'unrecognized arguments'; declare both (add_argument('--local-rank', "
        "'--local_rank', ...)) or read LOCAL_RANK from the environment",
        _local_rank_underscore_only,
        nodes=CALL,
    ),
    Rule(
        "PTF133",
        ("pytree-register-private-deprecated",),
        "torch.utils._pytree._register_pytree_node is deprecated since torch 2.2 (UserWarning; FutureWarning from "
        "2.4); call register_pytree_node, guarded by hasattr for torch 2.1 and older",
        lambda n, c: _use_of(n, c, "torch.utils._pytree._register_pytree_node"),
        nodes=REFS,
    ),
    Rule(
        "PTF134",
        ("ao-quantization-deprecated",),
        "torch.ao.quantization's eager and FX entry points are deprecated since torch 2.8 (DeprecationWarning); "
        "migrate to torchao, or store int8 weights with plain tensor arithmetic",
        lambda n, c: _use_of(n, c, *AO_QUANTIZATION),
        nodes=REFS,
    ),
    Rule(
        "PTF135",
        ("qr-cholesky-removed",),
        "torch.qr and torch.cholesky (and Tensor.qr()/.cholesky()) were removed in torch 2.14 (RuntimeError; "
        "deprecated since 1.9); use torch.linalg.qr / torch.linalg.cholesky",
        lambda n, c: (
            _use_of(n, c, "torch.qr", "torch.cholesky")
            or (
                isinstance(n, ast.Call)
                and _method(n, "qr", "cholesky")
                and c.qualified(n.func) is None
                and all(isinstance(a, ast.Constant) for a in n.args)
                and _receiver_may_be_tensor(n, c)
            )
        ),
        nodes=(ast.Call, ast.Attribute, ast.Name),
    ),
    Rule(
        "PTF136",
        ("cuda-amp-autocast-deprecated",),
        "torch.cuda.amp.autocast is deprecated since torch 2.4 (FutureWarning, even disabled or without a GPU); "
        "use torch.autocast('cuda', ...), which takes the same arguments on every torch 2.x",
        lambda n, c: _use_of(n, c, "torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"),
        nodes=REFS,
    ),
    Rule(
        "PTF137",
        ("sdp-kernel-deprecated",),
        "torch.backends.cuda.sdp_kernel is deprecated since torch 2.3 (FutureWarning); use "
        "torch.nn.attention.sdpa_kernel([SDPBackend...]), with an ImportError fallback for torch 2.2 and older",
        lambda n, c: _use_of(n, c, "torch.backends.cuda.sdp_kernel"),
        nodes=REFS,
    ),
    Rule(
        "PTF138",
        ("symeig-removed",),
        "torch.symeig (and Tensor.symeig()) was removed in torch 2.0 (RuntimeError; deprecated since 1.9); use "
        "torch.linalg.eigh (eigenvalues ascending, the lower triangle by default), or torch.linalg.eigvalsh",
        lambda n, c: (
            _use_of(n, c, "torch.symeig")
            or (
                isinstance(n, ast.Call)
                and _method(n, "symeig")
                and c.qualified(n.func) is None
                and _receiver_may_be_tensor(n, c)
            )
        ),
        nodes=(ast.Attribute, ast.Name, ast.Call),
    ),
    Rule(
        "PTF139",
        ("torch-typing-names-removed",),
        "typing's names (Any, Callable, Dict, List, Optional, Set, Tuple, Union) are no longer attributes "
        "of torch from torch 2.5 (ImportError / AttributeError); import them from typing",
        lambda n, c: (
            (isinstance(n, ast.ImportFrom) and n.module == "torch" and any(a.name in TYPING_NAMES for a in n.names))
            or (isinstance(n, ast.Attribute) and _use_of(n, c, *TORCH_TYPING))
            or (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and _annotated_with(n, c, TORCH_TYPING))
        ),
        nodes=(ast.ImportFrom, ast.Attribute, ast.FunctionDef, ast.AsyncFunctionDef),
    ),
    Rule(
        "PTF140",
        ("autocast-gpu-dtype-deprecated",),
        "torch.get_autocast_gpu_dtype() is deprecated since torch 2.4 (DeprecationWarning on every call); use "
        "torch.get_autocast_dtype('cuda'), behind hasattr(torch, 'get_autocast_dtype') for torch 2.3 and older",
        lambda n, c: _use_of(n, c, "torch.get_autocast_gpu_dtype"),
        nodes=REFS,
    ),
)


# --- what every upgrade rule shares ---------------------------------------------------------
# The rules whose effect, on the releases they name, is a warning: a warning silenced on purpose
# (``warnings.catch_warnings()`` with an "ignore" filter around the call) is a deliberate choice.
WARNS_ONLY = frozenset(
    {
        "PTF104",
        "PTF105",
        "PTF106",
        "PTF107",
        "PTF108",
        "PTF109",
        "PTF110",
        "PTF111",
        "PTF112",
        "PTF115",
        "PTF117",
        "PTF118",
        "PTF119",
        "PTF120",
        "PTF121",
        "PTF122",
        "PTF124",
        "PTF125",
        "PTF127",
        "PTF128",
        "PTF129",
        "PTF133",
        "PTF134",
        "PTF136",
        "PTF137",
        "PTF140",
    }
)
# The rules about a deprecated name (a function, module or method to stop using): one decision per
# file (the import, or a file-wide rename), so one finding per file, at the first use outside a guard.
ONCE_PER_FILE = frozenset(
    {
        "PTF102",
        "PTF105",
        "PTF106",
        "PTF108",
        "PTF110",
        "PTF111",
        "PTF117",
        "PTF118",
        "PTF119",
        "PTF120",
        "PTF121",
        "PTF122",
        "PTF127",
        "PTF133",
        "PTF134",
        "PTF136",
        "PTF137",
        "PTF139",
        "PTF140",
    }
)


def _considered(rule: Rule) -> Rule:
    """The rule, quiet where the code uses the older API on purpose (guards.deliberate) and, for a
    deprecated name, after its first finding in the file."""
    test, warns, once = rule.test, rule.id in WARNS_ONLY, rule.id in ONCE_PER_FILE
    seen = {"module": None}

    def considered(node, ctx):
        found = test(node, ctx)
        if (not found and found is not UNSURE) or deliberate(node, ctx.module, warns):
            return False
        if once and found is not UNSURE:  # a preview finding does not take the file's one
            if seen["module"] is ctx.module:
                return False
            seen["module"] = ctx.module
        return found

    return replace(rule, test=considered)


UPGRADE_RULES = tuple(_considered(r) for r in UPGRADE_RULES)
