"""What: A validation function that runs the model with autograd recording.
Why: model.eval() does not stop autograd: every activation is kept for a backward that never comes. The
harm is memory, so the rule is quiet in test code, and --preview where the file's or package's models
differentiate inside forward (they need autograd to evaluate).
Fix: wrap the loop in torch.no_grad() (or torch.inference_mode()).
"""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

from torch_pitfalls.lint.bindings import arguments
from torch_pitfalls.lint.package import package_folder, texts_under
from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _called_name, _const, _method
from torch_pitfalls.lint.rules.shared.leaves import _freeze
from torch_pitfalls.lint.walking import kept_on, walk

_EVAL_NAME = ("valid", "evaluat")
# words of a name that say it tests or predicts (PyTorch's MNIST example's ``test(model, device, loader)``,
# ``run_test``, ``predict``, ``run_inference``): an evaluation where it also switches a model to eval()
# (a ``predict`` helper may run inside a training step; pytest's tests are test code, quiet: scope.py)
_RUN_WORDS = ("test", "predict", "inference")


def _is_eval_function(fn) -> bool:
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    name = fn.name.lower()
    # ``eval`` as a word of the name (eval_one_epoch, _run_eval, do_eval), not inside one (retrieval)
    words = name.split("_")
    if any(w in name for w in _EVAL_NAME) or "eval" in words:
        return True
    return any(w in words for w in _RUN_WORDS) and kept_on(
        fn, "_ptf016_switches_to_eval", lambda f: any(_method(n, "eval") and not n.args for n in walk(f))
    )


_NO_GRAD = (
    "torch.no_grad",
    "torch.inference_mode",
    "torch.autograd.no_grad",
    "torch.autograd.grad_mode.no_grad",
    "torch.set_grad_enabled",
    "torch.enable_grad",
)


def _no_grad_decorated(fn, ctx) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if ctx.qualified(target) in _NO_GRAD or getattr(target, "attr", "") in ("no_grad", "inference_mode"):
            return True
        if _no_grad_wrapper(target, ctx):
            return True
    return False


def _no_grad_wrapper(target, ctx) -> bool:
    """A decorator of this module that runs what it wraps under no_grad (``def nograd(f): def new_f(*a):
    with torch.no_grad(): return f(*a)``)."""
    if not isinstance(target, ast.Name):
        return False
    decorator = ctx.bindings.module_function(target.id)
    return decorator is not None and any(_no_grad_block(n, ctx) for n in walk(decorator))


def _no_grad_block(node, ctx) -> bool:
    return isinstance(node, (ast.With, ast.AsyncWith)) and any(
        isinstance(i.context_expr, ast.Call)
        and (
            ctx.qualified(i.context_expr.func) in _NO_GRAD
            or _called_name(i.context_expr) in ("no_grad", "inference_mode")
        )
        for i in node.items
    )


def _called_under_no_grad(fn, ctx) -> bool:
    """This file calls the function inside ``with torch.no_grad():`` or from a no_grad-decorated function:
    the caller turned autograd off."""
    for n in walk(ctx.module):
        inside = _no_grad_block(n, ctx) or (
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not fn and _no_grad_decorated(n, ctx)
        )
        if inside and any(
            isinstance(c, ast.Call) and _called_name(c) == fn.name for stmt in n.body for c in walk(stmt)
        ):
            return True
    return False


def _eval_forward(fn, ctx):
    """The first model forward of a validation/evaluation function that runs with autograd recording
    (no ``torch.no_grad()``/``inference_mode()`` in it, on it or around its calls, no backward in it),
    or None."""
    if not _is_eval_function(fn) or _no_grad_decorated(fn, ctx) or _lightning_eval_hook(fn, ctx):
        return None
    if _model_api(fn, ctx):
        return None
    calls = sorted((n for n in walk(fn) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    if any(
        ctx.qualified(c.func) in _NO_GRAD
        or _called_name(c)
        in ("no_grad", "inference_mode", "set_grad_enabled", "enable_grad", "backward", "grad", "requires_grad_")
        for c in calls
    ) or any(isinstance(n, ast.Attribute) and n.attr == "grad_fn" for n in walk(fn)):
        return None  # the function turns autograd off itself, or uses the graph (reads .grad_fn)
    if any(_freezes_parameters(ctx.bindings.module_function(_called_name(c)), ctx) for c in calls):
        return None  # ``with frozen(model):`` a helper of this file turns the parameters' gradients off
    chain = ctx.chain()
    # what the function puts in eval mode is a module, however it was bound (``self.model = model``)
    evaluated = {ast.dump(c.func.value) for c in calls if _method(c, "eval") and not c.args and not c.keywords}

    def is_model(expr, line):
        held = ctx.bindings.held(expr, chain, line, ctx.klass)
        return (held is not None and held.kind == "module") or (
            held is None and (_name_of_model(expr) or ast.dump(expr) in evaluated)
        )

    modes = [c for c in calls if _method(c, "train", "eval")]
    for c in calls:
        if _in_train_mode(c, modes):
            continue  # model.train() then model(x): a training forward, not an evaluation
        if is_model(c.func, c.lineno) or _helper_runs(c, lambda e: is_model(e, c.lineno), ctx):  # noqa: B023 - called here
            if _called_under_no_grad(fn, ctx) or _input_wants_grad(c, ctx) or _called_to_differentiate(fn, ctx):
                return None
            if _model_frozen(c.func, ctx):
                continue  # an EMA teacher whose parameters the file detached: its forward records nothing
            return c
    return None


def _model_frozen(expr, ctx) -> bool:
    """The file turns off the gradient of every parameter of the module ``expr`` names, as written
    (``for p in teacher_model.parameters(): p.detach_()`` or ``p.requires_grad = False``, or
    ``teacher_model.requires_grad_(False)``): its forward records no graph."""
    text = ast.unparse(expr)
    for n in walk(ctx.module):
        frozen = _freeze(n)
        if frozen is not None and ast.unparse(frozen) == text:
            return True
        if (
            isinstance(n, ast.For)
            and isinstance(n.target, ast.Name)
            and _method(n.iter, "parameters")
            and ast.unparse(n.iter.func.value) == text
        ):
            for m in walk(n):
                frozen = m.func.value if _method(m, "detach_") else _freeze(m)
                if isinstance(frozen, ast.Name) and frozen.id == n.target.id:
                    return True
    return False


def _called_to_differentiate(fn, ctx) -> bool:
    """This file differentiates what the function returns: a caller assigns its result and calls ``backward()``
    on a value computed from it, as a SAC agent's ``evaluate(state)`` gives the reparameterised action its policy
    loss is built on; the graph is the point, whatever the function's name says."""
    sites = ctx.bindings.call_sites(fn.name) + [
        site for site in ctx.bindings.method_call_sites(fn.name) if getattr(site[0].func.value, "id", None) == "self"
    ]
    return any(_result_differentiated(call, chain[0], ctx) for call, chain, _klass in sites if chain[0] is not fn)


def _result_differentiated(call, caller, ctx) -> bool:
    """``a, b = f(x)`` in ``caller``, then ``loss = g(b)`` ... ``loss.backward()``: a name computed from the call's
    result (assignment by assignment, in the order of the code) is differentiated."""
    if not isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    parent = ctx.parent(call)
    if not isinstance(parent, ast.Assign) or parent.value is not call:
        return False
    reads = lambda expr: {n.id for n in walk(expr) if isinstance(n, ast.Name)}  # noqa: E731
    tainted = {n.id for t in parent.targets for n in walk(t) if isinstance(n, ast.Name)}
    after = sorted(
        (n for n in walk(caller) if getattr(n, "lineno", 0) > parent.lineno and isinstance(n, (ast.Assign, ast.Call))),
        key=lambda n: (n.lineno, n.col_offset),
    )
    for node in after:
        if isinstance(node, ast.Assign) and reads(node.value) & tainted:
            tainted |= {n.id for t in node.targets for n in walk(t) if isinstance(n, ast.Name)}
        elif _method(node, "backward") and reads(node.func.value) & tainted:
            return True
    return False


def _input_wants_grad(call, ctx) -> bool:
    """The forward's input is a ``self.`` attribute the class makes require grad (``self.x.requires_grad_()``):
    the outputs are differentiated with respect to it (a PINN's derivatives, a saliency map), so the graph
    is the point."""
    if ctx.klass is None:
        return False
    attrs = {a.attr for a in call.args if isinstance(a, ast.Attribute) and getattr(a.value, "id", None) == "self"}
    for n in walk(ctx.klass):
        target = None
        if _method(n, "requires_grad_") and not (n.args and _const(n.args[0], False)):
            target = n.func.value
        elif isinstance(n, ast.Assign) and _const(n.value, True):
            target = next(
                (t.value for t in n.targets if isinstance(t, ast.Attribute) and t.attr == "requires_grad"), None
            )
        if isinstance(target, ast.Attribute) and getattr(target.value, "id", None) == "self" and target.attr in attrs:
            return True
    return False


def _freezes_parameters(helper, ctx) -> bool:
    """``helper`` (a function of this file, or None) sets ``requires_grad = False`` on what it is given
    (MACE's ``preserve_grad_state``, a context manager wrapped around the evaluation): no graph reaches
    the weights, and a model that needs autograd inside (forces as gradients of an energy) still works."""
    if helper is None:
        return False
    return kept_on(helper, "_ptf016_freezes", lambda fn: any(_freeze(n) is not None for n in walk(fn)))


def _model_api(fn, ctx) -> bool:
    """A method of an nn.Module that loops over no data: part of the model's own computation, which
    its callers may differentiate (Stable-Baselines3's ``policy.evaluate_actions(obs, actions)`` gives
    the PPO loss its log-probabilities), not an evaluation run over a dataset. So is such a method of
    a class built on another file's base (sb3-contrib's policy on SB3's ``BasePolicy``, whose being a
    module this file cannot see) that switches nothing to eval() itself."""
    klass = ctx.klass
    if (
        klass is None
        or fn not in klass.body
        or any(isinstance(n, (ast.For, ast.While, ast.AsyncFor)) for n in walk(fn))
    ):
        return False
    if ctx.bindings.is_module_class(klass):
        return True
    return bool(klass.bases) and not any(_method(n, "eval") and not n.args for n in walk(fn))


def _in_train_mode(call, modes) -> bool:
    """The last ``.train()``/``.eval()`` the function called on ``call``'s model before it is ``.train()``
    (``.train(False)`` is eval)."""
    target = ast.dump(call.func)
    before = [
        m
        for m in modes
        if ast.dump(m.func.value) == target and (m.lineno, m.col_offset) < (call.lineno, call.col_offset)
    ]
    if not before:
        return False
    last = before[-1]
    return last.func.attr == "train" and not (last.args and _const(last.args[0], False))


# the hooks Lightning's evaluation loops call under torch.no_grad()/inference_mode(): the step
# methods of a LightningModule (whose signature carries ``batch_idx``) and the evaluation hooks of a
# LightningModule or a Callback
_LIGHTNING_STEPS = ("validation_step", "test_step", "predict_step")


_LIGHTNING_HOOKS = ("on_validation_", "on_test_", "on_predict_", "validation_epoch_end", "test_epoch_end")


def _lightning_eval_hook(fn, ctx) -> bool:
    klass = ctx.klass
    if klass is None or fn not in klass.body:
        return False
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    if fn.name in _LIGHTNING_STEPS and "batch_idx" in params:
        return True
    lightning = any(
        (q := ctx.qualified(b) or "").startswith(("lightning.", "pytorch_lightning."))
        and q.rsplit(".", 1)[-1] in ("LightningModule", "Callback")
        for b in klass.bases
    )
    return lightning and (fn.name in _LIGHTNING_STEPS or fn.name.startswith(_LIGHTNING_HOOKS))


def _helper_runs(call, is_model, ctx, depth=0) -> bool:
    """``compute_loss(model, batch)``: a function of this module handed the model calls it (directly, or
    through another such function), with no no_grad()/inference_mode() of its own, on it or in it.
    A helper that only reads ``model.training`` or its parameters does not run a forward."""
    if not isinstance(call.func, ast.Name) or depth > 3:
        return False
    helper = ctx.bindings.module_function(call.func.id)
    if helper is None or _no_grad_decorated(helper, ctx):
        return False
    handed = {
        param for param, arg in arguments(call, helper).items() if not isinstance(arg, ast.Starred) and is_model(arg)
    }
    if not handed:
        return False
    inner = [n for n in walk(helper) if isinstance(n, ast.Call)]
    if any(
        ctx.qualified(c.func) in _NO_GRAD
        or _called_name(c) in ("no_grad", "inference_mode", "set_grad_enabled", "enable_grad", "backward", "grad")
        for c in inner
    ):
        return False
    by_param = lambda e: isinstance(e, ast.Name) and e.id in handed  # noqa: E731
    return any(by_param(c.func) or _helper_runs(c, by_param, ctx, depth + 1) for c in inner)


def _name_of_model(callee) -> bool:
    """``model``/``net``, or ``self.model``/``self.net``: the usual names of the model being validated
    (a parameter, or a trainer's attribute set from one)."""
    if isinstance(callee, ast.Attribute) and getattr(callee.value, "id", None) == "self":
        callee = ast.Name(callee.attr)
    return isinstance(callee, ast.Name) and callee.id in ("model", "net")


def _eval_without_no_grad(node, ctx) -> bool:
    """Reported at the forward call that records the graph (where no_grad() belongs)."""
    fn = ctx.function
    if not (
        isinstance(node, ast.Call)
        and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
        and isinstance(node.func, (ast.Name, ast.Attribute))
        and _is_eval_function(fn)
    ):
        return False
    found = ctx.__dict__.setdefault("_eval_forward", {})  # once per function, not per call in it
    if id(fn) not in found:
        found[id(fn)] = _eval_forward(fn, ctx)
    if found[id(fn)] is not node:
        return False
    return UNSURE if _differentiates_in_forward(ctx) else True


def _differentiates_in_forward(ctx) -> bool:
    """A module class of this file or its package calls ``torch.autograd.grad`` in its ``forward`` (forces as
    the gradient of an energy, a PINN's derivatives): its models need autograd to evaluate, and which model
    is evaluated here is not known (--preview)."""
    if kept_on(ctx.module, "_grad_in_forward", lambda tree: [_grad_in_forward(tree)])[0]:
        return True
    if ctx.path is None or not os.path.isfile(ctx.path):
        return False
    return _package_grad_in_forward(package_folder(Path(ctx.path).resolve()))


@functools.lru_cache(maxsize=16)
def _package_grad_in_forward(folder: tuple) -> bool:
    for path, text in texts_under(*folder).items():
        if "autograd.grad(" in text or ("from torch.autograd import grad" in text and "grad(" in text):
            try:
                if _grad_in_forward(ast.parse(text, filename=str(path))):
                    return True
            except SyntaxError:
                continue
    return False


def _grad_in_forward(tree) -> bool:
    """A ``forward`` method that calls torch.autograd.grad (or ``grad`` imported from torch.autograd)."""
    return any(
        isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
        and fn.name == "forward"
        and any(isinstance(n, ast.Call) and _autograd_grad(n.func) for n in walk(fn))
        for fn in walk(tree)
    )


def _autograd_grad(func) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "grad" and ast.unparse(func.value).rsplit(".", 1)[-1] == "autograd"
    return isinstance(func, ast.Name) and func.id == "grad"


RULE = Rule(
    "PTF016",
    ("eval-without-no-grad",),
    "this validation function runs the model with autograd recording (model.eval() does not stop it): "
    "every activation is kept for a backward that never comes; wrap the loop in torch.no_grad() "
    "(or torch.inference_mode())",
    _eval_without_no_grad,
    nodes=CALL,
    harm="memory",  # the same results, every activation held: nothing a small test checks
)
