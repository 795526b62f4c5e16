"""What: A tensor assigned as a plain attribute in an nn.Module's __init__.
Why: It is not in state_dict() and is not moved or converted by .to()/.cuda()/.double().
Fix: register it with self.register_buffer(name, tensor), or wrap it in nn.Parameter if it is learned.
Reported where the file builds the model and moves or saves one, or the tensor is made to learn; else --preview.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import NON_TENSOR_METHODS, TENSOR_FUNCTIONS
from torch_pitfalls.lint.rules.base import UNSURE, Rule, _const, _kw, _method, _self_attr
from torch_pitfalls.lint.rules.shared.flow import context_at
from torch_pitfalls.lint.rules.shared.modules import _module_method, built_here, file_calls, subclasses, with_holders
from torch_pitfalls.lint.walking import kept_on, walk

_FACTORIES = (
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros",
    "ones",
    "empty",
    "full",
    "rand",
    "randn",
    "randint",
    "arange",
    "linspace",
    "eye",
    "zeros_like",
    "ones_like",
)


def _unregistered_tensor_attribute(node, ctx) -> bool:
    """``self.x = torch.zeros(...)`` in an nn.Module's ``__init__``, never registered as a buffer or
    wrapped in nn.Parameter: the tensor is left out of state_dict() and of .to()/.double()/.cuda()."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return False
    target = node.targets[0]
    fn = ctx.function
    if not (
        isinstance(target, ast.Attribute)
        and getattr(target.value, "id", None) == "self"
        and isinstance(fn, ast.FunctionDef)
        and fn.name == "__init__"
        and _module_method(ctx)
    ):
        return False
    if not _made_by_factory(node.value, ctx) or _scalar_or_placed(node.value, ctx):
        return False
    if _used_while_building_only(target.attr, node, ctx) or _indexes_only(target.attr, ctx):
        return False  # a size or a mask read in __init__ alone; an index, which works from any device
    if _read_as_metadata_only(target.attr, ctx):
        return False  # only its length or its text is ever read: no device or dtype meets it
    if _placed_at_use(target.attr, ctx):
        return False  # every use moves it to the input first: .to() of the module does not need to
    registered = {
        c.args[0].value
        for c in walk(ctx.klass)
        if _method(c, "register_buffer", "register_parameter") and c.args and isinstance(c.args[0], ast.Constant)
    }
    # an ``_apply`` override in the package reassigning it from ``fn(...)`` moves it with the model
    if target.attr in registered or target.attr in ctx.moved_by_package():
        return False
    if _kept_by_the_class(target.attr, ctx):
        return False
    return True if _made_to_learn(node.value, ctx) or _moved_or_saved_here(ctx) else UNSURE


def _made_to_learn(expr, ctx) -> bool:
    """Made with ``requires_grad=True``: meant to train, and no optimizer built from parameters() sees it,
    wherever the model is built."""
    call = ctx.resolve(expr, getattr(expr, "lineno", 1 << 30))
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and ctx.qualified(call.func) is None:
        call = call.func.value
    return isinstance(call, ast.Call) and _const(_kw(call, "requires_grad"), True)


def _moved_or_saved_here(ctx) -> bool:
    """The file builds a model of this class (or a subclass, or a module class holding one as a part) and
    moves, converts or saves a model: where the harm shows. A module class alone (a library's layer) leaves
    both to code not seen here (--preview)."""
    family = with_holders([ctx.klass, *subclasses(ctx.klass, ctx)], ctx)
    moves = ("to", "cuda", "double", "half", "float", "bfloat16", "state_dict")
    return file_calls(ctx, *moves) and built_here(family, ctx) and _a_model_of(family, moves, ctx)


def _a_model_of(family, moves, ctx) -> bool:
    """One of those calls may be on a model of the family: its receiver is such a model, or a module or an object
    of unknown type; not a tensor or an array (``torch.from_numpy(s).float()``), nor a model of another class of
    the file (``q_target.load_state_dict(q.state_dict())`` of a Q network beside the policy holding the tensor)."""
    names = frozenset(k.name for k in family)
    return kept_on(ctx.module, f"_ptf015_moved_{sorted(names)}", lambda module: _moves_one(module, names, moves, ctx))


def _moves_one(module, names, moves, ctx) -> bool:
    others = {k.name for k in ctx.bindings.classes().values()} - names
    for n in walk(module):
        if not _method(n, *moves):
            continue
        site = context_at(n, ctx)
        held = site.held(n.func.value, n.lineno) if site is not None else None
        if held is None or (held.kind == "module" and held.what not in others):
            return True
    return False


_MOVES = ("to", "cuda", "type_as")


def _scalar_or_placed(expr, ctx) -> bool:
    """A 0-dim tensor (``torch.tensor(0.5)``: it combines with a tensor on any device), or one made
    with an explicit ``device=`` (placed where the module's author wants it); not one made to be
    learnt (``requires_grad=True``: left out of parameters(), no optimizer ever sees it)."""
    call = ctx.resolve(expr, getattr(expr, "lineno", 1 << 30))
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and ctx.qualified(call.func) is None:
        if call.func.attr in _MOVES and (call.args or call.keywords or call.func.attr == "cuda"):
            return True  # torch.randn(n).cuda(), .to(device): placed by hand where it is made
        call = call.func.value  # torch.tensor(2.0).log(): the factory's call
    if not isinstance(call, ast.Call) or _const(_kw(call, "requires_grad"), True):
        return False
    if _kw(call, "device") is not None:
        return True
    name = (ctx.qualified(call.func) or "").rsplit(".", 1)[-1]
    if name in ("tensor", "as_tensor", "scalar_tensor") and call.args:
        return _a_number(call.args[0], ctx)
    if name in _REDUCTIONS and len(call.args) == 1 and not call.keywords:
        return True  # torch.prod(torch.tensor(shape)): reduced to 0-dim
    sizes = [a for a in call.args if not isinstance(a, ast.Starred)]
    if name in ("zeros", "ones", "empty", "full", "randn", "rand") and any(_const(a, 0) for a in sizes):
        return True  # torch.empty(0): a placeholder with no element to be on a device
    return name in ("zeros", "ones", "empty", "full", "randn", "rand") and (
        not call.args or (len(call.args) == 1 and isinstance(call.args[0], ast.Tuple) and not call.args[0].elts)
    )


# torch's reductions, which make a 0-dim tensor when given no dim
_REDUCTIONS = ("prod", "sum", "mean", "amax", "amin", "max", "min", "norm", "numel", "std", "var")


def _a_number(expr, ctx) -> bool:
    """A Python number: a literal (``0.5``, ``-1``), or a parameter of the enclosing function whose
    default is one (``def __init__(self, temp=0.07)``) or that is annotated ``float``/``int``."""
    if isinstance(expr, ast.UnaryOp):
        expr = expr.operand
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float))  # bool is an int
    fn = ctx.function
    if not (isinstance(expr, ast.Name) and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))):
        return False
    if ctx.value_of(expr, expr.lineno) is not None:  # rebound in the function: not the parameter any more
        return False
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults = dict(zip([p.arg for p in positional[len(positional) - len(a.defaults) :]], a.defaults))
    defaults.update({p.arg: v for p, v in zip(a.kwonlyargs, a.kw_defaults) if v is not None})
    param = next((p for p in [*positional, *a.kwonlyargs] if p.arg == expr.id), None)
    if param is None:
        return False
    if getattr(param.annotation, "id", None) in ("float", "int", "bool"):
        return True
    default = defaults.get(expr.id)
    if isinstance(default, ast.UnaryOp):
        default = default.operand
    return isinstance(default, ast.Constant) and isinstance(default.value, (int, float))


def _indexes_only(attr: str, ctx) -> bool:
    """Every read of ``self.<attr>`` outside ``__init__`` is an index into another tensor
    (``x[:, self.cont_idx]``): a CPU index tensor indexes a tensor on any device."""
    reads = _reads_outside_init(attr, ctx)
    return bool(reads) and all(_in_a_subscript_slice(n, ctx) for n in reads)


def _reads_outside_init(attr: str, ctx) -> list:
    return [
        n
        for fn in ctx.klass.body
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name != "__init__"
        for n in walk(fn)
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and _self_attr(n, attr)
    ]


_PLACING = ("to", "cuda", "type_as")


def _placed_at_use(attr: str, ctx) -> bool:
    """Every read of ``self.<attr>`` outside ``__init__`` moves it where the input is, there
    (``self.table.to(x)``) or first thing in the module function it is handed to (pyiqa's NIQE:
    ``calculate_niqe(x, ..., self.mu_pris_param)``, whose ``mu_pris_param.to(img)`` comes first): a
    constant table kept on the CPU on purpose and placed at each call."""
    reads = _reads_outside_init(attr, ctx)
    return bool(reads) and all(_placed_here(n, ctx) or _placed_by_callee(n, ctx) for n in reads)


def _placed_here(node, ctx) -> bool:
    up = ctx.parent(node)
    return isinstance(up, ast.Attribute) and up.attr in _PLACING and isinstance(ctx.parent(up), ast.Call)


def _placed_by_callee(node, ctx) -> bool:
    call = ctx.parent(node)
    if not (isinstance(call, ast.Call) and node in call.args and isinstance(call.func, ast.Name)):
        return False
    callee = ctx.bindings.module_function(call.func.id)
    params = [a.arg for a in callee.args.args] if callee is not None else []
    index = call.args.index(node)
    if index >= len(params):
        return False
    uses = sorted(
        (n for n in walk(callee) if isinstance(n, ast.Name) and n.id == params[index] and isinstance(n.ctx, ast.Load)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    return bool(uses) and _placed_here(uses[0], ctx)


def _read_as_metadata_only(attr: str, ctx) -> bool:
    """Every read of ``self.<attr>`` outside ``__init__`` takes its length or puts it in a message
    (``len(self.atomic_numbers)``, ``f"supported: {self.atomic_numbers}"``): metadata, never computed
    with the model's tensors, so where .to() leaves it does not matter."""
    reads = _reads_outside_init(attr, ctx)
    return bool(reads) and all(_as_metadata(n, ctx) for n in reads)


def _as_metadata(node, ctx) -> bool:
    up = ctx.parent(node)
    if isinstance(up, ast.Call) and getattr(up.func, "id", None) == "len" and node in up.args:
        return True
    while up is not None and not isinstance(up, ast.stmt):
        if isinstance(up, (ast.JoinedStr, ast.FormattedValue)):
            return True
        up = ctx.parent(up)
    return isinstance(up, ast.Raise)


# conversions that keep an index an index (``x[:, self.input_id.long()]``, pykan's MultKAN)
_INDEX_CASTS = ("long", "int", "bool")


def _in_a_subscript_slice(node, ctx) -> bool:
    up, child = ctx.parent(node), node
    while isinstance(up, ast.Attribute) and up.attr in _INDEX_CASTS:
        call = ctx.parent(up)
        if not (isinstance(call, ast.Call) and call.func is up and not call.args and not call.keywords):
            return False
        up, child = ctx.parent(call), call
    while isinstance(up, ast.Tuple):  # x[:, self.idx]
        up, child = ctx.parent(up), up
    return isinstance(up, ast.Subscript) and up.slice is child


def _used_while_building_only(attr: str, assign, ctx) -> bool:
    """``self.<attr>`` is read later in ``__init__`` (a layer size, a mask that picks parameters) and in
    no other method of the class: no forward ever meets it on another device."""

    def reads(fn):
        return [
            n for n in walk(fn) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and _self_attr(n, attr)
        ]

    methods = [fn for fn in ctx.klass.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))]
    in_init = [n for fn in methods if fn.name == "__init__" for n in reads(fn) if n.lineno > assign.lineno]
    return bool(in_init) and not any(reads(fn) for fn in methods if fn.name != "__init__")


def _kept_by_the_class(attr: str, ctx) -> bool:
    """The class's other methods take care of ``self.<attr>`` themselves: they move it where it is used
    (``self.bins.to(x.device)``, ``self.t = self.t.cuda()``) or replace it with a tensor computed at run
    time (a cache or a placeholder: ``self.cached = emb.cos()``), so ``.to()`` not moving it loses nothing. Not
    a value updated from itself (running statistics), nor one set by a method the forward pass never reaches
    (``fit(x)``: fitted statistics): that is state the module loses."""
    run_time = _reached_from_forward(ctx.klass)
    for fn in ctx.klass.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name == "__init__":
            continue
        for n in walk(fn):  # moved at use: self.bins.to(x.device), torch.as_tensor(self.m).to(x.device)
            if _method(n, *_MOVES) and any(_self_attr(x, attr) for x in walk(n.func.value)):
                return True
            if (
                isinstance(n, ast.Assign)
                and any(_self_attr(t, attr) for t in n.targets)
                and (_placed(n.value, ctx) or (not _factory_call(n.value, ctx) and fn.name in run_time))
                and not any(_self_attr(x, attr) for x in walk(n.value))
            ):
                return True  # replaced at run time, computed or placed (set_timesteps(..., device))
            # (a value computed from itself, self.mean = self.mean + delta: running statistics, the state
            # state_dict() should hold and .to() should move, not a cache)
    return False


def _reached_from_forward(klass) -> set[str]:
    """The names of the class's methods that ``forward`` runs, itself included, through ``self.<method>(...)``
    calls; every method of a class without a ``forward`` (a base or mixin: what runs is not shown)."""
    methods = {fn.name: fn for fn in klass.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if "forward" not in methods:
        return set(methods)
    reached, todo = set(), ["forward"]
    while todo:
        name = todo.pop()
        if name in reached or name not in methods:
            continue
        reached.add(name)
        todo += [
            c.func.attr
            for c in walk(methods[name])
            if isinstance(c, ast.Call) and _self_attr(c.func, getattr(c.func, "attr", None))
        ]
    return reached


def _placed(expr, ctx) -> bool:
    """A value put on a device where it is made: ``device=`` given, or ``.to(...)``/``.cuda()`` chained."""
    while isinstance(expr, ast.Call):
        if _kw(expr, "device") is not None or (
            isinstance(expr.func, ast.Attribute) and expr.func.attr in ("to", "cuda")
        ):
            return True
        expr = expr.func.value if isinstance(expr.func, ast.Attribute) else None
    return False


def _factory_call(expr, ctx) -> bool:
    """``torch.zeros(n)`` (or a method chained on it, ``torch.ones(n).float()``) written out: a new
    tensor on the default device, whatever the method's inputs were."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and ctx.qualified(expr.func) is None:
        expr = expr.func.value
    if not isinstance(expr, ast.Call):
        return False
    q = ctx.qualified(expr.func) or ""
    return q.count(".") == 1 and q.startswith("torch.") and q.split(".")[1] in _FACTORIES


def _made_by_factory(expr, ctx, depth=0) -> bool:
    """A tensor made here by a torch factory: ``torch.ones(d)``, and what arithmetic or a tensor method
    makes of one (``torch.ones(d) * d ** -0.5``, ``-torch.arange(n).float() / n``), directly or through
    a local name bound to one (``freq = torch.as_tensor(counts)``; ``(freq.sum() / freq).clamp(...)``)."""
    if depth > 8:
        return False
    if isinstance(expr, ast.Name):
        value = ctx.value_of(expr, expr.lineno)
        return value is not None and _made_by_factory(value, ctx, depth + 1)
    if isinstance(expr, ast.BinOp):
        return _made_by_factory(expr.left, ctx, depth + 1) or _made_by_factory(expr.right, ctx, depth + 1)
    if isinstance(expr, ast.UnaryOp):
        return _made_by_factory(expr.operand, ctx, depth + 1)
    if not isinstance(expr, ast.Call):
        return False
    if isinstance(expr.func, ast.Attribute) and ctx.qualified(expr.func) is None:  # a method of what it is called on
        return expr.func.attr not in NON_TENSOR_METHODS and _made_by_factory(expr.func.value, ctx, depth + 1)
    q = ctx.qualified(expr.func) or ""
    if not (q.count(".") == 1 and q.startswith("torch.")):
        return False
    if q.split(".")[1] in _FACTORIES:
        return True
    # torch.tril(t), torch.log(t): an op on a tensor made here is one too
    return q.split(".")[1] in TENSOR_FUNCTIONS and bool(expr.args) and _made_by_factory(expr.args[0], ctx, depth + 1)


RULE = Rule(
    "PTF015",
    # a trainable tensor kept so is also what torch.jit.trace refuses to insert as a constant
    ("unregistered-tensor-attribute", "jit-trace-grad-constant"),
    "a tensor assigned as a plain attribute in an nn.Module's __init__ is not in state_dict() and is not "
    "moved or converted by .to()/.cuda()/.double(); register it with self.register_buffer(name, tensor) "
    "(or wrap it in nn.Parameter if it is learned)",
    _unregistered_tensor_attribute,
    nodes=ast.Assign,
)
