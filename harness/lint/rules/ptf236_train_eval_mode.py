"""What: a model holding Dropout or BatchNorm evaluated under torch.no_grad()/inference_mode() (predictions, a
validation loss, an accuracy) that nothing in the file can put in eval mode (no .eval(), no .train(False)).
Why: no_grad() turns autograd off and nothing else: Dropout still drops and BatchNorm normalises each batch with
its own statistics, so a sample's prediction depends on its batch and on chance.
Fix: call model.eval() before evaluating (and model.train() before training again).
In test code (a test comparing two models run in train mode on one seed): --preview.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import MODULE_SELF_METHODS, returned_values
from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _bound_name, _const, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import GRAD_OFF_QUALIFIED, _decorated_grad_off, context_at, helper_calls
from torch_pitfalls.lint.rules.shared.modules import _module_method, constructions
from torch_pitfalls.lint.rules.shared.training_loop import _optimizer_step
from torch_pitfalls.lint.testcode import in_test_code
from torch_pitfalls.lint.walking import children, kept_on, walk

_WRAPPERS = (
    "torch.compile",
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.DistributedDataParallel",
)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

# torch.nn layers whose forward reads the training flag
_DROPOUTS = frozenset("Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout".split())
_BATCHNORMS = frozenset(
    "BatchNorm1d BatchNorm2d BatchNorm3d SyncBatchNorm LazyBatchNorm1d LazyBatchNorm2d LazyBatchNorm3d".split()
)
_INSTANCENORMS = frozenset("InstanceNorm1d InstanceNorm2d InstanceNorm3d".split())  # only with track_running_stats
_RNNS = {"RNN": 6, "LSTM": 5, "GRU": 5}  # dropout's position: input, hidden, layers, (nonlinearity), bias, batch_first
_TRANSFORMER_LAYERS = frozenset("TransformerEncoderLayer TransformerDecoderLayer Transformer".split())  # dropout=0.1
_STACKS = frozenset("TransformerEncoder TransformerDecoder".split())  # the layer they are given
_CONTAINERS = frozenset("Sequential ModuleList ModuleDict".split())
# torchvision model builders (and timm model names) whose networks hold BatchNorm, Dropout or stochastic depth
_LIBRARY_MODELS = (
    "resnet",
    "resnext",
    "wide_resnet",
    "vgg",
    "alexnet",
    "densenet",
    "mobilenet",
    "efficientnet",
    "inception",
    "googlenet",
    "shufflenet",
    "squeezenet",
    "mnasnet",
    "regnet",
    "convnext",
    "swin",
    "maxvit",
    "fasterrcnn",
    "maskrcnn",
    "keypointrcnn",
    "retinanet",
    "fcos",
    "ssd",
    "deeplabv3",
    "fcn_",
    "lraspp",
    "r3d_",
    "r2plus1d",
    "mc3_",
)


def _sets_mode(call) -> bool:
    """``x.eval()``, or ``x.train(...)`` with anything but a literal True (``train(False)``,
    ``train(mode)``, ``train(was_training)``)."""
    if _method(call, "eval") and not call.args and not call.keywords:
        return True
    if _method(call, "train") and (call.args or call.keywords):
        mode = call.args[0] if call.args else _kw(call, "mode")
        return not _const(mode, True)
    return False


def _file_sets_eval(ctx) -> bool:
    """Anything in the file puts a module in eval mode (or assigns ``.training``): the evaluation may be
    reached with the model in eval mode, from a caller or another method of the same object."""

    def scan(tree):
        for n in walk(tree):
            if isinstance(n, ast.Call) and _sets_mode(n):
                return True
            if isinstance(n, (ast.Assign, ast.AugAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                if any(isinstance(t, ast.Attribute) and t.attr == "training" for t in targets):
                    return True
            if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "setattr" and len(n.args) > 1:
                if _const(n.args[1], "training"):
                    return True
        return False

    return kept_on(ctx.module, "_ptf236_sets_eval", lambda tree: [scan(tree)])[0]


def _grad_off_with(node, ctx):
    """The ``with torch.no_grad():`` (inference_mode, set_grad_enabled(False)) around ``node`` in its
    function, else the function when it is decorated so, or when it is a helper whose every call runs
    with gradients off (``with torch.inference_mode(): ... predict(members, images)``); None where
    gradients are on."""
    block = _with_block(node, ctx)
    if block is not None:
        return block
    fn = ctx.function
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if _decorated_grad_off(fn, ctx):
        return fn
    return fn if kept_on(fn, "_ptf236_called_grad_off", lambda fn: [_called_grad_off(fn, ctx)])[0] else None


def _called_grad_off(fn, ctx) -> bool:
    """Every call of the helper ``fn`` in the module sits in grad-off code of its caller; asked once per helper
    (each of its model calls asks)."""
    callers = [(site, context_at(site, ctx)) for site in helper_calls(fn, ctx) or ()]
    return bool(callers) and all(
        c is not None and (_with_block(s, c) is not None or _decorated_grad_off(c.function, c)) for s, c in callers
    )


def _with_block(node, ctx):
    """The grad-off ``with`` block around ``node`` in its function, or None."""
    up = ctx.parent(node)
    while up is not None and up is not ctx.function:
        if isinstance(up, (ast.With, ast.AsyncWith)) and any(_turns_grad_off(i.context_expr, ctx) for i in up.items):
            return up
        if isinstance(up, _NESTED):
            return None
        up = ctx.parent(up)
    return None


def _turns_grad_off(expr, ctx) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    q = ctx.qualified(expr.func)
    if q in GRAD_OFF_QUALIFIED:
        return True
    if q in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled"):
        return bool(expr.args) and _const(expr.args[0], False)
    return False


def _own(code):
    """The nodes of a function's or loop's own code: not of the functions, classes and loops nested in it."""
    body = code.body if isinstance(code.body, list) else [code.body]
    todo = [s for s in body if not isinstance(s, (*_NESTED, *_LOOPS))]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(c for c in children(node) if not isinstance(c, (*_NESTED, *_LOOPS)))


def _trains(code, ctx) -> bool:
    """backward() or an optimizer's step in this code itself (not in a loop nested in it)."""
    return any(isinstance(n, ast.Call) and (_method(n, "backward") or _optimizer_step(n, ctx)) for n in _own(code))


def _training_step(block, ctx) -> bool:
    """The grad-off block is part of a training step: the innermost loop around it (else the function)
    runs backward()/step() itself, so what the block computes feeds training (a teacher's targets, a
    GAN's samples, a BYOL target network), where the mode may be chosen on purpose."""
    up = ctx.parent(block) if block is not ctx.function else None
    while up is not None and up is not ctx.function:
        if isinstance(up, _LOOPS):
            return _trains(up, ctx)
        up = ctx.parent(up)
    return ctx.function is not None and _trains(ctx.function, ctx)


def _sampled(node, block, ctx) -> bool:
    """The call repeats on the same input: in a comprehension over ``range(...)`` inside the grad-off block,
    or in a loop over ``range(...)`` whose counter the loop never reads, with no loop over data in between
    (Monte Carlo dropout keeps the model in train mode on purpose)."""
    up = ctx.parent(node)
    while up is not None and up is not ctx.function:
        if isinstance(up, _COMPREHENSIONS) and any(_over_range(g.iter) for g in up.generators):
            return True
        if isinstance(up, (ast.For, ast.AsyncFor)):
            if not _over_range(up.iter):
                return False  # a loop over data: each call sees new inputs
            if not _reads_target(up):
                return True
        up = ctx.parent(up)
    return False


def _reads_target(loop) -> bool:
    names = {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}
    return any(isinstance(n, ast.Name) and n.id in names for stmt in loop.body for n in walk(stmt))


def _over_range(iterable) -> bool:
    return isinstance(iterable, ast.Call) and getattr(iterable.func, "id", None) == "range"


def _positive(value) -> bool | None:
    """A dropout probability: True above zero, False at zero, None unknown (a variable)."""
    if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)) and not isinstance(value.value, bool):
        return value.value > 0
    return None


def _mode_dependent(call, ctx, seen=()) -> bool | None:
    """Whether the module ``call`` builds behaves differently in train and eval mode (Dropout, BatchNorm,
    an RNN's or a Transformer layer's dropout, a class of this file that builds one or reads
    ``self.training``): True, False, or None where the file does not show it."""
    if not isinstance(call, ast.Call) or len(seen) > 8:
        return None
    q = ctx.qualified(call.func) or ""
    last = q.rsplit(".", 1)[-1]
    if q.startswith("torch.nn.") and q.count(".") == 2:
        return _torch_layer(call, last, ctx, seen)
    if q.startswith("torchvision.models."):
        return True if last.lower().startswith(_LIBRARY_MODELS) and _trained(call, ctx) else None
    if q in ("timm.create_model", "timm.models.create_model"):
        name = call.args[0] if call.args else _kw(call, "model_name")
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            known = name.value.lower().split(".")[0].startswith(_LIBRARY_MODELS)
            return True if known and _trained(call, ctx) else None
        return None
    if isinstance(call.func, ast.Name):
        klass = ctx.bindings.classes().get(call.func.id)
        if klass is not None and ctx.bindings.is_module_class(klass) and klass not in seen:
            return _class_mode_dependent(klass, ctx, (*seen, klass))
    return None


def _trained(call, ctx) -> bool:
    """A library model with weights worth evaluating: built with pretrained weights, or in a file that
    loads a state dict or builds an optimizer. A randomly initialised one used for nothing else (a shape
    or embedding demo) is left to --preview."""
    for keyword in ("weights", "pretrained"):
        value = _kw(call, keyword)
        if value is not None and not _const(value, None) and not _const(value, False):
            return True

    return _file_trains(ctx)


def _file_trains(ctx) -> bool:
    """The file loads a state dict or builds an optimizer: its models hold weights worth evaluating."""

    def scan(tree):
        return any(
            _method(n, "load_state_dict")
            or (isinstance(n, ast.Call) and (ctx.qualified(n.func) or "").startswith("torch.optim."))
            for n in walk(tree)
        )

    return kept_on(ctx.module, "_ptf236_trains", lambda tree: [scan(tree)])[0]


def _library_model(what) -> bool:
    """A torchvision builder of a model family that holds BatchNorm or Dropout (``torchvision.models.resnet18``)."""
    return (what or "").startswith("torchvision.models.") and what.rsplit(".", 1)[-1].lower().startswith(
        _LIBRARY_MODELS
    )


def _torch_layer(call, last, ctx, seen) -> bool | None:
    if last in _DROPOUTS:
        p = call.args[0] if call.args else _kw(call, "p")
        return True if p is None else _positive(p) is not False
    if last in _BATCHNORMS:
        return True
    if last in _INSTANCENORMS:
        track = _kw(call, "track_running_stats")
        return track is not None and not _const(track, False)
    if last in _RNNS:
        p = call.args[_RNNS[last]] if len(call.args) > _RNNS[last] else _kw(call, "dropout")
        return False if p is None else _positive(p) is not False
    if last in _TRANSFORMER_LAYERS:
        p = _kw(call, "dropout")
        return True if p is None else _positive(p) is not False
    if last == "MultiheadAttention":
        p = _kw(call, "dropout")
        return False if p is None else _positive(p) is not False
    if last in _STACKS:
        layer = call.args[0] if call.args else _kw(call, "encoder_layer") or _kw(call, "decoder_layer")
        return _parts_dependent([layer], ctx, seen)
    if last in _CONTAINERS:
        return _parts_dependent([*call.args, *(k.value for k in call.keywords)], ctx, seen)
    return False  # another torch.nn layer: Linear, Conv2d, ReLU, Embedding, LayerNorm...


def _parts_dependent(parts, ctx, seen) -> bool | None:
    """Any of the layers given to a container: elements of a list, dict or generator, a ``*layers``."""
    found = False
    for part in parts:
        if isinstance(part, ast.Starred):
            part = part.value
        if isinstance(part, (ast.List, ast.Tuple)):
            inner = _parts_dependent(part.elts, ctx, seen)
        elif isinstance(part, ast.Dict):
            inner = _parts_dependent(part.values, ctx, seen)
        elif isinstance(part, ast.Call) and ctx.qualified(part.func):
            inner = _mode_dependent(part, ctx, seen)
        elif isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and part.func.id in ctx.bindings.classes():
            inner = _mode_dependent(part, ctx, seen)
        elif (passed := _passed_through(part, ctx)) is not None:
            inner = _parts_dependent([passed], ctx, seen)
        else:
            inner = None
        if inner:
            return True
        if inner is None:
            found = None
    return found


def _passed_through(call, ctx):
    """``layer_init(nn.Linear(4, 8))``: a function of this module that returns the layer it is given
    (after initialising it); the argument it returns, else None."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    fn = ctx.bindings.module_function(call.func.id)
    if fn is None:
        return None
    returned = returned_values(fn) or []
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    names = {v.id for v, _ in returned if isinstance(v, ast.Name)}
    if not returned or len(names) != 1 or not all(isinstance(v, ast.Name) for v, _ in returned):
        return None
    name = names.pop()
    if name not in params:
        return None
    passed = dict(zip(params, call.args))
    passed.update({k.arg: k.value for k in call.keywords if k.arg})
    return passed.get(name)


def _class_mode_dependent(klass, ctx, seen) -> bool | None:
    """A module class of this file: any layer it builds is mode-dependent, or it reads ``self.training``;
    False only where everything it builds is known."""
    verdicts = [_bases_dependent(klass, ctx, seen)]
    for n in walk(klass):
        if isinstance(n, ast.Attribute) and n.attr == "training" and getattr(n.value, "id", None) == "self":
            return True
        if not isinstance(n, ast.Call):
            continue
        q = ctx.qualified(n.func) or ""
        if q.startswith("torch.nn.functional.") and "dropout" in q.rsplit(".", 1)[-1]:
            return True
        layer = q.startswith("torch.nn.") and q.count(".") == 2 and q.rsplit(".", 1)[-1][:1].isupper()
        local = isinstance(n.func, ast.Name) and n.func.id in ctx.bindings.classes()
        if layer or local or q.startswith(("torchvision.models.", "timm.")):
            verdicts.append(_mode_dependent(n, ctx, seen))
    if any(v is True for v in verdicts):
        return True
    return None if any(v is None for v in verdicts) or _handed_in(klass, ctx) else False


def _bases_dependent(klass, ctx, seen) -> bool | None:
    found = False
    for base in klass.bases:
        parent = ctx.bindings.classes().get(getattr(base, "id", None))
        if isinstance(base, ast.Name) and parent is not None:
            inner = _class_mode_dependent(parent, ctx, (*seen, parent)) if parent not in seen else None
            if inner:
                return True
            found = found if inner is not None else None
        elif not (ctx.qualified(base) or "").startswith(("torch.nn.", "pytorch_lightning.", "lightning.")):
            found = None
    return found


_PLAIN_VALUES = frozenset("list dict tuple set int float len range".split())


def _handed_in(klass, ctx) -> bool:
    """A layer the class calls comes from outside what the file shows: a ``self.`` attribute set from an
    unknown call, or from a parameter the class calls (``self.encoder = encoder``)."""
    called = {
        n.func.attr
        for n in walk(klass)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and getattr(n.func.value, "id", None) == "self"
    }
    for attr, values in ctx.bindings.self_attributes(klass).items():
        for _, value, _ in values:
            if isinstance(value, ast.Call):
                if (
                    ctx.qualified(value.func) is None
                    and not (isinstance(value.func, ast.Name) and value.func.id in ctx.bindings.classes())
                    and _passed_through(value, ctx) is None
                    and not _method(value, *MODULE_SELF_METHODS)
                    and getattr(value.func, "id", None) not in _PLAIN_VALUES
                ):
                    return True
            elif isinstance(value, (ast.Name, ast.Attribute)) and attr in called:
                return True
    return False


# --- the check --------------------------------------------------------------------------------------
def _eval_may_reach(model, ctx) -> bool:
    """Some mode switch in the file may reach this model: unless the model is a bare name that no switch
    names, never handed to a call, aliased or stored, while every switch names another bare name (a
    notebook's ``model.eval()`` beside a second model, ``scorer``, built and run without one)."""
    if not isinstance(model, ast.Name):
        return True
    for n in walk(ctx.module):
        if isinstance(n, ast.Call):
            # a switch on another bare name does not reach it; one on ``self`` (a class of the file putting
            # itself in eval mode, ``self.eval().requires_grad_(False)`` in __init__) may
            if _sets_mode(n) and (not isinstance(n.func.value, ast.Name) or n.func.value.id in (model.id, "self")):
                return True
            handed = [*n.args, *(k.value for k in n.keywords)]
            if any(isinstance(a, (ast.Name, ast.Starred)) and getattr(a, "id", None) == model.id for a in handed):
                return True
        elif isinstance(n, (ast.Assign, ast.AnnAssign)) and getattr(n.value, "id", None) == model.id:
            return True  # aliased or stored: the other name may be switched
        elif isinstance(n, (ast.Assign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(t, ast.Attribute) and t.attr == "training" for t in targets):
                return True
        elif isinstance(n, ast.Name) and n.id == "setattr":
            return True
    return False


def _evaluated_in_train_mode(node, ctx):
    """A model's forward, under no_grad/inference_mode, outside a training step, whose output is used,
    of a module holding Dropout/BatchNorm, in a file that puts nothing in eval mode; the first such
    call of that model in its function."""
    if not (isinstance(node, ast.Call) and _bound_name(node.func) and ctx.function is not None):
        return False
    block = _grad_off_with(node, ctx)
    if block is None or _module_method(ctx) or _forward_like(ctx):
        return False
    held = ctx.held(node.func)
    if held is None or held.kind != "module":
        return False
    if _unused(node, ctx):  # output unused: a BatchNorm recalibration pass
        return False
    if (
        (_file_sets_eval(ctx) and _eval_may_reach(node.func, ctx))
        or _training_step(block, ctx)
        or _sampled(node, block, ctx)
    ):
        return False
    if not _first_call(node, block, ctx):
        return False
    if in_test_code(ctx.path):
        return UNSURE  # a test runs models in train mode on purpose (two of them on one seed, compared): --preview
    found = constructions(node.func, ctx.chain(), node.lineno, ctx.klass, ctx, through=_WRAPPERS)
    builders = [call for call, _ in found] if found else None
    if not builders:  # built where the code shows only what it holds (an element of a list a caller passes)
        return True if _library_model(held.what) and _file_trains(ctx) else UNSURE
    verdicts = [_mode_dependent(b, ctx) for b in builders]
    if any(v is True for v in verdicts):
        return True
    return UNSURE if any(v is None for v in verdicts) else False


def _unused(node, ctx) -> bool:
    parent = ctx.parent(node)
    if isinstance(parent, ast.Expr):
        return True
    return (
        isinstance(parent, ast.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
        and parent.targets[0].id == "_"
    )


def _forward_like(ctx) -> bool:
    """A method of a class with a ``forward`` (a module whose base another library defines): the model's
    own computation, run in whatever mode its caller chose."""
    klass = ctx.klass
    return klass is not None and any(
        isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name in ("forward", "__call__") for m in klass.body
    )


def _first_call(node, block, ctx) -> bool:
    """The first call of this model in the grad-off code (one finding per evaluation, not per call)."""
    target = ast.dump(node.func)
    calls = [
        n
        for n in walk(block)
        if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute)) and ast.dump(n.func) == target
    ]
    return min(calls, key=lambda n: (n.lineno, n.col_offset)) is node


RULE = Rule(
    "PTF236",
    ("train-eval-mode",),
    "this evaluation runs a model that holds Dropout/BatchNorm under no_grad() without ever putting it in "
    "eval mode (nothing in the file calls .eval() on it): no_grad() does not change the mode, so Dropout still drops and "
    "BatchNorm uses each batch's statistics; call model.eval() before evaluating and model.train() after",
    _evaluated_in_train_mode,
    nodes=CALL,
    needs=("no_grad", "inference_mode", "set_grad_enabled"),
)
