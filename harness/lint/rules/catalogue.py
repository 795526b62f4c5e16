"""The catalogue's cases that show in code: rules PTF201 on, each proven by its case.

Each rule below is one unit: what it matches and why (its docstring), its matcher, and its ``Rule``
record right after them. Like the other rules, each fires only on what is known to be torch's: a
qualified torch name, or a receiver the bindings (bindings.py) prove holds a torch object.

What they share sits first: the values a function's parameter gets from the module's own call sites
(``train(model, rewrap=True)``), so a branch that no call of the module takes (``if rewrap:`` where
every call passes False) is not read as running; and the module's own calls of a class
(``Tower(list, device)``) for ``__init__``'s parameters.
"""

from __future__ import annotations

import ast
import math
from fractions import Fraction

from torch_pitfalls.lint.rules.base import CALL, Rule, _called_name, _const, _is_call_to, _kw, _method
from torch_pitfalls.lint.rules.source_posts import (
    _STATELESS,
    _arg,
    _exclusive,
    _loss_call,
    _module_method,
    _optimizer_step,
    _own_code,
    _probabilities,
)


# --- what the rules share: a parameter's values, and the branches no call takes -----------------
def _class_call_args(fn, param: str, bindings) -> list | None:
    """``__init__``'s parameter: what each ``Class(...)`` call of the module passes for it."""
    klass = next(
        (c for c in bindings.classes().values() if fn in c.body and fn.name == "__init__"),
        None,
    )
    if klass is None:
        return None
    a = fn.args
    positional = [x.arg for x in (*a.posonlyargs, *a.args)][1:]  # not self
    defaults = dict(zip(positional[len(positional) - len(a.defaults) :], a.defaults))
    out = []
    for call, chain, _ in bindings.call_sites(klass.name):
        if any(isinstance(x, ast.Starred) for x in call.args) or any(k.arg is None for k in call.keywords):
            return None
        given = dict(zip(positional, call.args))
        given.update({k.arg: k.value for k in call.keywords})
        value = given.get(param, defaults.get(param))
        if value is None:
            return None
        out.append((value, chain, call.lineno))
    return out or None


def _site_args(fn, param: str, bindings) -> list | None:
    """(expression, caller's scopes, line) for what each call of the module passes for ``param``."""
    sites = bindings.passed(fn, param)
    if sites is not None:
        return [(value, chain, line) for value, chain, line, _ in sites]
    if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
        return _class_call_args(fn, param, bindings)
    return None


def _bound_once(name: str, scope, bindings) -> bool:
    """``name`` is bound exactly once in its scope and declared ``global`` nowhere: its one binding is
    what it holds everywhere (a flag set in one branch and reset in another is not)."""
    if len(bindings.scope(scope).names.get(name, ())) != 1:
        return False
    declared = bindings.__dict__.get("_declared_global")
    if declared is None:  # once per module
        declared = bindings.__dict__["_declared_global"] = {
            n for g in ast.walk(bindings.tree) if isinstance(g, ast.Global) for n in g.names
        }
    return name not in declared


def _values(name: str, chain, line: int, bindings, depth: int = 0) -> list | None:
    """Every expression ``name`` may hold at ``line``: what it was assigned, or for a parameter what
    each call site of the module passes (followed through the callers' own parameters); a name bound
    nowhere (a builtin: ``list``) stands for itself. Only a name bound once in its scope (a parameter
    never reassigned, a constant). None where that cannot be told."""
    if depth > 6:
        return None
    binding, where = bindings.lookup(name, chain, line)
    if binding is None:
        return [ast.Name(id=name, ctx=ast.Load())]
    if not _bound_once(name, where[0], bindings):
        return None
    if binding.how == "assign":
        value = binding.value
        if isinstance(value, ast.Name):
            return _values(value.id, where, binding.line, bindings, depth + 1)
        return [value]
    if binding.how != "param":
        return None
    sites = _site_args(where[0], name, bindings)
    if not sites:
        return None
    out = []
    for value, caller, at in sites:
        inner = _values(value.id, caller, at, bindings, depth + 1) if isinstance(value, ast.Name) else [value]
        if inner is None:
            return None
        out.extend(inner)
    return out


def _scopes_of(node, ctx) -> tuple:
    """The scopes ``node`` looks names up in, innermost first (its functions, then the module)."""
    found, up = [], ctx.parent(node)
    while up is not None:
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            found.append(up)
        up = ctx.parent(up)
    return (*found, ctx.module)


def _truth(test, ctx, line: int) -> bool | None:
    """The value of an ``if`` test that the module decides: a literal, ``not`` one, or a name bound once
    to a literal (a module constant, a parameter to which every call of the module passes the same
    literal). None: it may go either way."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth(test.operand, ctx, line)
        return None if inner is None else not inner
    if isinstance(test, ast.Name) and ctx.module is not None:
        values = _values(test.id, _scopes_of(test, ctx), line, ctx.bindings)
        if values and all(isinstance(v, ast.Constant) for v in values):
            found = {bool(v.value) for v in values}
            return found.pop() if len(found) == 1 else None
    return None


def _dead(node, ctx) -> bool:
    """``node`` sits in a branch that no call of the module takes (``if rewrap:`` where every call
    passes ``rewrap=False``; the ``else`` of one every call makes true), or in a function defined there."""
    child, up = node, ctx.parent(node)
    while up is not None:
        if isinstance(up, (ast.If, ast.IfExp)) and child is not up.test:
            body = up.body if isinstance(up.body, list) else [up.body]
            truth = _truth(up.test, ctx, up.lineno)
            if truth is not None and (child in body) != truth:
                return True
        child, up = up, ctx.parent(up)
    return False


def _chosen(expr, ctx, line: int):
    """``a if flag else b`` where the module decides ``flag``: the branch taken; else the expression."""
    while isinstance(expr, ast.IfExp):
        truth = _truth(expr.test, ctx, line)
        if truth is None:
            return expr
        expr = expr.body if truth else expr.orelse
    return expr


def _assigned(expr, ctx, line: int):
    """What a bare name was last assigned above ``line`` (the branch its module takes, for an
    ``a if flag else b``), or the expression itself."""
    value = ctx.value_of(expr, line) if isinstance(expr, ast.Name) else None
    return _chosen(value, ctx, line) if value is not None else expr


def _own_calls(ctx, *methods: str):
    """The calls of these methods in the current function's own code (not in functions nested in it)
    that run."""
    if ctx.function is None:
        return []
    return [n for n in ast.walk(ctx.function) if _method(n, *methods) and _own_code(n, ctx) and not _dead(n, ctx)]


def _before(a, b) -> bool:
    return (a.lineno, a.col_offset) < (b.lineno, b.col_offset)


# --- PTF201 requires-grad-typo ------------------------------------------------------------------
_TYPOS = ("require_grad", "requires_grads", "require_grads")
_PARAMETER_ITERATORS = ("parameters", "buffers")
_NAMED_ITERATORS = ("named_parameters", "named_buffers")


def _iterates_parameters(name: ast.Name, ctx) -> bool:
    """``p`` is the loop variable of ``for p in m.parameters()`` (or ``for n, p in m.named_parameters()``,
    through ``enumerate``/``list``/``filter``/``itertools.chain``): a module's tensors."""
    binding, _ = ctx.bindings.lookup(name.id, ctx.chain(), name.lineno)
    if binding is None or binding.how != "iter" or not isinstance(binding.value, ast.Call):
        return False
    loop = next(
        (
            n
            for n in ast.walk(ctx.function)
            if isinstance(n, (ast.For, ast.AsyncFor)) and n.lineno == binding.line and _binds(n.target, name.id)
        ),
        None,
    )
    if loop is None:
        return False
    target = loop.target
    if isinstance(loop.iter, ast.Call) and getattr(loop.iter.func, "id", None) == "enumerate":
        target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else target
    calls = [binding.value]
    while calls and _called_name(calls[-1]) in ("list", "filter", "chain", "tuple", "sorted"):
        calls = [a for a in calls[-1].args if isinstance(a, ast.Call)]
    for call in calls:
        if _method(call, *_PARAMETER_ITERATORS) and isinstance(target, ast.Name):
            return True
        if _method(call, *_NAMED_ITERATORS) and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            return getattr(target.elts[1], "id", None) == name.id
    return False


def _binds(target, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target))


def _torch_object(node, ctx) -> bool:
    """A tensor or module as the bindings prove it, a module's ``.weight``/``.bias``, or a loop variable
    over a module's parameters."""
    if ctx.kind(node) in ("tensor", "module"):
        return True
    if isinstance(node, ast.Attribute) and node.attr in ("weight", "bias", "data"):
        return ctx.kind(node.value) in ("module", "tensor")
    return isinstance(node, ast.Name) and _iterates_parameters(node, ctx)


def _requires_grad_typo(node, ctx) -> bool:
    """``p.require_grad = False`` (or ``requires_grads``/``require_grads``) on a tensor, a parameter or a
    module: Python stores a new attribute that autograd never reads, so nothing is frozen (or unfrozen).
    Not ``self.require_grad`` (a class's own flag), and not in a file that reads the attribute back
    (its own attribute, then). The fix: ``requires_grad``, or the method ``requires_grad_(False)``."""
    targets = [t for t in node.targets if isinstance(t, ast.Attribute) and t.attr in _TYPOS]
    if not targets or ctx.function is None:
        return False
    receiver = targets[0].value
    if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
        return False
    if any(
        isinstance(n, ast.Attribute) and n.attr in _TYPOS and isinstance(n.ctx, ast.Load) for n in ast.walk(ctx.module)
    ):
        return False
    return _torch_object(receiver, ctx)


PTF201 = Rule(
    "PTF201",
    ("requires-grad-typo",),
    "require_grad (no s) is not an attribute autograd reads: assigning it creates a new attribute and "
    "freezes nothing; write requires_grad, or call requires_grad_(False) (a misspelled method raises)",
    _requires_grad_typo,
    nodes=ast.Assign,
)


# --- PTF202 sigmoid-before-bce-with-logits -------------------------------------------------------
_SIGMOIDS = ("torch.sigmoid", "torch.nn.functional.sigmoid", "torch.special.expit", "torch.Tensor.sigmoid")
_KEEPS_VALUES = ("squeeze", "unsqueeze", "view", "reshape", "flatten", "float", "double", "to", "contiguous", "view_as")


def _sigmoid_call(call: ast.Call, ctx) -> bool:
    """``torch.sigmoid(x)``, ``F.sigmoid(x)``, ``x.sigmoid()``, ``nn.Sigmoid()(x)``, or a ``self.`` module
    bound to nn.Sigmoid."""
    func = call.func
    if ctx.qualified(func) in _SIGMOIDS:
        return True
    if isinstance(func, ast.Call):
        return ctx.qualified(func.func) == "torch.nn.Sigmoid"
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "sigmoid"
        and ctx.qualified(func) is None
        and not (isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"))
    ):
        return True  # x.sigmoid(), the tensor method (not a method of the class itself)
    held = ctx.held(func)
    return held is not None and held.kind == "module" and held.what == "torch.nn.Sigmoid"


def _ctor_ends_in_sigmoid(ctor, ctx, line: int, depth: int) -> bool:
    """A module built as nn.Sigmoid(), or an nn.Sequential whose last layer is one."""
    if not isinstance(ctor, ast.Call):
        return False
    q = ctx.qualified(ctor.func)
    if q == "torch.nn.Sigmoid":
        return True
    if q == "torch.nn.Sequential" and ctor.args and depth < 4:
        last = _assigned(ctor.args[-1], ctx, line)
        return _ctor_ends_in_sigmoid(last, ctx, line, depth + 1)
    return False


def _sigmoid_output(expr, ctx, line: int, depth: int = 0) -> bool:
    """The expression holds a sigmoid's output: directly, through names, shape-only methods
    (``.squeeze()``, ``.view()``), an index, or a model built to end in a sigmoid (``nn.Sequential(...,
    nn.Sigmoid())``, a class whose forward returns one, the branch of ``a if flag else b`` taken)."""
    if expr is None or depth > 8:
        return False
    d = depth + 1
    if isinstance(expr, ast.Name):
        value = ctx.value_of(expr, line)
        if value is not None:
            return _sigmoid_output(_chosen(value, ctx, line), ctx, line, d)
        held = ctx.held(expr, line)
        return held is not None and held.kind == "tensor" and held.what == "sigmoid"
    if isinstance(expr, ast.Subscript):
        return _sigmoid_output(expr.value, ctx, line, d)
    if not isinstance(expr, ast.Call):
        return False
    if _sigmoid_call(expr, ctx):
        return True
    if _method(expr, *_KEEPS_VALUES):
        return _sigmoid_output(expr.func.value, ctx, line, d)
    held = ctx.held(expr, line)
    if held is not None and held.kind == "tensor" and held.what == "sigmoid":
        return True  # a model whose output the bindings know ends in a sigmoid
    callee = _assigned(expr.func, ctx, line)
    return _ctor_ends_in_sigmoid(callee, ctx, line, 0)


def _sigmoid_into_bce_with_logits(node, ctx) -> bool:
    """BCEWithLogitsLoss / binary_cross_entropy_with_logits given a sigmoid's output as its input
    (``loss_fn(torch.sigmoid(z), y)``, a model ending in nn.Sigmoid): the loss applies its own sigmoid,
    so it sees values in [0.5, 0.73] and cannot fall below about 0.31 (positives) and 0.69
    (negatives). A sigmoid of the *target* (soft labels) is not this. The fix: pass the logits (or
    keep the sigmoid and use BCELoss)."""
    if not _loss_call(node, ctx, "binary_cross_entropy_with_logits", "torch.nn.BCEWithLogitsLoss"):
        return False
    return _sigmoid_output(_arg(node, 0, "input"), ctx, node.lineno) and not _dead(node, ctx)


PTF202 = Rule(
    "PTF202",
    ("sigmoid-before-bce-with-logits",),
    "BCEWithLogitsLoss applies a sigmoid itself: given sigmoid outputs it squashes them twice (inputs in "
    "[0.5, 0.73]) and the loss cannot go below ~0.31; pass the raw logits (or use BCELoss on probabilities)",
    _sigmoid_into_bce_with_logits,
    nodes=CALL,
)


# --- PTF203 nll-loss-without-log-softmax -----------------------------------------------------------
def _used_as_loss(call, ctx) -> bool:
    """The loss values are reduced or differentiated: the call (or the name it is bound to) is
    ``.backward()``-ed, ``.mean()``-ed or ``.sum()``-ed."""
    parent = ctx.parent(call)
    if isinstance(parent, ast.Attribute) and parent.attr in ("backward", "mean", "sum"):
        return True
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    return any(
        _method(n, "backward", "mean", "sum") and getattr(n.func.value, "id", None) == name
        for n in ast.walk(ctx.function)
    )


def _nll_on_softmax(node, ctx) -> bool:
    """nll_loss / NLLLoss given softmax probabilities (``F.nll_loss(F.softmax(x, 1), y)``, an
    ``nn.Softmax`` output layer): NLLLoss takes no logarithm, it returns ``-input[target]``, so the loss
    is minus the probability, between -1 and 0, and its gradient is nearly zero where the model is
    confidently wrong. ``reduction='none'`` whose values are never reduced nor differentiated is the
    gather idiom (``1 - p`` as a focal weight) and stays quiet. The fix: log_softmax (or
    cross_entropy on the logits)."""
    if not _loss_call(node, ctx, "nll_loss", "torch.nn.NLLLoss", "torch.nn.NLLLoss2d"):
        return False
    if _probabilities(_arg(node, 0, "input"), ctx) != "softmax" or _dead(node, ctx):
        return False
    if _const(_kw(node, "reduction"), "none"):
        return _used_as_loss(node, ctx)
    return True


PTF203 = Rule(
    "PTF203",
    ("nll-loss-without-log-softmax",),
    "NLLLoss/nll_loss takes no logarithm: given softmax probabilities it returns minus the probability "
    "(a negative loss, vanishing gradients); feed it log_softmax, or use cross_entropy on the logits",
    _nll_on_softmax,
    nodes=CALL,
)


# --- PTF204 bool-of-multielement-tensor (a loss class called with the tensors) -----------------------
_LOSSES = frozenset(
    """L1Loss MSELoss CrossEntropyLoss CTCLoss NLLLoss NLLLoss2d PoissonNLLLoss GaussianNLLLoss KLDivLoss BCELoss
BCEWithLogitsLoss MarginRankingLoss HingeEmbeddingLoss MultiLabelMarginLoss HuberLoss SmoothL1Loss SoftMarginLoss
MultiLabelSoftMarginLoss CosineEmbeddingLoss MultiMarginLoss TripletMarginLoss""".split()
)
_WEIGHT_FIRST = frozenset(
    "CrossEntropyLoss NLLLoss NLLLoss2d BCELoss BCEWithLogitsLoss MultiLabelSoftMarginLoss".split()
)
_VALUE_USES = ("backward", "item", "mean", "sum", "detach")


def _takes_tensor_at(loss: str, index: int) -> bool:
    """The constructor's positional parameter ``index`` may be a tensor: the class weights first, or
    MultiMarginLoss's third (``p, margin, weight``)."""
    return (loss in _WEIGHT_FIRST and index == 0) or (loss == "MultiMarginLoss" and index == 2)


def _model_output(expr, ctx) -> bool:
    """A model's output, directly or through one name: a call of what the bindings prove is a module,
    or ``self(x)``/``self.forward(x)`` in a method of a module class (a LightningModule's
    training_step). Never a loss's class weights."""
    value = _assigned(expr, ctx, getattr(expr, "lineno", 1 << 30))
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    if ctx.kind(f) == "module":
        return True
    if ctx.klass is None or not ctx.bindings.is_module_class(ctx.klass):
        return False
    return getattr(f, "id", None) == "self" or (isinstance(f, ast.Attribute) and getattr(f.value, "id", None) == "self")


def _used_as_value(call, ctx) -> bool:
    """What the constructor built is then used as a loss value: ``.backward()``/``.item()`` on it, or on
    the name it is bound to, or arithmetic with it."""
    parent = ctx.parent(call)
    if isinstance(parent, ast.Attribute) and parent.attr in _VALUE_USES:
        return True
    if isinstance(parent, ast.BinOp):
        return True
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    for n in ast.walk(ctx.function):
        if _method(n, *_VALUE_USES) and getattr(n.func.value, "id", None) == name:
            return True
        if isinstance(n, ast.BinOp) and any(getattr(s, "id", None) == name for s in (n.left, n.right)):
            return True
    return False


def _loss_class_given_tensors(node, ctx) -> bool:
    """``nn.CrossEntropyLoss(outputs, labels)``: the loss class called as if it were the loss. The
    tensors land in the constructor's options (``size_average``, ``reduce``), whose truth value is
    taken: "Boolean value of Tensor with more than one value is ambiguous" (or, with one-element
    tensors, a module where a loss was expected). Flagged where a positional argument the constructor
    never takes as a tensor is proven one, or the built object is then used as a value
    (``.backward()``, ``.item()``, arithmetic). The fix: build the loss, then call it:
    ``nn.CrossEntropyLoss()(outputs, labels)`` (or ``F.cross_entropy``)."""
    if not isinstance(node, ast.Call) or len(node.args) < 2 or any(isinstance(a, ast.Starred) for a in node.args):
        return False
    q = ctx.qualified(node.func) or ""
    loss = q.rsplit(".", 1)[-1]
    if not (q.startswith("torch.nn.") and loss in _LOSSES):
        return False
    for i, arg in enumerate(node.args):
        if _model_output(arg, ctx) or (not _takes_tensor_at(loss, i) and ctx.kind(arg) == "tensor"):
            return True
    if any(isinstance(a, ast.Constant) for a in node.args):
        return False  # nn.NLLLoss(weight, True): the old positional size_average
    return ctx.function is not None and _used_as_value(node, ctx)


PTF204 = Rule(
    "PTF204",
    ("bool-of-multielement-tensor",),
    "a loss class called with the tensors builds a module: the tensors become its options (size_average, "
    "reduce) and their truth value is ambiguous; build the loss first, then call it: "
    "nn.CrossEntropyLoss()(outputs, labels) or F.cross_entropy(outputs, labels)",
    _loss_class_given_tensors,
    nodes=CALL,
)


# --- PTF205 loss-rewrapped-from-item ---------------------------------------------------------------
_TENSOR_FROM_DATA = ("torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.autograd.Variable")


def _detached_number(expr, ctx, line: int, depth: int = 0) -> bool:
    """A Python or NumPy number read out of a tensor: ``x.item()``, ``float(x)``, ``x.tolist()``,
    ``x.detach().cpu().numpy()``, or arithmetic on one (``1 - float(dice)``); directly or through names."""
    if depth > 4:
        return False
    if isinstance(expr, ast.Name):
        value = ctx.value_of(expr, line)
        return value is not None and _detached_number(value, ctx, line, depth + 1)
    if isinstance(expr, ast.UnaryOp):  # -total
        return _detached_number(expr.operand, ctx, line, depth + 1)
    if isinstance(expr, ast.BinOp):  # 1 - float(dice)
        return any(_detached_number(side, ctx, line, depth + 1) for side in (expr.left, expr.right))
    if _method(expr, "item", "tolist", "numpy"):
        return True
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "float"
        and len(expr.args) == 1
        and ctx.bindings.lookup("float", ctx.chain(), line)[0] is None
        and not isinstance(expr.args[0], ast.Constant)
    )


def _trained_on(call, ctx) -> bool:
    """The rewrapped tensor is differentiated (``.backward()`` on it, or on the name it is bound to) or
    named as a loss (``loss = torch.tensor(...)``)."""
    parent = ctx.parent(call)
    if isinstance(parent, ast.Attribute) and parent.attr == "backward":
        return True
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    if "loss" in name.lower():
        return True
    return any(_method(n, "backward") and getattr(n.func.value, "id", None) == name for n in ast.walk(ctx.function))


def _loss_rewrapped(node, ctx) -> bool:
    """``loss = torch.tensor(loss.item(), requires_grad=True)``: a new leaf holding the loss's number,
    with no graph behind it. ``backward()`` runs without error and reaches no parameter: every
    gradient stays None and the optimizer never moves. Flagged where the new tensor is
    differentiated or named as a loss. The fix: call ``backward()`` on the loss itself (find what
    detached it instead: an ``.item()``, ``.numpy()``, ``torch.no_grad()``)."""
    if not _is_call_to(node, ctx, *_TENSOR_FROM_DATA) or not node.args:
        return False
    if not _const(_kw(node, "requires_grad"), True):
        return False
    if not _detached_number(node.args[0], ctx, node.lineno):
        return False
    return ctx.function is not None and _trained_on(node, ctx) and not _dead(node, ctx)


PTF205 = Rule(
    "PTF205",
    ("loss-rewrapped-from-item",),
    "torch.tensor(loss.item(), requires_grad=True) is a new leaf with no graph: backward() reaches no "
    "parameter and nothing trains; call backward() on the loss itself (and remove what detached it)",
    _loss_rewrapped,
    nodes=CALL,
)


# --- PTF206 submodules-in-plain-list -------------------------------------------------------------
_REGISTERING = ("torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict")


_PARAMETERS = ("torch.nn.Parameter", "torch.nn.parameter.Parameter")


def _builds_module(expr, ctx) -> str | None:
    """The module class this expression builds (``torch.nn.Linear``, or a module class of this file),
    or None."""
    if not isinstance(expr, ast.Call):
        return None
    held = ctx.held(expr)
    if held is None or held.kind != "module":
        return None
    return held.what or ""


def _stateful(what: str, ctx, depth: int = 0) -> bool:
    """Modules of this class hold parameters or buffers: a torch.nn layer other than an activation or
    a pooling, or a class of this file that builds one (or registers one, or calls a module it was
    handed); a class this file does not define is taken to."""
    if what.startswith("torch."):
        return what.rsplit(".", 1)[-1] not in _STATELESS
    klass = ctx.bindings.classes().get(what)
    if klass is None or depth > 4:
        return True
    for base in klass.bases:
        if isinstance(base, ast.Name) and base.id in ctx.bindings.classes() and _stateful(base.id, ctx, depth + 1):
            return True
    attrs = ctx.bindings.self_attributes(klass)
    for n in ast.walk(klass):
        if not isinstance(n, ast.Call):
            continue
        if _method(n, "register_buffer", "register_parameter", "add_module", "register_module"):
            return True
        if ctx.qualified(n.func) in _PARAMETERS:
            return True
        built = _builds_module(n, ctx)
        if built and built != what and _stateful(built, ctx, depth + 1):
            return True
        f = n.func  # self.attention(x), where self.attention was handed in: it may hold weights
        if isinstance(f, ast.Attribute) and getattr(f.value, "id", None) == "self" and f.attr in attrs:
            if not any(isinstance(v, ast.Call) for _, v, _ in attrs[f.attr]):
                return True
    return False


def _modules_of(elts, ctx) -> bool:
    """Every element builds a module, and one of them has state (not only activations or pooling)."""
    built = [_builds_module(e, ctx) for e in elts]
    return bool(built) and all(built) and any(_stateful(b, ctx) for b in built)


def _plain_container(value, ctx, line: int) -> bool:
    """A list, tuple or dict of new modules: a display, a comprehension, or ``list(...)``/``tuple(...)``
    of a generator (the builtin, or a parameter every call of the module passes it as)."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return _modules_of(value.elts, ctx)
    if isinstance(value, ast.Dict):
        return None not in value.keys and _modules_of(value.values, ctx)
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        return _modules_of([value.elt], ctx)
    if isinstance(value, ast.DictComp):
        return _modules_of([value.value], ctx)
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and len(value.args) == 1
        and isinstance(value.args[0], (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp))
    ):
        kinds = _values(value.func.id, ctx.chain(), line, ctx.bindings)
        if kinds and all(isinstance(k, ast.Name) and k.id in ("list", "tuple") for k in kinds):
            return _plain_container(value.args[0], ctx, line)
    return False


def _appended_modules(owner: str, scope, ctx) -> bool:
    """``owner.append(nn.Linear(...))`` (or ``extend``/``+=`` of module lists) in ``scope``."""
    for n in ast.walk(scope):
        if _method(n, "append") and ast.unparse(n.func.value) == owner and n.args:
            if _modules_of([n.args[0]], ctx):
                return True
        if _method(n, "extend") and ast.unparse(n.func.value) == owner and n.args:
            if _plain_container(n.args[0], ctx, n.lineno):
                return True
        if isinstance(n, ast.AugAssign) and ast.unparse(n.target) == owner:
            if _plain_container(n.value, ctx, n.lineno):
                return True
    return False


def _registered_later(attr: str, ctx) -> bool:
    """The class hands ``self.<attr>`` to nn.ModuleList/Sequential/ModuleDict, reassigns it, or registers
    modules by hand (``add_module``, ``register_module``, ``setattr``): the modules are registered."""
    for n in ast.walk(ctx.klass):
        if isinstance(n, ast.Call):
            if _method(n, "add_module", "register_module") or getattr(n.func, "id", None) == "setattr":
                return True
            if ctx.qualified(n.func) in _REGISTERING and any(
                isinstance(s, ast.Attribute) and s.attr == attr for a in n.args for s in ast.walk(a)
            ):
                return True
    assigned = [
        n
        for n in ast.walk(ctx.klass)
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == attr for t in n.targets)
    ]
    return len(assigned) > 1


def _modules_in_plain_list(node, ctx) -> bool:
    """``self.blocks = [nn.Linear(4, 4) for _ in range(3)]`` in an nn.Module (a list, tuple or dict of
    new layers, a ``list(...)`` of a generator, or an empty list the class then appends layers to):
    nn.Module registers only attributes that are modules, so these layers are missing from
    ``parameters()`` (the optimizer never updates them), from ``state_dict()`` and from ``.to()``/
    ``.double()``/``.train()``. Not when the class registers them afterwards (``nn.ModuleList(self.x)``,
    ``add_module``). The fix: ``nn.ModuleList`` (``nn.ModuleDict`` for a dict)."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and _module_method(ctx)):
        return False
    target = node.targets[0]
    me = ctx.function.args.args[0].arg if ctx.function.args.args else None
    if not (isinstance(target, ast.Attribute) and getattr(target.value, "id", None) == me):
        return False
    value = _assigned(node.value, ctx, node.lineno)
    if isinstance(value, ast.List) and not value.elts:  # [] then .append(module) on it
        owner = node.value.id if isinstance(node.value, ast.Name) else ast.unparse(target)
        found = _appended_modules(owner, ctx.function, ctx) or _appended_modules(ast.unparse(target), ctx.klass, ctx)
    else:
        found = _plain_container(value, ctx, node.lineno)
    return found and not _registered_later(target.attr, ctx) and not _dead(node, ctx)


PTF206 = Rule(
    "PTF206",
    ("submodules-in-plain-list",),
    "layers kept in a plain list (or dict) on an nn.Module are not registered: they are missing from "
    "parameters() (never trained), state_dict() and .to()/.train(); wrap them in nn.ModuleList (nn.ModuleDict)",
    _modules_in_plain_list,
    nodes=ast.Assign,
)


# --- PTF207 distributed-sampler-without-set-epoch --------------------------------------------------
_DISTRIBUTED_SAMPLERS = ("torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler")
_LOADERS = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")
_CALLS_SET_EPOCH = ("pytorch_lightning", "lightning", "accelerate")  # frameworks that call set_epoch themselves


def _set_epoch_anywhere(ctx) -> bool:
    """The module calls ``.set_epoch(...)`` on anything, in a branch that runs, or names it at all
    (``hasattr(sampler, "set_epoch")``, ``getattr``)."""
    found = ctx.__dict__.setdefault("_set_epoch", {})
    if "any" not in found:
        found["any"] = any(
            (isinstance(n, ast.Attribute) and n.attr == "set_epoch" and not _dead(n, ctx))
            or (isinstance(n, ast.Constant) and n.value == "set_epoch")
            for n in ast.walk(ctx.module)
        )
    return found["any"]


def _bound_to(node, ctx) -> str | None:
    """The name a call is assigned to (also as a branch of ``x if cond else None``)."""
    up = ctx.parent(node)
    while isinstance(up, ast.IfExp):
        up = ctx.parent(up)
    if isinstance(up, ast.Assign) and len(up.targets) == 1 and isinstance(up.targets[0], ast.Name):
        return up.targets[0].id
    return None


def _loader_of(sampler, name: str | None, ctx):
    """The names of the DataLoaders of this function built with this sampler."""
    out = []
    for n in ast.walk(ctx.function):
        if not _is_call_to(n, ctx, *_LOADERS):
            continue
        given = _arg(n, 3, "sampler")
        if given is sampler or (name is not None and isinstance(given, ast.Name) and given.id == name):
            loader = _bound_to(n, ctx)
            if loader:
                out.append(loader)
    return out


def _used_each_epoch(loader: str, ctx) -> bool:
    """The loader is used inside a loop's body (iterated by an inner loop, or handed to a function that
    runs one epoch): more than one epoch draws from it."""
    return any(
        isinstance(n, (ast.For, ast.While))
        and any(isinstance(m, ast.Name) and m.id == loader for s in n.body for m in ast.walk(s))
        for n in ast.walk(ctx.function)
    )


def _sampler_without_set_epoch(node, ctx) -> bool:
    """A shuffling DistributedSampler whose DataLoader is iterated epoch after epoch in this function,
    in a module that never calls ``set_epoch``: the sampler seeds its permutation with
    ``seed + epoch``, and the epoch stays 0, so every epoch visits the data in the same order on every
    rank. Quiet where shuffling is off, where the module names set_epoch anywhere, and under Lightning
    or Accelerate (which call it). The fix: ``sampler.set_epoch(epoch)`` at the start of each epoch."""
    if not _is_call_to(node, ctx, *_DISTRIBUTED_SAMPLERS) or ctx.function is None:
        return False
    shuffle = _arg(node, 3, "shuffle")
    if shuffle is not None and _truth(shuffle, ctx, node.lineno) is not True:
        return False
    if any(v.split(".")[0] in _CALLS_SET_EPOCH for v in ctx.imports.values()) or _set_epoch_anywhere(ctx):
        return False
    loaders = _loader_of(node, _bound_to(node, ctx), ctx)
    return any(_used_each_epoch(loader, ctx) for loader in loaders) and not _dead(node, ctx)


PTF207 = Rule(
    "PTF207",
    ("distributed-sampler-without-set-epoch",),
    "DistributedSampler shuffles with seed + epoch, and the epoch stays 0 unless set_epoch(epoch) is called: "
    "every epoch sees the same order; call sampler.set_epoch(epoch) at the start of each epoch",
    _sampler_without_set_epoch,
    nodes=CALL,
)


# --- PTF208 clip-grad-after-step ---------------------------------------------------------------------
_CLIPS = (
    "torch.nn.utils.clip_grad_norm_",
    "torch.nn.utils.clip_grad_value_",
    "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.clip_grad.clip_grad_value_",
)


def _backward(call) -> bool:
    """``loss.backward()``, ``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``,
    ``torch.autograd.backward(...)``: gradients are made."""
    return _method(call, "backward")


def _infinite(expr) -> bool:
    """``float('inf')``, ``math.inf``, ``np.inf``: a clip that only measures the norm."""
    text = ast.unparse(expr) if expr is not None else ""
    return "inf" in text.lower()


def _clip_after_step(node, ctx) -> bool:
    """``clip_grad_norm_``/``clip_grad_value_`` after ``optimizer.step()`` (or ``scaler.step(opt)``) and
    before the next backward, with no other step after it that it could be meant for: the step has
    already used the unclipped gradients, and they are zeroed before they are used again, so the
    clipping never changes an update. A clip that only measures (``max_norm=inf``) stays quiet. The
    fix: backward, clip, step (with AMP, ``scaler.unscale_(opt)`` before the clip)."""
    if not _is_call_to(node, ctx, *_CLIPS) or ctx.function is None or _infinite(_arg(node, 1, "max_norm")):
        return False
    if not _own_code(node, ctx) or _dead(node, ctx):
        return False
    calls = sorted(_own_calls(ctx, "step", "backward"), key=lambda n: (n.lineno, n.col_offset))
    events = [
        (c, "step" if _optimizer_step(c, ctx) else "backward") for c in calls if _optimizer_step(c, ctx) or _backward(c)
    ]
    events = [(c, kind) for c, kind in events if not _exclusive(c, node, ctx.function)]
    before = [kind for c, kind in events if _before(c, node)]
    after = [kind for c, kind in events if _before(node, c)]
    return bool(before) and before[-1] == "step" and (not after or after[0] != "step")


PTF208 = Rule(
    "PTF208",
    ("clip-grad-after-step",),
    "clip_grad_norm_/clip_grad_value_ after optimizer.step() clips gradients the step has already used: "
    "no update is ever clipped; clip between backward() and step()",
    _clip_after_step,
    nodes=CALL,
)


# --- PTF209 init-after-load-state-dict -----------------------------------------------------------------
_INPLACE_INIT = ("normal_", "uniform_", "zero_", "fill_", "constant_", "xavier_uniform_", "kaiming_normal_")


def _initialises(fn, ctx) -> bool:
    """A function (or lambda) that writes initial values: nn.init.*, ``reset_parameters()``, or an
    in-place fill of a ``.weight``/``.bias``/``.data``."""
    for n in ast.walk(fn):
        if not isinstance(n, ast.Call):
            continue
        q = ctx.qualified(n.func) or ""
        if q.startswith("torch.nn.init.") or q.endswith(".trunc_normal_"):
            return True
        if _method(n, "reset_parameters"):
            return True
        if _method(n, *_INPLACE_INIT) and getattr(n.func.value, "attr", None) in ("weight", "bias", "data"):
            return True
    return False


def _init_function(expr, ctx, line: int):
    """The function ``m.apply(...)`` is handed, when this module defines it: a module-level or nested
    function, ``self.<method>`` of this class, a lambda, or ``functools.partial(fn, ...)``."""
    if isinstance(expr, ast.Lambda):
        return expr
    if isinstance(expr, ast.Call) and _called_name(expr) == "partial" and expr.args:
        return _init_function(expr.args[0], ctx, line)
    if isinstance(expr, ast.Name):
        binding, _ = ctx.bindings.lookup(expr.id, ctx.chain(), line)
        value = binding.value if binding is not None else None
        return value if isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if isinstance(expr, ast.Attribute) and getattr(expr.value, "id", None) == "self" and ctx.klass is not None:
        return next((m for m in ctx.klass.body if isinstance(m, ast.FunctionDef) and m.name == expr.attr), None)
    return None


def _reinitialised(call, ctx):
    """The module ``call`` re-initialises whole: ``m.apply(init_fn)`` (init_fn initialising),
    ``m.reset_parameters()``, ``nn.init.*_(m.weight)`` of the module itself, or ``nn.init.*_(p)`` over
    ``for p in m.parameters()``. None otherwise."""
    if _method(call, "apply") and len(call.args) == 1:
        fn = _init_function(call.args[0], ctx, call.lineno)
        return call.func.value if fn is not None and _initialises(fn, ctx) else None
    if _method(call, "reset_parameters") and not call.args:
        return call.func.value
    q = ctx.qualified(call.func) or ""
    if q.startswith("torch.nn.init.") and q.endswith("_") and call.args:
        tensor = call.args[0]
        if isinstance(tensor, ast.Attribute) and tensor.attr in ("weight", "bias"):
            return tensor.value
        if isinstance(tensor, ast.Name):
            binding, _ = ctx.bindings.lookup(tensor.id, ctx.chain(), call.lineno)
            source = binding.value if binding is not None and binding.how == "iter" else None
            if _method(source, "parameters", "named_parameters"):
                return source.func.value
    return None


def _in_handler_of(a, b, ctx) -> bool:
    """``a`` in a ``try`` body and ``b`` in one of its ``except`` handlers (or the reverse): the handler
    runs when the body failed."""
    for n in ast.walk(ctx.function):
        if isinstance(n, ast.Try):
            body = {id(x) for s in n.body for x in ast.walk(s)}
            handlers = {id(x) for h in n.handlers for x in ast.walk(h)}
            if (id(a) in body and id(b) in handlers) or (id(b) in body and id(a) in handlers):
                return True
    return False


def _rebound_between(root: str, a, b, ctx) -> bool:
    """The name ``root`` is assigned again between ``a`` and ``b`` (a new model)."""
    return any(
        isinstance(n, ast.Assign)
        and a.lineno < n.lineno <= b.lineno
        and any(isinstance(x, ast.Name) and x.id == root for t in n.targets for x in ast.walk(t))
        for n in ast.walk(ctx.function)
    )


def _init_after_load(node, ctx) -> bool:
    """In one function, ``m.load_state_dict(...)`` and then ``m.apply(init_weights)`` (an init function of
    this module), ``m.reset_parameters()`` or nn.init on the module's own weights: the
    initialisation overwrites what was just loaded, and the loaded keys still report a perfect match.
    Quiet where the two sit in different branches of an if (load or initialise), in a try and its
    except, or where the init touches only a part of the module (a new head, re-initialised on
    purpose). The fix: initialise first, load last."""
    if not isinstance(node, ast.Call) or ctx.function is None:
        return False
    module = _reinitialised(node, ctx)
    if module is None or not _own_code(node, ctx) or _dead(node, ctx):
        return False
    text = ast.unparse(module)
    root = next((n.id for n in ast.walk(module) if isinstance(n, ast.Name)), None)
    for load in _own_calls(ctx, "load_state_dict"):
        if not (ast.unparse(load.func.value) == text and _before(load, node)):
            continue
        if _exclusive(load, node, ctx.function) or _in_handler_of(load, node, ctx):
            continue
        if root is not None and _rebound_between(root, load, node, ctx):
            continue
        return True
    return False


PTF209 = Rule(
    "PTF209",
    ("init-after-load-state-dict",),
    "the module is initialised after load_state_dict: the init overwrites the loaded weights (and "
    "load_state_dict still reported every key matched); initialise first, load last",
    _init_after_load,
    nodes=CALL,
)


# --- PTF210 arange-float-step-includes-end --------------------------------------------------------------
def _number(expr, ctx, line: int, depth: int = 0):
    """(the value as written, exactly; the value as Python computes it) of a numeric literal, a name
    bound to one, or arithmetic of those; None otherwise."""
    if depth > 4 or expr is None:
        return None
    if isinstance(expr, ast.Constant) and type(expr.value) in (int, float):
        return Fraction(repr(expr.value)), expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        inner = _number(expr.operand, ctx, line, depth + 1)
        sign = -1 if isinstance(expr.op, ast.USub) else 1
        return None if inner is None else (sign * inner[0], sign * inner[1])
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        left, right = _number(expr.left, ctx, line, depth + 1), _number(expr.right, ctx, line, depth + 1)
        if left is None or right is None or (isinstance(expr.op, ast.Div) and right[0] == 0):
            return None
        op = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b}.get(
            type(expr.op), lambda a, b: a / b
        )
        return op(left[0], right[0]), op(left[1], right[1])
    if isinstance(expr, ast.Name):  # a constant bound once: START, END, STEP = 0.5, 0.8, 0.1
        values = _values(expr.id, _scopes_of(expr, ctx), line, ctx.bindings)
        return _number(values[0], ctx, line, depth + 1) if values and len(values) == 1 else None
    return None


_FLOAT_DTYPES = ("float", "float32", "float64", "double", "half", "float16", "bfloat16")


def _arange_length_off(node, ctx) -> bool:
    """``torch.arange(start, end, step)`` with literal bounds (or names bound to literals) where the
    length torch computes, ``ceil((end - start) / step)`` in double precision, differs from the
    length of the decimal range as written: ``arange(0.5, 0.8, 0.1)`` has 4 elements, the last one 0.8,
    the end the call meant to exclude. Worked out exactly, so a range that rounds the expected way
    stays quiet. The fix: an integer count, ``start + step * torch.arange(n)``, or ``torch.linspace``."""
    if not _is_call_to(node, ctx, "torch.arange") or len(node.args) > 3:
        return False
    dtype = _kw(node, "dtype")
    if dtype is not None and getattr(dtype, "attr", getattr(dtype, "id", None)) not in _FLOAT_DTYPES:
        return False
    given = [_arg(node, 0, "start"), _arg(node, 1, "end"), _arg(node, 2, "step")]
    if given[1] is None or given[2] is None or given[0] is None:
        return False
    numbers = [_number(g, ctx, node.lineno) for g in given]
    if any(n is None for n in numbers) or not any(isinstance(n[1], float) for n in numbers):
        return False
    (start, fstart), (end, fend), (step, fstep) = numbers
    if step == 0 or fstep == 0:
        return False
    exact = math.ceil((end - start) / step)
    computed = math.ceil((float(fend) - float(fstart)) / float(fstep))
    return exact != computed


PTF210 = Rule(
    "PTF210",
    ("arange-float-step-includes-end",),
    "with these float bounds arange's length, ceil((end - start) / step) in floating point, is not the "
    "decimal one: the range gets an extra element (the end itself) or loses one; use an integer count "
    "(start + step * torch.arange(n)) or torch.linspace",
    _arange_length_off,
    nodes=CALL,
)


CATALOGUE_RULES: tuple[Rule, ...] = (
    PTF201,
    PTF202,
    PTF203,
    PTF204,
    PTF205,
    PTF206,
    PTF207,
    PTF208,
    PTF209,
    PTF210,
)
