"""What: ``torch.save(model, path)`` on a whole module (or a dict holding one) instead of its state_dict.
Why: torch.save pickles the module: the file records where its class lives (``models.Net``, ``__main__.Net``),
not the class's code. Loading fails with AttributeError once the class is renamed or moved, or from any
script that does not define it at that address; since torch 2.6 ``torch.load`` refuses it unless
``weights_only=False``.
Fix: save ``model.state_dict()``; rebuild the model from code and ``load_state_dict`` the file.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import UNSURE, Rule

# the wrappers whose ``.module`` is the model they wrap
_WRAPPER_ATTRIBUTE = "module"
_IN_MEMORY = ("io.BytesIO", "tempfile.SpooledTemporaryFile", "tempfile.TemporaryFile")


def _module_self(name: str, ctx) -> bool:
    """``self`` (a method's first parameter) in a method of a module class of the file: ``torch.save(self, path)``."""
    chain = ctx.chain()
    fn = chain[0] if chain else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.args.args or fn.args.args[0].arg != name:
        return False
    klass = ctx.bindings._owner_class(fn)
    return klass is not None and ctx.bindings.is_module_class(klass)


def _instance_of_an_unseen_class(node, ctx) -> bool:
    """A name bound once to a call of a class this file imports from another (non-torch) module:
    ``from models import Net; model = Net()``. Its type is not known here: reported at --preview."""
    if not isinstance(node, ast.Name):
        return False
    value = ctx.bindings.value_of(node.id, ctx.chain(), node.lineno)
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
        return False
    name = value.func.id
    q = ctx.qualified(value.func)
    return name[:1].isupper() and q is not None and not q.startswith("torch") and "." in q


def _whole_module(node, ctx):
    """True where ``node`` holds a torch module (or is a dict literal with one among its values), UNSURE where
    it holds an instance of a class not seen here."""
    if isinstance(node, ast.Dict):  # {"model": model, "epoch": epoch}: only a module known to be one
        return any(v is not None and _whole_module(v, ctx) is True for v in node.values)
    if isinstance(node, ast.Name) and _module_self(node.id, ctx):
        return True
    if isinstance(node, ast.Attribute) and node.attr == _WRAPPER_ATTRIBUTE:  # DataParallel(model).module
        return ctx.kind(node.value) == "module"
    if ctx.kind(node) == "module":
        return True
    return UNSURE if _instance_of_an_unseen_class(node, ctx) else False


def _in_memory(node, ctx) -> bool:
    """A file object in memory (``io.BytesIO()``, a spooled or unnamed temporary file), made here or bound to a
    name: a deep copy the same process loads back, where the class is where it was."""
    if isinstance(node, ast.Name):
        node = ctx.bindings.value_of(node.id, ctx.chain(), node.lineno)
    return isinstance(node, ast.Call) and ctx.qualified(node.func) in _IN_MEMORY


def _saves_a_whole_module(node, ctx):
    if not (isinstance(node, ast.Call) and node.args and ctx.qualified(node.func) == "torch.save"):
        return False
    if len(node.args) > 1 and _in_memory(node.args[1], ctx):
        return False
    return _whole_module(node.args[0], ctx)


RULE = Rule(
    id="PTF280",
    cases=("save-whole-model-pickles-class",),
    message=(
        "torch.save() of a whole module pickles a reference to its class, not its code: the file stops "
        "loading once the class is renamed or moved, or in a script that does not define it (and torch>=2.6 "
        "refuses it unless weights_only=False); save model.state_dict() and rebuild the model to load it"
    ),
    test=_saves_a_whole_module,
    nodes=ast.Call,
    needs=("save",),
    calls=("save",),
    case_at_preview=(
        "by default it reports torch.save of a model only where the file shows that it is a module, and this "
        "case's training script builds it from a class it imports from another file"
    ),
)
