"""What: the "best" weights kept as ``best = model.state_dict()`` in a training loop, restored or saved later.
Why: state_dict() holds the live parameter tensors (same storage), not copies: later optimizer steps write
into the "best" state too, and restoring it brings back the last weights.
Fix: copy it when you keep it: ``copy.deepcopy(model.state_dict())`` or
``{k: v.detach().clone() for k, v in model.state_dict().items()}`` (or torch.save it at once).
"""

# ``{k: v.cpu() for k, v in model.state_dict().items()}`` (and ``.to("cpu")``) is taken as a copy: it
# is one for a model on the GPU, which is what code that writes it is for; on a CPU model it hands
# back the same tensors, which the code does not show, and the rule does not report it.

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _is_call_to, _method
from torch_pitfalls.lint.rules.shared.flow import _dead, _function_values, _own_code, context_at
from torch_pitfalls.lint.rules.shared.training_loop import _enclosing_loops, _optimizer_step

# calls that make a new dict of the same tensors: a shallow copy is still a reference to every weight
_SHALLOW = ("dict", "collections.OrderedDict", "OrderedDict", "copy.copy")
# methods only an nn.Module has among the objects with a state_dict (an optimizer, a scheduler,
# a GradScaler have none of them)
_MODULE_METHODS = ("parameters", "named_parameters", "modules", "named_modules", "children", "train", "eval")
# what only an optimizer (or a wrapper of one) has: not a module
_OPTIMIZER_METHODS = ("step", "add_param_group", "get_lr", "set_lr", "get_last_lr")
_KEEP_STORAGE = ("detach", "requires_grad_")  # v.detach(): the same storage


# --- what holds the live tensors ------------------------------------------------------------------
def _module(expr, ctx):
    """True where ``expr`` is a module (bindings), or an object the function (or class, for a ``self.``
    attribute) also calls an nn.Module-only method on; UNSURE where nothing is known; False otherwise."""
    kind = ctx.kind(expr)
    if kind == "module":
        return True
    if kind is not None:
        return False
    if not (isinstance(expr, ast.Name) or _self_attr(expr)):
        return UNSURE if isinstance(expr, ast.Attribute) else False
    scopes = [ctx.function]
    if _self_attr(expr) and ctx.klass is not None:
        scopes = [m for m in ctx.klass.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    found = UNSURE
    for scope in scopes:
        for n in ast.walk(scope):
            if _method(n, *_OPTIMIZER_METHODS) and _same(n.func.value, expr):
                return False
            if isinstance(n, ast.Attribute) and n.attr == "param_groups" and _same(n.value, expr):
                return False
            if _method(n, *_MODULE_METHODS) and _same(n.func.value, expr):
                found = True
    return found


def _self_attr(node) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _same(a, b) -> bool:
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return a.id == b.id
    if _self_attr(a) and _self_attr(b):
        return a.attr == b.attr
    if isinstance(a, ast.Attribute) and isinstance(b, ast.Attribute):  # self.model.module
        return a.attr == b.attr and _same(a.value, b.value)
    return False


def _live_state(node, ctx):
    """``node`` gives a module's state_dict as it is (live tensors): ``m.state_dict()`` (not
    ``keep_vars``), or a call of a function of the module that returns its argument's state_dict
    (``snapshot = lambda m: m.state_dict()``). True / UNSURE / False, as ``_module``."""
    if _method(node, "state_dict") and not node.args:
        return _module(node.func.value, ctx)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1 and not node.keywords:
        values = _function_values(node.func.id, ctx.chain(), node.lineno, ctx)
        if values and all(_returns_state_of_argument(v) for v in values):
            return _module(node.args[0], ctx)
    return False


def _returns_state_of_argument(fn) -> bool:
    if not isinstance(fn, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.args.args:
        return False
    param = fn.args.args[0].arg
    if isinstance(fn, ast.Lambda):
        returned = fn.body
    else:
        body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if not (len(body) == 1 and isinstance(body[0], ast.Return)):
            return False
        returned = body[0].value
    while returned is not None and _reference_wrapper(returned) is not None:
        returned = _reference_wrapper(returned)
    return (
        _method(returned, "state_dict")
        and not returned.args
        and isinstance(returned.func.value, ast.Name)
        and returned.func.value.id == param
    )


def _reference_wrapper(expr):
    """The state a shallow wrapper copies only the dict of: ``dict(s)``, ``s.copy()``,
    ``{k: v for k, v in s.items()}`` (``v.detach()`` too); None for anything else."""
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
        name = getattr(expr.func, "id", None) or (
            f"{getattr(expr.func.value, 'id', '')}.{expr.func.attr}" if isinstance(expr.func, ast.Attribute) else None
        )
        if name in _SHALLOW:
            return expr.args[0]
    if _method(expr, "copy") and not expr.args:
        return expr.func.value
    if isinstance(expr, ast.DictComp) and len(expr.generators) == 1:
        gen = expr.generators[0]
        if (
            isinstance(gen.target, ast.Tuple)
            and len(gen.target.elts) == 2
            and isinstance(gen.target.elts[1], ast.Name)
            and _method(gen.iter, "items")
            and _same_value(expr.value, gen.target.elts[1].id)
        ):
            return gen.iter.func.value
    return None


def _same_value(expr, name: str) -> bool:
    """``v`` or ``v.detach()`` / ``v.data``: the same storage as ``v``."""
    while True:
        if isinstance(expr, ast.Name):
            return expr.id == name
        if _method(expr, *_KEEP_STORAGE) and not expr.args:
            expr = expr.func.value
        elif isinstance(expr, ast.Attribute) and expr.attr == "data":
            expr = expr.value
        else:
            return False


def _kept_in(node, ctx):
    """(statement, target) where the live state is bound to a name, a ``self.`` attribute or an entry
    (``best["model"]``), directly, through a shallow wrapper, as an element of a paired tuple
    (``best_epoch, best_state = epoch, m.state_dict()``) or a value of a dict literal."""
    expr, up = node, ctx.parent(node)
    while up is not None:
        inner = _reference_wrapper(up) if not isinstance(up, ast.Attribute) else None
        if inner is expr:
            expr, up = up, ctx.parent(up)
            continue
        if isinstance(up, ast.Attribute) and up.attr == "copy":  # s.copy(): the Call above it
            call = ctx.parent(up)
            if _reference_wrapper(call) is expr:
                expr, up = call, ctx.parent(call)
                continue
        if isinstance(up, ast.Attribute) and up.attr == "items":  # {k: v for k, v in s.items()}
            call = ctx.parent(up)
            gen = ctx.parent(call)
            comp = ctx.parent(gen) if isinstance(gen, ast.comprehension) else None
            if comp is not None and _reference_wrapper(comp) is expr:
                expr, up = comp, ctx.parent(comp)
                continue
        break
    if isinstance(up, ast.Dict) and expr in up.values:  # {"model": m.state_dict(), "epoch": e}
        expr, up = up, ctx.parent(up)
    if isinstance(up, ast.Tuple):  # a, b = x, m.state_dict()
        statement = ctx.parent(up)
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Tuple)
            and len(statement.targets[0].elts) == len(up.elts)
        ):
            return statement, statement.targets[0].elts[up.elts.index(expr)]
        return None
    if isinstance(up, ast.Assign) and len(up.targets) == 1 and up.value is expr:
        return up, up.targets[0]
    return None


def _root(target):
    while isinstance(target, ast.Subscript):
        target = target.value
    return target if isinstance(target, ast.Name) or _self_attr(target) else None


# --- training goes on, and the kept state is used afterwards ---------------------------------------
def _trains(loop, model, ctx) -> bool:
    """The loop changes the model's weights in place: a backward() or an optimizer step, a call handed
    an optimizer, a function of this module (or method of this class) that does either, or a
    ``load_state_dict`` into the model."""
    for n in ast.walk(loop):
        if not isinstance(n, ast.Call):
            continue
        if _method(n, "backward", "manual_backward") or _optimizer_step(n, ctx):
            return True
        if _method(n, "load_state_dict") and _same(n.func.value, model):
            return True
        if any(ctx.kind(a) == "optimizer" for a in [*n.args, *(k.value for k in n.keywords)]):
            return True
        callee = _local_callee(n, ctx)
        if callee is not None and any(
            isinstance(c, ast.Call) and (_method(c, "backward", "manual_backward") or _optimizer_step(c, ctx))
            for c in ast.walk(callee)
        ):
            return True
    return False


def _local_callee(call, ctx):
    """The function of this module (by name) or method of this class (``self.train_epoch()``) called."""
    if isinstance(call.func, ast.Name):
        return ctx.bindings.module_function(call.func.id)
    if _self_attr(call.func) and ctx.klass is not None:
        return next(
            (
                m
                for m in ctx.klass.body
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == call.func.attr
            ),
            None,
        )
    return None


def _restored(root, statement, loops, ctx) -> bool:
    """The kept state is used after more training: loaded back (``load_state_dict(best)``), returned, or
    saved anywhere but right where it was taken. In the function, a use after the statement or in the
    loops around it (a later iteration); for a ``self.`` attribute, a use in any other method too."""
    scopes = [ctx.function]
    if _self_attr(root) and ctx.klass is not None:
        scopes += [
            m
            for m in ctx.klass.body
            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m is not ctx.function
        ]
    block = _block_of(statement, ctx)
    outer = loops[-1] if loops else statement
    rebinds = [s for s in ast.walk(ctx.function) if _rebinds(s, root) and s is not statement]
    for scope in scopes:
        for n in ast.walk(scope):
            if scope is ctx.function and not (n is not statement and _after_or_within(n, statement, outer)):
                continue
            if scope is ctx.function and any(_rebound_between(r, statement, n, outer, ctx) for r in rebinds):
                continue  # the name holds another value there: ``checkpoint = {...}`` made anew and saved
            if isinstance(n, ast.Return) and n.value is not None and _uses(n.value, root):
                return True
            if _method(n, "load_state_dict") and n.args and _uses(n.args[0], root, exact=True):
                return True
            if _is_call_to(n, ctx, "torch.save") and n.args and _uses(n.args[0], root, exact=True):
                if not any(n in ast.walk(s) for s in block) and not _saved_before_training(statement, n, loops, ctx):
                    return True
    return False


def _rebinds(statement, root) -> bool:
    """``statement`` binds the whole of ``root`` anew (``checkpoint = {...}``), not an entry of it."""
    return isinstance(statement, ast.Assign) and any(_same(t, root) for t in statement.targets)


def _rebound_between(rebind, statement, node, loop, ctx) -> bool:
    """``rebind`` is the binding ``node`` reads: it runs after ``statement`` and before ``node``, in the
    same pass (both after the statement) or in a later pass of the loop (both before it)."""
    if not _comes_first(rebind, node, ctx):
        return False
    if rebind.lineno > statement.end_lineno:
        return True
    return node.lineno < statement.lineno and loop.lineno <= rebind.lineno


def _comes_first(statement, node, ctx) -> bool:
    """``statement`` runs before ``node`` on every path to it: it stands earlier in a block that holds
    ``node`` (or a statement around it)."""
    block = _block_of(statement, ctx)
    up = node
    while up is not None and up is not statement:
        if up in block[1:]:
            return True
        up = ctx.parent(up)
    return False


def _saved_before_training(statement, save, loops, ctx) -> bool:
    """``torch.save(checkpoint, path)`` later in the same pass of the loop, with no training step between
    the state being taken and saved (``checkpoint["ema"] = ema.state_dict()`` under ``if args.ema:``, the
    save under ``if not args.no_local_save:``): the file gets the weights as they were."""
    if not loops or not (statement.end_lineno < save.lineno <= loops[0].end_lineno):
        return False
    return not any(
        isinstance(c, ast.Call)
        and statement.end_lineno < c.lineno < save.lineno
        and (_method(c, "backward", "manual_backward") or _optimizer_step(c, ctx))
        for c in ast.walk(loops[0])
    )


def _after_or_within(node, statement, loop) -> bool:
    line = getattr(node, "lineno", None)
    if line is None:
        return False
    return line > statement.end_lineno or loop.lineno <= line <= loop.end_lineno


def _uses(expr, root, exact: bool = False) -> bool:
    """``expr`` is the kept state (or an entry of it: ``best["model"]``), or, unless ``exact``, holds it."""
    if not exact:
        return any(_same(n, root) for n in ast.walk(expr) if isinstance(n, (ast.Name, ast.Attribute)))
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return _same(expr, root)


def _block_of(statement, ctx) -> list:
    """The statements of the block ``statement`` sits in, from it on."""
    parent = ctx.parent(statement)
    for field in ("body", "orelse", "finalbody"):
        body = getattr(parent, field, None)
        if isinstance(body, list) and statement in body:
            return body[body.index(statement) :]
    return [statement]


def _leaves_the_loop(statement, ctx) -> bool:
    """The block that keeps the state leaves the loop right after (``break``, ``return``): no training
    follows."""
    return any(isinstance(s, (ast.Break, ast.Return)) for s in _block_of(statement, ctx))


def _best_state_kept_by_reference(node, ctx):
    if not isinstance(node, ast.Call) or ctx.function is None:
        return False
    if not (_method(node, "state_dict") or (isinstance(node.func, ast.Name) and len(node.args) == 1)):
        return False  # what _live_state can read: m.state_dict(), or a helper of the file handed the model
    if not _own_code(node, ctx) or _dead(node, ctx):
        return False
    live = _live_state(node, ctx)
    if live is False:
        return False
    kept = _kept_in(node, ctx)
    if kept is None:
        return False
    statement, target = kept
    root = _root(target)
    if root is None:
        return False
    model = node.func.value if _method(node, "state_dict") else node.args[0]
    loops = list(_enclosing_loops(node, ctx))
    if not loops:  # kept on an object between calls, restored by another method (an early-stopping helper)
        return live if _self_attr(root) and _restored_elsewhere(root, ctx) else False
    if _leaves_the_loop(statement, ctx):
        return False
    if any(
        _trains(loop, model, ctx) and not _rebuilt_each_pass(model, loop, statement) for loop in loops
    ) and _restored(root, statement, loops, ctx):
        return live
    return False


def _rebuilt_each_pass(model, loop, statement) -> bool:
    """``model = Transformer(...)`` in the loop, before the state is kept: each pass trains a new
    model, so the state kept from this one is never written into again (one run per seed, kept in
    ``out["model"]``). Not when the new value is made from the old (``model = model.to(device)``)."""
    if not isinstance(model, ast.Name):
        return False
    for n in ast.walk(loop):
        if isinstance(n, ast.Assign) and n.lineno < statement.lineno:
            targets = [t for target in n.targets for t in ast.walk(target) if isinstance(t, ast.Name)]
            if any(t.id == model.id for t in targets) and not any(
                isinstance(v, ast.Name) and v.id == model.id for v in ast.walk(n.value)
            ):
                return True
    return False


def _restored_elsewhere(root, ctx) -> bool:
    """``model.load_state_dict(self.best)`` in another method of the class than the one that keeps it,
    and not one that method itself calls (a snapshot restored before the same call returns, as
    captum's LRP does after replacing ``weight.data``, is not kept across training)."""
    if ctx.klass is None:
        return False
    methods = {m.name: m for m in ctx.klass.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    reached, todo = set(), [ctx.function]
    while todo:
        fn = todo.pop()
        for n in ast.walk(fn):
            if isinstance(n, ast.Call) and _self_attr(n.func) and n.func.attr in methods and n.func.attr not in reached:
                reached.add(n.func.attr)
                todo.append(methods[n.func.attr])
    return any(
        _method(n, "load_state_dict") and n.args and _uses(n.args[0], root, exact=True)
        for name, m in methods.items()
        if m is not ctx.function and name not in reached
        for n in ast.walk(m)
    ) or _restored_through_an_instance(root, ctx)


def _restored_through_an_instance(root, ctx) -> bool:
    """``model.load_state_dict(stopper.best_weights)`` outside the class, where ``stopper`` holds an object the
    file makes of it (``stopper = EarlyStopper(...)``): the caller restores the kept state after training."""
    klass = ctx.klass
    for n in ast.walk(ctx.module):
        if not (_method(n, "load_state_dict") and n.args):
            continue
        given = n.args[0]
        while isinstance(given, ast.Subscript):
            given = given.value
        if not (isinstance(given, ast.Attribute) and given.attr == root.attr and isinstance(given.value, ast.Name)):
            continue
        site = context_at(n, ctx)
        made = site.bindings.value_of(given.value.id, site.chain(), n.lineno) if site is not None else None
        if isinstance(made, ast.Call) and getattr(made.func, "id", None) == klass.name:
            return True
    return False


RULE = Rule(
    "PTF227",
    ("best-state-dict-is-a-reference",),
    "the kept state_dict() holds the live parameter tensors, not a copy: training goes on writing into it, "
    "and restoring it brings back the last weights; copy it: copy.deepcopy(model.state_dict()) "
    "(or {k: v.detach().clone() for k, v in model.state_dict().items()})",
    _best_state_kept_by_reference,
    nodes=CALL,
    needs=("state_dict",),
)
