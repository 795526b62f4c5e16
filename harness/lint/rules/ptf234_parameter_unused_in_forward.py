"""What: an nn.Module builds a layer with parameters (or an nn.Parameter) as self.X, and nothing in the model reads self.X.
Why: Its parameters are in model.parameters(), the optimizer and the checkpoint, but never get a gradient: they never
train (weight decay alone moves them), and DistributedDataParallel stops with "parameters that were not used".
Fix: apply the layer in forward (or delete it; or freeze it on purpose with requires_grad_(False)).
Reported where the file trains the model; a layer of a model trained elsewhere only with --preview.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from pathlib import Path

from torch_pitfalls.lint.package import package_folder, package_texts
from torch_pitfalls.lint.rules.base import UNSURE, Rule
from torch_pitfalls.lint.rules.shared.modules import _STATELESS, built_here, file_calls, subclasses, with_holders
from torch_pitfalls.lint.testcode import in_test_code
from torch_pitfalls.lint.walking import kept_on, walk

# containers whose forward runs what they hold: an attribute of one is used by iterating it
_CONTAINER_BASES = ("Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict")
_CONTAINERS = ("torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict")
# reading a module's children generically (``for m in self.children()``), or its attributes by a name
# built at run time: any attribute may be used there
_GENERIC = frozenset(
    """children named_children modules named_modules named_parameters named_buffers _modules _parameters
__dict__ state_dict""".split()
)
# bases that read no attribute of their subclasses by name
_TORCH_BASES = (
    "torch.nn.Module",
    "torch.nn.modules.module.Module",
    "pytorch_lightning.LightningModule",
    "lightning.pytorch.LightningModule",
    "lightning.LightningModule",
)
_NO_PARAMETERS = frozenset(
    """Buffer Softmax2d Softmin LogSigmoid RReLU ChannelShuffle Fold Unfold PairwiseDistance CosineSimilarity
LPPool1d LPPool2d LPPool3d FractionalMaxPool2d FractionalMaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d
LocalResponseNorm CrossMapLRN2d UpsamplingNearest2d UpsamplingBilinear2d FeatureAlphaDropout""".split()
)
# what nn.Module itself gives a subclass's ``self``
_MODULE_MEMBERS = frozenset(
    """training forward parameters named_parameters buffers named_buffers children named_children modules
named_modules train eval to cuda cpu xpu float double half bfloat16 type apply zero_grad state_dict
load_state_dict register_buffer register_parameter add_module register_module get_submodule get_parameter
get_buffer register_forward_hook register_forward_pre_hook register_full_backward_hook register_backward_hook
register_full_backward_pre_hook requires_grad_ extra_repr share_memory to_empty compile _apply _get_name
_modules _parameters _buffers __class__ __dict__ _load_from_state_dict _save_to_state_dict __call__
_call_impl dump_patches _version set_extra_state get_extra_state""".split()
)
_DYNAMIC_CALLS = ("getattr", "vars", "locals", "setattr", "hasattr")
_DYNAMIC_METHODS = ("__getattr__", "__getattribute__", "__iter__", "__getitem__")


def _file_facts(tree) -> dict:
    """What the whole file reads: every attribute name loaded or deleted (``.X``), every string constant."""
    reads, strings = set(), set()
    for n in walk(tree):
        if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Store):
            reads.add(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            strings.add(n.value)
    return {"reads": reads, "strings": strings}


def _facts(ctx) -> dict:
    return kept_on(ctx.module, "_ptf234_facts", _file_facts)


def _ancestors(klass, ctx) -> list | None:
    """The in-file classes ``klass`` derives from (itself first), or None where a base is neither one
    of them nor torch's nn.Module (another library's class, a mixin: it may read the attribute)."""
    classes, out, todo = ctx.bindings.classes(), [], [klass]
    while todo:
        k = todo.pop()
        if k in out:
            continue
        out.append(k)
        for base in k.bases:
            q = ctx.qualified(base)
            if q in _TORCH_BASES:
                continue
            if isinstance(base, ast.Name) and base.id in classes and classes[base.id] is not k:
                todo.append(classes[base.id])
            else:
                return None
        if k.keywords:  # metaclass=...: not a plain module
            return None
    return out


def _defines(klass, name: str) -> bool:
    return any(
        isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
        and s.name == name
        or isinstance(s, ast.Assign)
        and any(getattr(t, "id", None) == name for t in s.targets)
        for s in klass.body
    )


def _generic_access(klass) -> bool:
    """The class reads its attributes in a way that may reach any of them: ``self.children()``,
    ``getattr(self, name)``, ``self.__dict__``, its own ``__getattr__`` / ``__iter__``, or every
    parameter outside ``__init__`` (``sum(p.pow(2).sum() for p in self.parameters())`` in forward)."""
    if any(_defines(klass, m) for m in _DYNAMIC_METHODS):
        return True
    for n in walk(klass):
        if isinstance(n, ast.Attribute) and n.attr in _GENERIC:
            return True
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) in _DYNAMIC_CALLS:
            return True
    for method in klass.body:
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.name != "__init__":
            if any(isinstance(n, ast.Attribute) and n.attr in ("parameters", "buffers") for n in walk(method)):
                return True
    return False


def _real_forward(klass) -> bool:
    """``forward`` defined with a body that computes (not one that only raises or passes: a holder of
    parameters read some other way)."""
    for s in klass.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "forward":
            body = [b for b in s.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
            return any(not isinstance(b, (ast.Raise, ast.Pass)) for b in body)
    return False


def _reads_unassigned(family, ctx) -> bool:
    """A method reads ``self.Y`` that nothing in the family assigns or defines (nor nn.Module): code
    elsewhere sets the model's attributes (``model.last_linear = model.fc; del model.fc``)."""
    known = set(_MODULE_MEMBERS)
    for k in family:
        known |= set(ctx.bindings.self_attributes(k))
        for s in k.body:
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                known.add(s.name)
            elif isinstance(s, (ast.Assign, ast.AnnAssign)):
                for t in s.targets if isinstance(s, ast.Assign) else [s.target]:
                    known.update(n.id for n in walk(t) if isinstance(n, ast.Name))
    for k in family:
        for n in walk(k):
            if (
                isinstance(n, ast.Attribute)
                and isinstance(n.ctx, ast.Load)
                and getattr(n.value, "id", None) == "self"
                and n.attr not in known
            ):
                return True
    return False


def _read_in_package(name: str, family, ctx) -> bool:
    """Another file of the package that imports this module and names one of the family's classes reads
    ``.name`` (``self.attention_layer.memory_layer(memory)`` in the model that builds the layer)."""
    if not ctx.path or not os.path.isfile(ctx.path):
        return False
    own = Path(ctx.path).resolve()
    if not package_folder(own)[1]:
        return False  # a file in no package: its folder's other files are not its importers
    return _package_reads(own, name, tuple(sorted(k.name for k in family)))


@functools.lru_cache(maxsize=256)
def _package_reads(own: Path, name: str, classes: tuple) -> bool:
    stem = own.stem
    imports = re.compile(rf"^\s*(from|import)\s+[\w.]*\b{re.escape(stem)}\b", re.M)
    read = re.compile(rf"\.{re.escape(name)}\b(?!\s*=(?!=))|[\"']{re.escape(name)}[\"']")
    return any(
        path != own and stem in text and any(c in text for c in classes) and imports.search(text) and read.search(text)
        for path, text in package_texts(own).items()
    )


def _has_parameters(value, ctx, depth: int = 0) -> bool:
    """A torch layer with parameters (not ReLU, Dropout, Identity, a pooling), an nn.Parameter that trains,
    a container holding one, or a module class of this file that builds one."""
    if depth > 4 or not isinstance(value, ast.Call):
        return False
    q = ctx.qualified(value.func) or ""
    last = q.rsplit(".", 1)[-1]
    if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
        grad = next((k.value for k in value.keywords if k.arg == "requires_grad"), None)
        if grad is None and len(value.args) > 1:
            grad = value.args[1]
        return grad is None or (isinstance(grad, ast.Constant) and grad.value is True)
    if q in _CONTAINERS:
        return any(_has_parameters(n, ctx, depth + 1) for n in walk(value) if n is not value)
    if q.startswith("torch.nn.") and last[:1].isupper() and q.count(".") == 2:
        return _layer_has_parameters(value, last)
    if isinstance(value.func, ast.Name):
        cls = ctx.bindings.classes().get(value.func.id)
        if cls is not None and ctx.bindings.is_module_class(cls):
            return _class_has_parameters(cls, ctx, depth + 1)
    return False


def _layer_has_parameters(call, last: str) -> bool:
    """A torch.nn layer that holds parameters as built: not an activation, a pooling, a padding, a
    dropout, a loss, nor a norm built without its affine weights (InstanceNorm's default)."""
    if last in _STATELESS or last in _NO_PARAMETERS or last.endswith(("Loss", "Pad1d", "Pad2d", "Pad3d")):
        return False
    for flag in ("affine", "elementwise_affine"):
        value = next((k.value for k in call.keywords if k.arg == flag), None)
        if isinstance(value, ast.Constant) and value.value is False:
            return False
        if value is None and flag == "affine" and last.startswith("InstanceNorm"):
            return False
    return True


def _class_has_parameters(cls, ctx, depth: int) -> bool:
    ancestors = _ancestors(cls, ctx)
    if ancestors is None:
        return False
    for k in ancestors:
        for _, value, _ in (v for vs in ctx.bindings.self_attributes(k).values() for v in vs):
            if _has_parameters(value, ctx, depth):
                return True
    return False


def _unused_layer(node, ctx) -> bool:
    """``self.X = <a layer with parameters>`` in a module's ``__init__``, where nothing in the file reads
    ``.X`` (nor names "X" in a string), no class of its family (its bases and subclasses in this file) reads
    its attributes generically, its bases are all of this file (or nn.Module), and the family has a forward."""
    fn, klass = ctx.function, ctx.klass
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Attribute)
        and isinstance(node.targets[0].value, ast.Name)
        and node.targets[0].value.id == "self"
        and klass is not None
        and getattr(fn, "name", None) == "__init__"
        and fn in klass.body
        and ctx.bindings.is_module_class(klass)
    ):
        return False
    name = node.targets[0].attr
    facts = _facts(ctx)
    if name in facts["reads"] or name in facts["strings"] or name.startswith("__"):
        return False
    if not _has_parameters(node.value, ctx):
        return False
    ancestors = _ancestors(klass, ctx)
    if ancestors is None:
        return False
    family = [*ancestors, *subclasses(klass, ctx)]
    for k in family:
        if any(getattr(b, "attr", getattr(b, "id", "")) in _CONTAINER_BASES for b in k.bases):
            return False
        if _generic_access(k):
            return False
    if not any(_real_forward(k) for k in family) or _reads_unassigned(family, ctx) or in_test_code(ctx.path):
        return False
    if _read_in_package(name, family, ctx):
        return False
    return True if _trained_here(family, ctx) else UNSURE


def _trained_here(family, ctx) -> bool:
    """The file builds a model of the family, or a model of its own that holds one as a part (a layer
    built in a network's ``__init__``), and runs a backward pass. Elsewhere (a library's layer, a model
    file) nothing shows that the layer trains at all: its harm, a layer that never learns or DDP's error
    on unused parameters, is a guess (--preview)."""
    return file_calls(ctx, "backward") and built_here(with_holders(family, ctx), ctx)


RULE = Rule(
    "PTF234",
    ("parameter-unused-in-forward",),
    "this layer is built in __init__ but nothing in the model ever uses it: its parameters are in the optimizer "
    "and the checkpoint but never get a gradient, so they never train (and DDP errors on unused parameters); "
    "apply it in forward, or delete it",
    _unused_layer,
    nodes=ast.Assign,
)
