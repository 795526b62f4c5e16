"""What: A second backward() through a graph the first backward() already freed.
Why: backward() frees the graph's saved tensors: the second call raises a RuntimeError.
Fix: pass retain_graph=True to the first call, or sum the losses and call backward() once.
Two outputs of one call of a model whose forward runs separate heads on its input (an actor and a critic)
share no node: --preview.
"""

from __future__ import annotations

import ast
import os

from torch_pitfalls.lint.guards import _always_leaves
from torch_pitfalls.lint.package import defined_elsewhere
from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _called_name, _const, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _BUILTINS, _exclusive, _grad_off, _own_code
from torch_pitfalls.lint.rules.shared.modules import constructions
from torch_pitfalls.lint.rules.shared.tensors import _RAW_DATA
from torch_pitfalls.lint.rules.shared.training_loop import _enclosing_loops
from torch_pitfalls.lint.walking import children, kept_on, walk


def _in_function_calls(ctx, method: str):
    return [n for n in walk(ctx.function) if _method(n, method)] if ctx.function is not None else []


def _backward_twice(node, ctx) -> bool:
    """The second ``x.backward()`` on a graph whose first backward did not retain it."""
    if not _method(node, "backward"):
        return False
    loop = next(_enclosing_loops(node, ctx), None)  # both in one pass of the same loop (or both outside any)
    shared = [
        _shared_graph(c, node, ctx)
        for c in _in_function_calls(ctx, "backward")
        if c.lineno < node.lineno
        and _own_code(c, ctx)
        and next(_enclosing_loops(c, ctx), None) is loop
        and not _const(_kw(c, "retain_graph"), True)
        and not _exclusive(c, node, ctx.function)
        and not _leaves_after(c, node, ctx)
    ]
    return True if True in shared else (UNSURE if any(s is UNSURE for s in shared) else False)


def _leaves_after(first: ast.Call, second: ast.Call, ctx) -> bool:
    """After ``first`` its block always leaves (``continue``, ``break``, ``return``, ``raise``) before
    ``second`` is reached: a warm-up branch that steps and goes on to the next batch."""
    statement, up = first, ctx.parent(first)
    while up is not None and up is not ctx.function:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(up, field, None)
            if isinstance(block, list) and statement in block:
                inside = any(second is n for s in block for n in walk(s))
                if not inside and _always_leaves(block[block.index(statement) :]):
                    return True
        statement, up = up, ctx.parent(up)
    return False


def _loss_of(call: ast.Call, ctx):
    """What a backward call differentiates: ``loss.backward()``'s receiver; ``fabric.backward(loss)``'s
    argument (a framework's backward takes the loss); None when neither is a tensor we can see."""
    receiver = call.func.value
    if call.args and ctx.kind(receiver) != "tensor":
        made = ctx.value_of(receiver, call.lineno)  # out = model(x); out.backward(grad): a tensor, grad its gradient
        if isinstance(made, ast.Call) and not _called_name(made)[:1].isupper():  # not Accelerator()/Fabric()
            return receiver
        return call.args[0]
    return receiver


def _computed_sources(expr, ctx, line, depth=0, seen=None) -> dict:
    """The computed tensors ``expr`` was derived from in this function: a name bound to an op's result
    (a graph node), keyed by that binding (the assigned expression), so a name assigned again between
    two backward calls (``output = model(batch)`` before each) is two sources, one graph each; the
    value is the name to read the graph from. Parameters, loader batches and leaves made by a factory
    are not sources."""
    seen = set() if seen is None else seen
    out = {}
    for n in _graph_names(expr, ctx):
        if not isinstance(n, ast.Name) or n.id in seen or n.id in ("self", "cls") or depth > 8:
            continue
        seen.add(n.id)
        if _callable_name(n, ctx, line):
            continue  # a model, a loss or a helper: shared by both losses, but not a node of either graph
        value = ctx.value_of(n, line)
        if value is None:
            out.update((id(call), call) for call in _unpacked_call(n, ctx, line))
            continue
        if _grad_off(value, ctx):
            continue  # computed under torch.no_grad(): no node of any graph (a leaf once it requires grad)
        if isinstance(value, ast.Call) and (_leaf_factory(value, ctx) or _method(value, "requires_grad_")):
            continue  # ones_like(out), t.requires_grad_(): a new leaf, no node of a graph
        if isinstance(value, (ast.BinOp, ast.UnaryOp)) or (
            isinstance(value, ast.Call) and not _leaf_factory(value, ctx)
        ):
            out[id(value)] = n.id
        out.update(_computed_sources(value, ctx, line, depth + 1, seen))
    return out


_NOT_TENSORS = ("module", "loss", "optimizer", "scheduler", "loader")


def _callable_name(name: ast.Name, ctx, line) -> bool:
    """``name`` holds a module, a loss, an optimizer, a scheduler or a loader, or the function calls it
    (``model(*batch)``): a callable, not a tensor, so it is no node of a graph (what built it is not
    either)."""
    if ctx.kind(name, line) in _NOT_TENSORS:
        return True
    return name.id in _names_called(ctx.function or ctx.module)


def _names_called(function) -> frozenset:
    """The plain names the function calls (``model(x)``, ``G(z)``), from one walk per function."""
    return kept_on(
        function,
        "_names_called",
        lambda fn: frozenset(c.func.id for c in walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)),
    )


def _unpacked_call(name: ast.Name, ctx, line) -> set:
    """``logits, feats = model(x)``: the names unpacked from one call share that call's graph; the
    call itself (one node, the same for each of them) stands for it. A loader's batch (``x, y =
    batch``) is not a call."""
    binding, _ = ctx.bindings.lookup(name.id, ctx.chain(), line)
    if (
        binding is None
        or binding.how != "item"
        or not isinstance(binding.value, ast.Call)
        or not binding.value.args
        or not _forward_call(binding.value, ctx, line)
    ):
        return set()
    return {binding.value}


def _forward_call(call: ast.Call, ctx, line) -> bool:
    """A model run on its input: a ``self.`` attribute (``self.model(x)``) or a callable the function was
    handed or built (``net(x)``, ``gen(z)``); not a function of this module or a library's
    (``x, y = get_batch(i)``, ``ref, fp8 = build_pair(k, n)``: data or models, not one graph)."""
    func = call.func
    if isinstance(func, ast.Attribute):
        if getattr(func.value, "id", None) != "self" or ctx.kind(func, line) not in (None, "module"):
            return False
        # ``self._setup(model_id)`` in a test or trainer class: one of its own methods, a helper
        # that builds models and data, not a forward (which in an nn.Module it may be)
        return not _helper_method(func, ctx)
    if not isinstance(func, ast.Name) or ctx.qualified(func) is not None:
        return False
    binding, _ = ctx.bindings.lookup(func.id, ctx.chain(), line)
    return binding is not None and binding.how in ("param", "assign") and ctx.kind(func, line) in (None, "module")


def _helper_method(func, ctx) -> bool:
    """``self.name`` where the enclosing class, which is no nn.Module (a test case, a trainer, an agent), defines
    a method ``name`` or, having no forward, inherits one: a helper of that class, not a model (in an nn.Module,
    ``self.encode(x)`` runs the model's own layers)."""
    klass = ctx.klass
    if not (isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self" and klass is not None):
        return False
    if ctx.bindings.is_module_class(klass):
        return False
    methods = {f.name for f in klass.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return func.attr in methods or ("forward" not in methods and _inherited_method(func.attr, klass, ctx))


def _inherited_method(name: str, klass, ctx) -> bool:
    """An agent or trainer (no forward of its own) calling a method it inherits (``self.get_q_loss(batch)``):
    defined by a base class of the file, or by another file of the package; not an attribute the class sets
    (``self.critic = Critic(...)``: a model)."""
    if name in ctx.bindings.self_attributes(klass):
        return False
    classes = ctx.bindings.classes()
    bases = [classes.get(getattr(b, "id", None)) for b in klass.bases]
    if any(
        base is not None and any(isinstance(f, ast.FunctionDef) and f.name == name for f in base.body) for base in bases
    ):
        return True
    return ctx.path is not None and os.path.isfile(ctx.path) and defined_elsewhere(ctx.path, name)


def _graph_names(expr, ctx):
    """The names in ``expr`` that carry its graph: not those under ``.detach()``/``.item()`` or a
    factory (``torch.ones_like(out)``)."""
    todo = [expr]
    while todo:
        node = todo.pop()
        if (
            _method(node, "detach", "item", "numpy", "tolist")
            or (isinstance(node, ast.Call) and _leaf_factory(node, ctx))
            or isinstance(node, ast.Compare)  # x is not None, x > 0: a bool, no graph
        ):
            continue
        yield node
        todo.extend(children(node))


_LEAVES = _RAW_DATA[:9] + (
    "arange",
    "empty",
    "parameter",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "randint",
    "randint_like",
    "randperm",
    "linspace",
    "eye",
)


def _leaf_factory(call, ctx) -> bool:
    """A tensor made from nothing (a factory, ``ones_like(out)`` included): it carries no graph."""
    held = ctx.held(call)
    if held is not None and held.kind == "tensor" and held.what in _LEAVES:
        return True
    return (ctx.qualified(call.func) or "").split(".")[-1] in _LEAVES and (ctx.qualified(call.func) or "").startswith(
        "torch."
    )


def _has_graph(expr, ctx, line, depth=0) -> bool:
    """The expression carries an autograd graph as far as the code shows: it comes out of a model (a
    callable the function was handed or built: ``G(z)``, ``self.encoder(x)``) or from a leaf made with
    requires_grad=True, through ops; a factory's tensor, a library function of grad-free data, or a
    ``.detach()`` does not."""
    if depth > 10 or expr is None:
        return False
    d = depth + 1
    if isinstance(expr, (ast.Name, str)):
        value = ctx.bindings.value_of(getattr(expr, "id", expr), ctx.chain(), line)
        if value is None or ctx.kind(value, line) in ("module", "loss", "optimizer", "scheduler", "loader", "ndarray"):
            return False  # unknown, or the model itself rather than a tensor out of it
        if _grad_off(value, ctx):
            return False  # a target computed under torch.no_grad(): shared by both losses, a graph of neither
        return _has_graph(value, ctx, line, d)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and _callable_name(expr.value, ctx, line):
        return False  # discriminator.output_shape: a setting of the model, not its output
    if isinstance(expr, (ast.Attribute, ast.Subscript, ast.Starred)):
        return _has_graph(expr.value, ctx, line, d)
    if isinstance(expr, ast.BinOp):
        return _has_graph(expr.left, ctx, line, d) or _has_graph(expr.right, ctx, line, d)
    if isinstance(expr, ast.UnaryOp):
        return _has_graph(expr.operand, ctx, line, d)
    if not isinstance(expr, ast.Call):
        return False
    return _call_has_graph(expr, ctx, line, d)


def _call_has_graph(expr: ast.Call, ctx, line, d) -> bool:
    """``_has_graph`` of a call: a factory, a method, a library function, code of this module or a model."""
    if _leaf_factory(expr, ctx):
        return _const(_kw(expr, "requires_grad"), True)
    if _method(expr, "detach", "item", "numpy", "tolist", "detach_"):
        return False
    if _method(expr, "requires_grad_"):
        return True
    args = [*expr.args, *(k.value for k in expr.keywords)]
    from_args = any(_has_graph(a, ctx, line, d) for a in args)
    func = expr.func
    if ctx.qualified(func) is not None or _names_torch(func, ctx, line):  # a library function: its inputs' graph
        return from_args
    if (isinstance(func, ast.Name) and _plain_function(func, ctx, line)) or _helper_method(func, ctx):
        # int(opt.ngpu), tilt(x), self.make_inputs(n) in a test class: a builtin, a function of this
        # module or a method of a class that is no nn.Module, given only data, makes data; handed a
        # model (helper(model, x)) it may run it
        return from_args or any(isinstance(a, ast.Name) and _callable_name(a, ctx, line) for a in args)
    if isinstance(func, ast.Name) and _not_a_model(func, ctx, line):
        return from_args  # a function from a star import (DeepRL's tensor(x)), a class taken from a value
    if isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self"):
        return True  # a model or a method of one: G(z), self.encoder(x)
    if isinstance(func, ast.Attribute):
        held = ctx.held(func.value)
        if held is not None and held.kind in ("module", "loss"):
            return True
        return from_args or _has_graph(func.value, ctx, line, d)
    return from_args


def _not_a_model(func: ast.Name, ctx, line) -> bool:
    """A name the file never binds (a function a star import brings: ``tensor(x)``), or one bound to a value's
    class (``EntryCLS = entries.__class__``): a callable the file did not build as a model."""
    binding, _ = ctx.bindings.lookup(func.id, ctx.chain(), line)
    if binding is None:
        return func.id not in _BUILTINS
    value = binding.value if binding.how == "assign" else None
    return isinstance(value, ast.Attribute) and value.attr == "__class__"


def _names_torch(func, ctx, line) -> bool:
    """A name bound to torch's own callables: ``Tensor = torch.cuda.FloatTensor if cuda else
    torch.FloatTensor`` (a constructor, not a model)."""
    if not isinstance(func, ast.Name):
        return False
    value = ctx.bindings.value_of(func.id, ctx.chain(), line)
    parts = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
    return value is not None and all((ctx.qualified(p) or "").startswith("torch.") for p in parts)


def _plain_function(func: ast.Name, ctx, line) -> bool:
    """``func`` names a Python builtin nobody rebound (``int``, ``len``, ``sum``), a function defined
    with ``def`` in this module, or a class defined there (``Shift(1.0, 2.0)`` constructs an object, it runs
    no forward): code, not a model object."""
    binding, _ = ctx.bindings.lookup(func.id, ctx.chain(), line)
    if binding is None:
        return func.id in _BUILTINS
    return isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))


def _shared_graph(a: ast.Call, b: ast.Call, ctx) -> bool:
    """Both backward calls reach one computed intermediate that carries a graph (``y = x * x``,
    ``out = model(x)`` under both losses); sharing a leaf, a module, a target built by ``ones_like``,
    a grad-free input or a variable name is not sharing a graph."""
    la, lb = _loss_of(a, ctx), _loss_of(b, ctx)
    if la is None or lb is None:
        return False
    sources_a, sources_b = _computed_sources(la, ctx, a.lineno), _computed_sources(lb, ctx, b.lineno)
    shared = [key for key in sources_a.keys() & sources_b.keys() if _has_graph(sources_a[key], ctx, a.lineno)]
    if not shared:
        return False
    if all(isinstance(sources_a[key], ast.Call) and _separate_heads(sources_a[key], ctx, a.lineno) for key in shared):
        return UNSURE  # two outputs of one call, which its forward computes apart: they share a node only if one head
    made = {id(n): n for n in walk(ctx.function)}  # each shared source's own expression, by its key
    if all(_parts_apart(made.get(key), la, a.lineno, lb, b.lineno, ctx) for key in shared):
        return UNSURE  # prediction["log_pi_a"] and prediction["v"] of a model whose forward the file does not show
    return True


def _parts_apart(call, la, line_a, lb, line_b, ctx) -> bool:
    """The two losses read different parts of what one call of a model returns (``out["v"]``, ``out[0]``), and
    the file does not show that model's forward: whether those parts share a node is not known here."""
    if not isinstance(call, ast.Call):
        return False
    built = constructions(call.func, ctx.chain(), call.lineno, ctx.klass, ctx) or []
    if any(getattr(made.func, "id", None) in ctx.bindings.classes() for made, _chain in built):
        return False  # its forward is in the file: _separate_heads reads it
    bound = ctx.parent(call)
    if not (isinstance(bound, ast.Assign) and len(bound.targets) == 1 and isinstance(bound.targets[0], ast.Name)):
        return False
    name = bound.targets[0].id
    keys_a, keys_b = _parts_read(la, name, ctx, line_a), _parts_read(lb, name, ctx, line_b)
    return bool(keys_a) and bool(keys_b) and None not in keys_a | keys_b and not keys_a & keys_b


def _parts_read(expr, name, ctx, line, depth: int = 0, seen=None) -> set:
    """The constant keys under which ``expr`` reads ``name`` (through the names it is computed from); None in
    the set where it reads the whole value."""
    seen = set() if seen is None else seen
    keys = set()
    for n in walk(expr):
        if not isinstance(n, ast.Name) or depth > 8:
            continue
        if n.id == name:
            up = ctx.parent(n)
            keyed = isinstance(up, ast.Subscript) and up.value is n and isinstance(up.slice, ast.Constant)
            keys.add(up.slice.value if keyed else None)
        elif n.id not in seen:
            seen.add(n.id)
            value = ctx.value_of(n, line)
            if value is not None:
                keys |= _parts_read(value, name, ctx, line, depth + 1, seen)
    return keys


def _separate_heads(call: ast.Call, ctx, line) -> bool:
    """``_, infos = agent(state)`` of a module class of this file whose forward calls its submodules on what
    it was given, none on another's output (``self.actor(state)``, ``self.critic(state)``): its outputs
    are apart, so the losses share a graph only where they read the same head, which the code does not
    show. A shared trunk (``h = self.body(x)``, then two heads on ``h``) is one graph."""
    built = constructions(call.func, ctx.chain(), line, ctx.klass, ctx)
    classes = ctx.bindings.classes()
    forwards = []
    for made, _chain in built or ():
        klass = classes.get(getattr(made.func, "id", None) or "")
        forward = next((m for m in klass.body if getattr(m, "name", None) == "forward"), None) if klass else None
        if forward is None or not ctx.bindings.is_module_class(klass):
            return False
        forwards.append(forward)
    return bool(forwards) and all(_heads_on_inputs(f) for f in forwards)


def _heads_on_inputs(forward) -> bool:
    """Every ``self.<part>(...)`` call of ``forward`` takes what forward was given, not a name bound to another
    part's output, nor another part's call."""
    heads = [n for n in walk(forward) if isinstance(n, ast.Call) and _self_call(n)]
    outputs = {
        t.id
        for n in walk(forward)
        if isinstance(n, ast.Assign) and any(_self_call(c) for c in walk(n.value) if isinstance(c, ast.Call))
        for target in n.targets
        for t in walk(target)
        if isinstance(t, ast.Name)
    }
    return bool(heads) and not any(
        (isinstance(x, ast.Name) and x.id in outputs) or (isinstance(x, ast.Call) and _self_call(x))
        for h in heads
        for a in [*h.args, *(k.value for k in h.keywords)]
        for x in walk(a)
    )


def _self_call(call: ast.Call) -> bool:
    """``self.part(...)``, ``self.part.method(...)`` aside: a call of a submodule the class holds."""
    return isinstance(call.func, ast.Attribute) and getattr(call.func.value, "id", None) == "self"


RULE = Rule(
    "PTF012",
    ("backward-twice",),
    "a second backward() through a graph the first one freed raises; pass retain_graph=True to the "
    "first, or sum the losses and call backward once",
    _backward_twice,
    nodes=CALL,
    calls=("backward",),
    needs=("backward",),
)
