"""What: a loop over model.named_parameters() sets requires_grad from a test on the name ("fc" in name) that is
false for every parameter of the model's head (EfficientNet's head is "classifier"; its "fc1"/"fc2" are SE layers).
Why: The head stays frozen at its initial weights while whatever the substring matches trains: no error, a loss
that falls a little, a classifier that never learns.
Fix: freeze by module (model.features.requires_grad_(False)) and print the trainable names once."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import Rule, _method
from torch_pitfalls.lint.rules.shared.modules import constructions
from torch_pitfalls.lint.rules.shared.options import keyed_values, option_default
from torch_pitfalls.lint.walking import walk

# the attribute that holds the classification head of torchvision's model builders, by the start of the
# builder's name (resnet50 -> resnet); what a head replaced on that attribute keeps as its names' prefix
_TORCHVISION_HEADS = {
    "resnet": "fc",
    "resnext": "fc",
    "wide_resnet": "fc",
    "regnet": "fc",
    "googlenet": "fc",
    "inception": "fc",
    "shufflenet": "fc",
    "efficientnet": "classifier",
    "mobilenet": "classifier",
    "vgg": "classifier",
    "alexnet": "classifier",
    "densenet": "classifier",
    "convnext": "classifier",
    "mnasnet": "classifier",
    "squeezenet": "classifier",
    "maxvit": "classifier",
    "vit": "heads",
    "swin": "head",
}
_DEPTH = 8


def _head_names(attr: str) -> list[str]:
    """Names ``named_parameters()`` may give the head's parameters: a layer on ``attr`` itself, one of a
    Sequential there, or torchvision's ViT ``heads.head``."""
    names = [f"{attr}.weight", f"{attr}.bias", f"{attr}.head.weight", f"{attr}.head.bias"]
    return names + [f"{attr}.{i}.{w}" for i in range(10) for w in ("weight", "bias")]


# --- what the test on the name says -------------------------------------------------------------
def _strings(expr, ctx, chain, line, depth=0) -> list[str] | None:
    """The strings a list, tuple or string constant holds, through a name, an option's default, a config
    dict's key or what every call passes for a parameter; None where that cannot be told."""
    if depth > _DEPTH:
        return None
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [expr.value]
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        out = []
        for e in expr.elts:
            got = _strings(e, ctx, chain, line, depth + 1)
            if got is None:
                return None
            out += got
        return out
    default = option_default(expr, ctx, chain, line)
    if default is not None:
        return _strings(default, ctx, chain, line, depth + 1)
    keyed = keyed_values(expr, ctx, chain, line)  # cfg["train_modules"] of a config dict passed in
    if keyed is not None:
        found = [_strings(v, ctx, c, at, depth + 1) for v, c, at in keyed]
        return found[0] if all(f is not None and f == found[0] for f in found) else None
    if isinstance(expr, ast.Name):
        binding, where = ctx.bindings.lookup(expr.id, chain, line)
        if binding is None:
            return None
        if binding.how == "assign":
            return _strings(binding.value, ctx, where, binding.line, depth + 1)
        if binding.how == "param":
            sites = ctx.bindings.passed(where[0], expr.id)
            found = [_strings(v, ctx, c, at, depth + 1) for v, c, at, _ in sites or ()]
            if not found or any(f is None for f in found) or any(f != found[0] for f in found):
                return None
            return found[0]
    return None


def _truth(test, var: str, name: str, ctx, chain, line):  # noqa: C901 - one branch per kind of test
    """What ``test`` gives when the loop's name variable ``var`` holds ``name``: True, False, or None
    where it is not a test on the name this can read (a string, an option, a list of substrings)."""
    if isinstance(test, ast.BoolOp):
        values = [_truth(v, var, name, ctx, chain, line) for v in test.values]
        if any(v is None for v in values):
            return None
        return all(values) if isinstance(test.op, ast.And) else any(values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth(test.operand, var, name, ctx, chain, line)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, right = test.ops[0], test.comparators[0]
        if isinstance(op, (ast.In, ast.NotIn)) and getattr(right, "id", None) == var:
            words = _strings(test.left, ctx, chain, line)
            if words is None or len(words) != 1:
                return None
            return (words[0] in name) == isinstance(op, ast.In)
        return None
    if _method(test, "startswith", "endswith") and getattr(test.func.value, "id", None) == var and test.args:
        words = _strings(test.args[0], ctx, chain, line)
        if words is None:
            return None
        return any(name.startswith(w) if test.func.attr == "startswith" else name.endswith(w) for w in words)
    if (
        isinstance(test, ast.Call)
        and getattr(test.func, "id", None) in ("any", "all")
        and len(test.args) == 1
        and isinstance(test.args[0], ast.GeneratorExp)
        and len(test.args[0].generators) == 1
    ):
        gen = test.args[0].generators[0]
        words = _strings(gen.iter, ctx, chain, line)
        if words is None or gen.ifs or not isinstance(gen.target, ast.Name):
            return None
        each = [_truth(_bound(test.args[0].elt, gen.target.id, w), var, name, ctx, chain, line) for w in words]
        if any(e is None for e in each):
            return None
        return any(each) if test.func.id == "any" else all(each)
    return None


def _bound(expr, loop_var: str, word: str):
    """``expr`` with the comprehension's variable replaced by one of its strings."""

    class _Put(ast.NodeTransformer):
        def visit_Name(self, node):
            return ast.Constant(word) if node.id == loop_var else node

    return _Put().visit(ast.parse(ast.unparse(expr), mode="eval").body)


# --- what the loop keeps trainable --------------------------------------------------------------
def _sets_grad(stmt, param: str):
    """The value a statement gives ``param.requires_grad``: the expression, or None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        t = stmt.targets[0]
        if isinstance(t, ast.Attribute) and t.attr == "requires_grad" and getattr(t.value, "id", None) == param:
            return stmt.value
    if isinstance(stmt, ast.Expr) and _method(stmt.value, "requires_grad_") and stmt.value.args:
        if getattr(stmt.value.func.value, "id", None) == param:
            return stmt.value.args[0]
    return None


def _constant(expr):
    return expr.value if isinstance(expr, ast.Constant) and isinstance(expr.value, bool) else None


def _trainable(loop, param: str, setter):
    """How the loop decides: ``(test, keeps)``, where the parameter stays trainable exactly when ``test``
    is ``keeps`` (``p.requires_grad = test``; ``if test: p.requires_grad = False``; ``if test: continue``
    before it), or None for any other shape of loop."""
    body = loop.body
    for i, stmt in enumerate(body):
        value = _sets_grad(stmt, param)
        if value is not None and stmt is setter:
            if _constant(value) is None:
                return value, True
            skips = [s for s in body[:i] if isinstance(s, ast.If) and s.body and isinstance(s.body[0], ast.Continue)]
            return (skips[0].test, True) if len(skips) == 1 and _constant(value) is False else None
        if isinstance(stmt, ast.If) and any(s is setter for s in stmt.body) and len(stmt.body) == 1:
            flag = _constant(_sets_grad(setter, param))
            other = [_constant(_sets_grad(s, param)) for s in stmt.orelse]
            if flag is False and other in ([], [True]):
                return stmt.test, False
            if flag is True and other == [False]:
                return stmt.test, True
    return None


# --- which model the loop walks, and its head ---------------------------------------------------
def _head_of(built: ast.Call, ctx) -> str | None:
    """The attribute holding the head of the model a call builds: a torchvision builder's (by its
    family), or what the ``forward`` of a module class of this file returns last (``self.classifier(h)``)."""
    q = ctx.qualified(built.func) or ""
    if q.startswith("torchvision.models.") and q.count(".") == 2:
        builder = q.rsplit(".", 1)[1]
        families = sorted((f for f in _TORCHVISION_HEADS if builder.startswith(f)), key=len, reverse=True)
        return _TORCHVISION_HEADS[families[0]] if families else None
    cls = ctx.bindings.classes().get(getattr(built.func, "id", None) or "")
    if cls is None or not ctx.bindings.is_module_class(cls):
        return None
    forward = next((b for b in cls.body if isinstance(b, ast.FunctionDef) and b.name == "forward"), None)
    returns = returned_values(forward) if forward is not None else None
    heads = set()
    for value, _ in returns or ():
        func = value.func if isinstance(value, ast.Call) else None
        if not (isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self"):
            return None
        heads.add(func.attr)
    return heads.pop() if len(heads) == 1 else None


def _reshaped_after(model: str, fn, line: int) -> bool:
    """A module is set on the model (``model.fc = nn.Linear(...)``) after the freezing, in ``fn``: a new
    head, trainable whatever the filter said."""
    for n in walk(fn):
        if isinstance(n, ast.Assign) and n.lineno > line:
            for t in n.targets:
                while isinstance(t, ast.Subscript):
                    t = t.value
                if isinstance(t, ast.Attribute) and getattr(t.value, "id", None) == model:
                    return True
    return False


def _heads(receiver, ctx, loop) -> set[str] | None:
    """The head attribute of every model the loop may walk, None where any is unknown or a head is
    set after the freezing (in the loop's function, or in a caller after it passes the model on)."""
    sources = constructions(receiver, ctx.chain(), loop.lineno, ctx.klass, ctx)
    if not sources:
        return None
    if isinstance(receiver, ast.Name) and _reshaped_after(receiver.id, ctx.function, loop.lineno):
        return None
    binding, where = (
        ctx.bindings.lookup(receiver.id, ctx.chain(), loop.lineno) if isinstance(receiver, ast.Name) else (None, None)
    )
    if binding is not None and binding.how == "param":
        for value, c, at, _ in ctx.bindings.passed(where[0], receiver.id) or ():
            if isinstance(value, ast.Name) and _reshaped_after(value.id, c[0], at):
                return None
    heads = {_head_of(built, ctx) for built, _ in sources}
    return None if None in heads else heads


def _head_frozen(node, ctx) -> bool:
    stmt = node if isinstance(node, ast.Assign) else ctx.parent(node)
    if not isinstance(stmt, (ast.Assign, ast.Expr)) or (isinstance(stmt, ast.Expr) and stmt.value is not node):
        return False
    target = node.targets[0] if isinstance(node, ast.Assign) else node.func
    if getattr(target, "attr", None) not in ("requires_grad", "requires_grad_"):
        return False
    loop = ctx.parent(stmt)
    if isinstance(loop, ast.If):
        loop = ctx.parent(loop)
    if not (
        isinstance(loop, ast.For)
        and _method(loop.iter, "named_parameters")
        and not loop.iter.args
        and not loop.iter.keywords
        and isinstance(loop.target, ast.Tuple)
        and len(loop.target.elts) == 2
        and all(isinstance(e, ast.Name) for e in loop.target.elts)
    ):
        return False
    var, param = (e.id for e in loop.target.elts)
    decided = _trainable(loop, param, stmt)
    if decided is None:
        return False
    test, keeps = decided
    heads = _heads(loop.iter.func.value, ctx, loop)
    if not heads:
        return False
    for head in heads:
        for name in _head_names(head):
            said = _truth(test, var, name, ctx, ctx.chain(), loop.lineno)
            if said is None or said == keeps:
                return False  # unreadable, or this head parameter stays trainable
    return True


RULE = Rule(
    "PTF276",
    ("frozen-by-name-filter",),
    "this test on the parameter's name is false for every parameter of the model's head, so the head is "
    "frozen with the backbone and never trains (other layers whose names match train instead); freeze by "
    "module (model.features.requires_grad_(False)) and print the trainable names once",
    _head_frozen,
    nodes=(ast.Assign, ast.Call),
    needs=("named_parameters",),
)
