"""What a name holds: a module, a loss, an optimizer, an LR scheduler, a tensor, a NumPy array or a
DataLoader, read from how the name was bound in its function (or class, through ``self.``).

``criterion = nn.CrossEntropyLoss()`` makes ``criterion`` a loss, so ``criterion(p, y)`` is a call
of that loss; ``for x, y in loader:`` over a DataLoader makes ``x`` and ``y`` a batch (tensors);
``self.fc = nn.Linear(...)`` in ``__init__`` makes ``self.fc`` a module in every method of the class.

Scopes follow Python's own rule, read straight from the tree: a name bound anywhere in a function
(assignment, loop target, parameter, ``with ... as``) is local to it unless declared ``global`` or
``nonlocal``; otherwise it is looked up in the enclosing functions, then the module. A name's value
at a line is its last binding above that line in its scope, leaving out a binding in the other
branch of an if/else (``if t is a tensor: x = stack(t) else: x = tensor(t)``). Annotations bind
nothing: ``x: T`` declares, ``x: T = v`` binds ``v`` (a parameter's annotation is read as its
declared kind). Only statements are scanned: a comprehension's names are its own scope, and a
walrus (``:=``) is not followed. A module's output is a tensor only for torch.nn layers that return
one; a user model's may be a tuple (``feats, pos = neck(x)`` tells nothing).

Why not LibCST's ScopeProvider/QualifiedNameProvider (or astroid): measured on 20,698 lines of timm
1.0.31 (97 files, this machine, one run): LibCST's parse + ScopeProvider + QualifiedNameProvider
took 9.63 s, where ``ast.parse`` took 0.11 s, ``symtable`` 0.06 s and the whole of ``pitfalls lint``
(every rule) 0.56 s. LibCST alone would make the lint ~17x slower, slower than TorchFix (itself
built on LibCST), where the issue asks to stay >= 10x faster. ``symtable`` gives the same
local/global/free answer as the rule above but needs the source text and a second parse to map
its tables back to ``ast`` nodes; the rule above reads the tree we already have. astroid is not
installed and would infer far more than we need, at LibCST's order of cost.

The kinds are facts of the code, never guesses from a name, with one exception kept narrow: an
unbound iterable whose name ends in ``loader`` (``train_loader``, a parameter) is taken as a
DataLoader, so its batches are tensors.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from torch_pitfalls.lint.walking import children, walk

MODULE, LOSS, OPTIMIZER, SCHEDULER, TENSOR, NDARRAY, LOADER, DISTRIBUTION, SCALER = (
    "module",
    "loss",
    "optimizer",
    "scheduler",
    "tensor",
    "ndarray",
    "loader",
    "distribution",
    "scaler",  # a mixed-precision GradScaler: it has a state_dict, and is neither optimizer nor scheduler
)
GRAD_SCALERS = ("torch.amp.GradScaler", "torch.cuda.amp.GradScaler", "torch.cpu.amp.GradScaler")

MODULE_BASES = (
    "torch.nn.Module",
    "torch.nn.modules.module.Module",
    "pytorch_lightning.LightningModule",
    "lightning.pytorch.LightningModule",
    "lightning.LightningModule",
    "torch.nn.Sequential",
    "torch.nn.ModuleList",
    "torch.nn.ModuleDict",
)
LOADERS = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")
# torch.<name> functions that return a tensor (factories and ops; not torch.load, torch.device, ...)
# (not the ones that return a tuple of tensors: split, chunk, unbind, meshgrid, topk, sort)
TENSOR_FUNCTIONS = frozenset(
    """
tensor as_tensor asarray from_numpy zeros ones empty full rand randn randint randperm arange linspace logspace eye
zeros_like ones_like empty_like full_like rand_like randn_like randint_like stack cat concat concatenate hstack vstack
where matmul mm bmm einsum softmax log_softmax sigmoid tanh relu exp log sqrt abs sum mean max min argmax argmin
clamp clip cdist flatten reshape squeeze unsqueeze transpose permute gather scatter index_select masked_fill
cumsum prod std var norm argsort nonzero tril triu outer diag roll flip
multinomial normal bernoulli polar complex view_as_real view_as_complex
""".split()
)
# tensor methods whose result is not a tensor
NON_TENSOR_METHODS = frozenset(
    """
item tolist numpy size dim numel nelement ndimension element_size data_ptr is_contiguous is_floating_point
backward register_hook storage untyped_storage stride get_device type_as_string __len__ __repr__ keys items values
""".split()
)
MODULE_SELF_METHODS = frozenset(
    "to cuda cpu train eval float double half bfloat16 requires_grad_ apply share_memory to_empty type xpu".split()
)
NUMPY_NON_ARRAY = frozenset(
    "seed default_rng RandomState Generator dtype finfo iinfo save savez isnan isinf allclose array_equal".split()
)
LOADER_NAME = re.compile(r"(^|_)(data)?loader$|(^|_)dl$", re.I)
PROBABILITY_OPS = frozenset(("softmax", "Softmax", "sigmoid", "Sigmoid"))
LINEAR = "linear"  # what a Linear layer gives: raw scores, no activation after it
LINEAR_LAYERS = ("torch.nn.Linear", "torch.nn.modules.linear.Linear", "torch.nn.LazyLinear")
MODEL_OUTPUT = "output"  # what calling a module gives: a tensor, or a tuple of them (HF models, FPN necks)
COLLATED = "collated"  # a DataLoader whose collate_fn of the code is not shown to make tensors: batches of unknown kind
TENSOR_ANNOTATIONS = ("torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.nn.Parameter")


@dataclass(frozen=True)
class Held:
    """What an expression holds: its kind, and what made it (a qualified constructor such as
    ``torch.nn.CrossEntropyLoss``, or for a tensor the last name of the op: ``softmax``)."""

    kind: str
    what: str | None = None


@dataclass(frozen=True)
class Binding:
    line: int
    how: str  # assign, item (an element of value), iter (an element of iterating value), param, aug, other
    value: ast.AST | None
    index: int | None = None  # for an item: its position in a flat unpacking (``ckpt, model = f()``)


class _Scope:
    """The names one function (or the module) binds, in source order, and what it declares global."""

    def __init__(self, node: ast.AST):
        self.node = node
        self.names: dict[str, list[Binding]] = {}
        self.declared: set[str] = set()  # global / nonlocal: not local here
        self.branches: list[tuple[tuple[int, int], tuple[int, int]]] = []  # an if's body and else lines
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            self._params(node)
        for stmt in node.body if isinstance(node.body, list) else [node.body]:
            self._visit(stmt)
        for bindings in self.names.values():
            bindings.sort(key=lambda b: b.line)

    def exclusive(self, a: int, b: int) -> bool:
        """Lines ``a`` and ``b`` sit in different branches of one if/else: one never sees the other."""
        return any(
            (lo1 <= a <= hi1 and lo2 <= b <= hi2) or (lo1 <= b <= hi1 and lo2 <= a <= hi2)
            for (lo1, hi1), (lo2, hi2) in self.branches
        )

    def add(self, name: str, line: int, how: str, value, index: int | None = None):
        self.names.setdefault(name, []).append(Binding(line, how, value, index))

    def _params(self, fn):
        a = fn.args
        every = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]
        for arg in every:
            self.add(arg.arg, fn.lineno - 1, "param", getattr(arg, "annotation", None))

    def _target(self, target, line, how, value, index: int | None = None):
        if isinstance(target, ast.Name):
            self.add(target.id, line, how, value, index)
        elif isinstance(target, (ast.Tuple, ast.List)):
            paired = (
                how == "assign" and isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
            )
            for i, elt in enumerate(target.elts):
                if paired:
                    self._target(elt, line, "assign", value.elts[i])
                elif isinstance(elt, ast.Starred):
                    self._target(elt.value, line, "other", None)
                elif how == "assign":
                    flat = not any(isinstance(e, ast.Starred) for e in target.elts)
                    self._target(elt, line, "item", value, i if flat else None)
                else:
                    self._target(elt, line, how, value)
        elif isinstance(target, ast.Starred):
            self._target(target.value, line, "other", None)

    def _visit(self, node):  # noqa: C901 - one branch per kind of statement that binds a name
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.add(node.name, node.lineno, "other", node)
            return  # its body is its own scope
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            self.declared.update(node.names)
        elif isinstance(node, ast.If) and node.orelse:
            self.branches.append(
                ((node.body[0].lineno, node.body[-1].end_lineno), (node.orelse[0].lineno, node.orelse[-1].end_lineno))
            )
        if isinstance(node, ast.Assign):
            for t in node.targets:
                self._target(t, node.lineno, "assign", node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._target(node.target, node.lineno, "assign", node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            self.add(node.target.id, node.lineno, "aug", node)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self._loop_target(node.target, node.iter, node.lineno)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self._target(item.optional_vars, item.context_expr.lineno, "other", None)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self.add(node.name, node.lineno, "other", None)
        # statements only: a comprehension's names are its own scope, and expressions bind nothing
        # else but a walrus (not followed, for speed: it is rare in training code)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(node, field, None) or ():
                if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                    self._visit(child)

    def _loop_target(self, target, iterable, line):
        # ``for i, batch in enumerate(loader)``: i is the index, batch an element of the loader
        if (
            isinstance(iterable, ast.Call)
            and getattr(iterable.func, "id", None) == "enumerate"
            and iterable.args
            and isinstance(target, ast.Tuple)
            and len(target.elts) == 2
        ):
            self._target(target.elts[0], line, "other", None)
            self._target(target.elts[1], line, "iter", iterable.args[0])
        elif _dict_view(iterable, "items") and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            # ``for k, v in d.items()``: k a key, v a value of d (read as an element of the items view)
            self._target(target.elts[0], line, "other", None)
            self._target(target.elts[1], line, "iter", iterable)
        else:
            self._target(target, line, "iter", iterable)


def arguments(call: ast.Call, fn: ast.FunctionDef | ast.AsyncFunctionDef, bound: int = 0) -> dict[str, ast.AST]:
    """Parameter name -> what ``call`` passes for it, by position (in order, as the call lists its
    arguments) or by keyword; ``**kw`` names nothing. ``bound``: leading parameters the call does not
    pass (``self`` where the call is the class's: ``Trainer(model)`` for ``__init__(self, model)``)."""
    a = fn.args
    out = dict(zip([x.arg for x in (*a.posonlyargs, *a.args)][bound:], call.args))
    out.update({k.arg: k.value for k in call.keywords if k.arg is not None})
    return out


def parameter_defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.AST]:
    """Parameter name -> its default expression, positional and keyword-only, for those that have one."""
    a = fn.args
    positional = [x.arg for x in (*a.posonlyargs, *a.args)]
    defaults = dict(zip(positional[len(positional) - len(a.defaults) :], a.defaults))
    defaults.update({k.arg: v for k, v in zip(a.kwonlyargs, a.kw_defaults) if v is not None})
    return defaults


_LISTS = (ast.List, ast.Tuple, ast.ListComp)  # literal sequences whose elements the code shows


class Bindings:
    """The module's scopes, built lazily, one function at a time, and the kinds of expressions."""

    def __init__(self, tree: ast.AST, qualify):
        self.tree = tree
        self.qualify = qualify  # expression -> qualified name through the imports, or None
        self._scopes: dict[int, _Scope] = {}
        self._classes: dict[str, ast.ClassDef] | None = None
        self._module_classes: dict[int, bool] = {}
        self._attrs: dict[int, dict[str, list[tuple[ast.AST, ast.AST, int]]]] = {}
        self._parents: dict[int, ast.AST] | None = None
        self._held: dict[tuple, Held | None] = {}  # (node, scope, line) -> what it holds: rules ask often
        self._calls: dict[str, list[tuple[ast.Call, tuple, ast.ClassDef | None]]] | None = None
        self._method_calls: dict[str, list[tuple[ast.Call, tuple, ast.ClassDef | None]]] | None = None
        self._params: dict[tuple[int, str], Held | None] = {}  # (function, parameter) -> what call sites pass
        self._returns: dict[tuple[int, int | None], Held | None] = {}  # (function, tuple index) -> what it returns
        self._self_names: frozenset | None = None  # the attributes module classes set on self
        self._instances: dict[int, list | None] = {}  # module class -> the calls of its instances (forward's)

    # --- scopes -------------------------------------------------------------------------
    def scope(self, node: ast.AST) -> _Scope:
        key = id(node)
        if key not in self._scopes:
            self._scopes[key] = _Scope(node)
        return self._scopes[key]

    def lookup(self, name: str, chain, line: int):
        """(binding, the chain from its scope outward) of ``name`` at ``line``, or (None, None)."""
        for i, node in enumerate(chain):
            scope = self.scope(node)
            if name in scope.declared or name not in scope.names:
                continue
            found = scope.names[name]
            if i == 0:
                before = [
                    b for b in found if b.line < line and not scope.exclusive(b.line, line) and not _inside(b, line)
                ]
                return (before[-1] if before else None), tuple(chain[i:])
            return found[-1], tuple(chain[i:])
        return None, None

    def value_of(self, name: str, chain, line: int) -> ast.AST | None:
        """What ``name`` was last assigned (a plain ``=``) above ``line``, or None."""
        binding, _ = self.lookup(name, chain, line)
        return binding.value if binding is not None and binding.how == "assign" else None

    def parents(self) -> dict[int, ast.AST]:
        """Each node's id -> the node that holds it, for the whole module (built once)."""
        if self._parents is None:
            parents, todo = {}, [self.tree]
            while todo:  # every node once (the order does not matter here)
                outer = todo.pop()
                below = children(outer)
                for child in below:
                    parents[id(child)] = outer
                todo.extend(below)
            self._parents = parents
        return self._parents

    # --- classes --------------------------------------------------------------------------
    def classes(self) -> dict[str, ast.ClassDef]:
        if self._classes is None:
            found, todo = {}, [self.tree]
            while todo:  # statements only: a class is never inside an expression
                node = todo.pop()
                if isinstance(node, ast.ClassDef):
                    found.setdefault(node.name, node)
                for field in ("body", "orelse", "finalbody", "handlers"):
                    todo.extend(
                        c for c in getattr(node, field, None) or () if isinstance(c, (ast.stmt, ast.excepthandler))
                    )
            self._classes = found
        return self._classes

    def _set_on_self(self) -> frozenset:
        """Every attribute name a module class of the file sets on ``self`` (read once per file)."""
        if self._self_names is None:
            self._self_names = frozenset(
                name for k in self.classes().values() if self.is_module_class(k) for name in self.self_attributes(k)
            )
        return self._self_names

    def is_module_class(self, klass: ast.ClassDef, depth: int = 0) -> bool:
        """A class deriving nn.Module (or Lightning's), directly or through classes of this file."""
        key = id(klass)
        if key not in self._module_classes:
            self._module_classes[key] = False  # a cycle of bases is not a module
            found = False
            for base in klass.bases:
                q = self.qualify(base)
                if q in MODULE_BASES or (q or "").startswith("torch.nn.modules."):
                    found = True
                elif isinstance(base, ast.Name) and base.id in self.classes() and depth < 8:
                    found = self.is_module_class(self.classes()[base.id], depth + 1)
                if found:
                    break
            self._module_classes[key] = found
        return self._module_classes[key]

    def self_attributes(self, klass: ast.ClassDef) -> dict[str, list[tuple[ast.AST, ast.AST, int]]]:
        """attr -> [(method, value, line)] for every ``self.attr = value`` in the class's methods,
        ``__init__``'s first."""
        key = id(klass)
        if key not in self._attrs:
            found: dict[str, list] = {}
            methods = [m for m in klass.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
            methods.sort(key=lambda m: m.name != "__init__")
            for method in methods:
                me = method.args.args[0].arg if method.args.args else None
                for n in walk(method):
                    if isinstance(n, (ast.Assign, ast.AnnAssign)) and getattr(n, "value", None) is not None:
                        for t, v in _assigned_pairs(n):
                            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me:
                                found.setdefault(t.attr, []).append((method, v, n.lineno))
            self._attrs[key] = found
        return self._attrs[key]

    # --- kinds ----------------------------------------------------------------------------
    def held(self, node: ast.AST, chain, line: int, klass: ast.ClassDef | None = None, depth: int = 0) -> Held | None:
        """What ``node`` holds at ``line`` in the scopes ``chain`` (innermost first), or None."""
        if node is None or depth > 12:
            return None
        key = (id(node), id(chain[0]) if chain else 0, line, id(klass))
        if key in self._held:
            return self._held[key]
        self._held[key] = None  # a name bound in terms of itself (x = x + 1) holds nothing we can tell
        found = self._held[key] = self._held_uncached(node, chain, line, klass, depth + 1)
        return found

    def _held_uncached(self, node, chain, line, klass, d) -> Held | None:  # noqa: C901 - one branch per kind of expression
        if isinstance(node, ast.Name):
            binding, where = self.lookup(node.id, chain, line)
            if binding is None:
                return None
            found = self._binding_held(binding, where, klass, d)
            if found is None and binding.how == "param":
                found = self._passed_held(where[0], node.id, d)
            return found
        if isinstance(node, ast.Attribute):
            if klass is not None and isinstance(node.value, ast.Name) and node.value.id == "self":
                attrs = self.self_attributes(klass).get(node.attr)
                if attrs:  # assigned in several places (one loss per config branch): only what all agree on
                    helds = {self.held(value, (method, *chain[-1:]), at + 1, klass, d) for method, value, at in attrs}
                    return helds.pop() if len(helds) == 1 else None
                return self._declared_field(klass, node.attr)
            if node.attr in ("data", "grad", "T", "mT", "real", "imag"):
                inner = self.held(node.value, chain, line, klass, d)
                return Held(TENSOR, inner.what) if inner and inner.kind == TENSOR else None
            if node.attr not in self._set_on_self():
                return None  # no class of the file sets it: no need to ask what the receiver is
            owner = self.held(node.value, chain, line, klass, d)
            cls = self.classes().get(owner.what or "") if owner is not None and owner.kind == MODULE else None
            attrs = self.self_attributes(cls).get(node.attr) if cls is not None else None
            if attrs:  # model.encoder, model an instance of a module class of this file: what its methods set there
                helds = {self.held(value, (method, *chain[-1:]), at + 1, cls, d) for method, value, at in attrs}
                return helds.pop() if len(helds) == 1 else None
            return None
        if isinstance(node, ast.Call):
            return self._call_held(node, chain, line, klass, d)
        if isinstance(node, ast.Subscript):
            inner = self.held(node.value, chain, line, klass, d)
            listed = self.value_of(node.value.id, chain, line) if isinstance(node.value, ast.Name) else node.value
            if inner is None and not isinstance(node.slice, ast.Slice) and isinstance(listed, _LISTS):
                return self._element_held(listed, chain, line, klass, d)  # probs[1 - i]: one element of a list
            if inner is None or inner.kind not in (TENSOR, NDARRAY):
                return None
            return Held(inner.kind, MODEL_OUTPUT if inner.what == MODEL_OUTPUT else None)  # out[-2:] may be a tuple
        if isinstance(node, ast.BinOp):
            kinds = [self.held(s, chain, line, klass, d) for s in (node.left, node.right)]
            for k in (TENSOR, NDARRAY):
                if any(h and h.kind == k for h in kinds):
                    return Held(k)
            return None
        if isinstance(node, ast.UnaryOp):
            inner = self.held(node.operand, chain, line, klass, d)
            return Held(inner.kind) if inner and inner.kind in (TENSOR, NDARRAY) else None
        if isinstance(node, (ast.IfExp, ast.BoolOp)):  # ``a or b``: either operand, so only when both agree
            parts = [node.body, node.orelse] if isinstance(node, ast.IfExp) else node.values
            helds = [self.held(p, chain, line, klass, d) for p in parts]
            return helds[0] if helds[0] and all(h == helds[0] for h in helds) else None
        if isinstance(node, ast.Await):
            return None
        return None

    def _declared_field(self, klass, attr) -> Held | None:
        """A field no method of the class assigns, declared in its body as a tensor (``wave: torch.Tensor``
        of a dataclass or NamedTuple): what the constructor is given for it."""
        for stmt in klass.body:
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.target.id == attr
                and self.qualify(stmt.annotation) in TENSOR_ANNOTATIONS
            ):
                return Held(TENSOR)
        return None

    def _binding_held(self, binding: Binding, where, klass, d) -> Held | None:
        # the right-hand side is read before its own binding: ``t = t[::-1]`` reads the earlier ``t``
        if binding.how == "assign":
            return self.held(binding.value, where, binding.line, klass, d)
        if binding.how == "item":  # ``x, y = batch``; not ``feats, pos = neck(x)`` (a module's parts may be tuples)
            function = self._local_function(binding.value, where, binding.line)
            if function is not None and binding.index is not None:  # ``ckpt, model = build(cfg)``
                return self._returned_held(function, binding.index, d)
            whole = self.held(binding.value, where, binding.line, klass, d)
            return (
                Held(whole.kind) if whole and whole.kind in (TENSOR, NDARRAY) and whole.what != MODEL_OUTPUT else None
            )
        if binding.how == "iter":
            return self._element_held(binding.value, where, binding.line, klass, d)
        if binding.how == "aug":
            right = self.held(binding.value.value, where, binding.line, klass, d)
            return Held(right.kind) if right and right.kind in (TENSOR, NDARRAY) else None
        if binding.how == "param" and binding.value is not None:
            q = self.qualify(binding.value)
            if q in TENSOR_ANNOTATIONS:
                return Held(TENSOR)
            if q and q.startswith("torch.distributions."):
                return Held(DISTRIBUTION, q)
            if q in MODULE_BASES:
                return Held(MODULE, q)
            if q and q.startswith("torch.optim.") and not q.startswith("torch.optim.lr_scheduler"):
                return Held(OPTIMIZER, q)
            if q in LOADERS:
                return Held(LOADER, q)
        return None

    # --- what the module's own functions return ---------------------------------------------------
    def _local_function(self, call, chain, line) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The module-level function a call by plain name calls, where the name is not rebound here."""
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            return None
        return self._function_named(call.func.id, chain, line)

    def _function_named(self, name: str, chain, line) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The module-level function ``name`` refers to at ``line``, where the name is not rebound here."""
        fn = self.module_function(name)
        binding, _ = self.lookup(name, chain, line)
        return fn if fn is not None and (binding is None or binding.value is fn) else None

    def _returned_held(self, fn, index: int | None, d) -> Held | None:
        """What every ``return`` of ``fn`` holds (element ``index`` of a returned tuple), when they
        all agree; once per (function, index)."""
        key = (id(fn), index)
        if key in self._returns:
            return self._returns[key]
        self._returns[key] = None  # a function returning a call of itself tells nothing more
        values = returned_values(fn, index) or []
        helds = {self.held(v, (fn, self.tree), at + 1, None, d) for v, at in values}
        found = self._returns[key] = helds.pop() if len(helds) == 1 else None
        return found

    # --- parameters, from the module's own call sites ---------------------------------------------
    def call_sites(self, name: str) -> list[tuple[ast.Call, tuple, ast.ClassDef | None]]:
        """Every ``name(...)`` call in the module, with the scopes it is made in (innermost first) and
        its class: built once per module, on the first question."""
        return self._index_calls()[0].get(name, [])

    def method_call_sites(self, name: str) -> list[tuple[ast.Call, tuple, ast.ClassDef | None]]:
        """Every ``x.name(...)`` call in the module, with its scopes (innermost first) and its class."""
        return self._index_calls()[1].get(name, [])

    def _index_calls(self) -> tuple[dict, dict]:
        """(``name(...)`` calls by name, ``x.name(...)`` calls by name), each with its scopes and class: one
        walk of the module, on the first question."""
        if self._calls is None:
            self._calls, self._method_calls = {}, {}
            todo = [(self.tree, (self.tree,), None)]
            while todo:
                node, chain, klass = todo.pop()
                for child in children(node):
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                        todo.append((child, (child, *chain), klass))
                    elif isinstance(child, ast.ClassDef):
                        todo.append((child, chain, child))
                    else:
                        if isinstance(child, ast.Call) and isinstance(child.func, ast.Name):
                            self._calls.setdefault(child.func.id, []).append((child, chain, klass))
                        elif isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute):
                            self._method_calls.setdefault(child.func.attr, []).append((child, chain, klass))
                        todo.append((child, chain, klass))
        return self._calls, self._method_calls

    def module_function(self, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The module-level function ``name`` is bound to, when it is bound once (not redefined)."""
        holder = self.scope(self.tree).names.get(name, [])
        fn = holder[0].value if len(holder) == 1 else None
        return fn if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else None

    def passed(self, fn: ast.AST, param: str) -> list[tuple[ast.AST, tuple, int, ast.ClassDef | None]] | None:
        """What the module's own calls of function ``fn`` pass for ``param`` (by position or keyword,
        else its default): [(expression, caller's scopes, line, caller's class)], or None where that
        cannot be told (a method called on an object of unknown class, a function whose name is bound
        twice, a call with ``*args``/``**kw``, no call at all). A function used elsewhere too may get other values there: what
        this module passes is what the module shows."""
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        owner = self._constructed_by(fn)
        if owner is not None:
            sites, bound = self.call_sites(owner.name), 1
        elif self.module_function(fn.name) is fn:
            sites, bound = self.call_sites(fn.name), 0
        elif (modules := self._instance_sites(fn)) is not None:  # forward: the calls of the module's instances
            sites, bound = modules, 1
        else:  # a method: its calls on self and on objects of its class, when those are all its calls
            sites, bound = self._method_sites(fn), 1
            if sites is None:
                return None
        defaults = parameter_defaults(fn)
        out = []
        for call, chain, klass in sites:
            if any(isinstance(x, ast.Starred) for x in call.args) or any(k.arg is None for k in call.keywords):
                return None
            value = arguments(call, fn, bound).get(param)
            if value is None:
                if param not in defaults:
                    return None
                out.append((defaults[param], (self.tree,), fn.lineno, None))
            else:
                out.append((value, chain, call.lineno, klass))
        return out or None

    def _method_sites(self, fn) -> list | None:
        """The calls of method ``fn`` (of a module-level class bound once; not a special, static or class
        method) as [(call, its scopes, its class)], where every call of a method of that name in the module
        is on ``self`` inside the class, on ``Cls(...)`` or on a name assigned ``Cls(...)``; None where one
        is on anything else (it may be another class's method) or the method is named nowhere else."""
        klass = self._owner_class(fn)
        if klass is None or fn.name.startswith("__") or fn.decorator_list:
            return None
        sites = []
        for call, chain, caller in self._index_calls()[1].get(fn.name, ()):
            receiver = call.func.value
            if isinstance(receiver, ast.Name) and receiver.id == "self" and caller is klass:
                sites.append((call, chain, caller))
                continue
            if self._torch_object(receiver, chain, call.lineno, caller):
                continue  # optimizer.step() beside stopper.step(score, model): torch's method, not the class's
            if isinstance(receiver, ast.Name):
                binding, _ = self.lookup(receiver.id, chain, call.lineno)
                receiver = binding.value if binding is not None and binding.how == "assign" else receiver
            if not (isinstance(receiver, ast.Call) and getattr(receiver.func, "id", None) == klass.name):
                return None
            sites.append((call, chain, caller))
        return sites or None

    def _torch_object(self, receiver, chain, line, klass, depth: int = 0) -> bool:
        """The receiver holds one of torch's own objects (an optimizer, a scheduler, a scaler, a loader, a tensor,
        a torch module), whose methods are torch's: no call on it runs a method of a class of the file."""
        held = self.held(receiver, chain, line, klass)
        if held is None and isinstance(receiver, ast.Name) and depth < 4:  # optimizer=None: what each call passes
            binding, where = self.lookup(receiver.id, chain, line)
            sites = self.passed(where[0], receiver.id) if binding is not None and binding.how == "param" else None
            return bool(sites) and all(
                (isinstance(v, ast.Constant) and v.value is None) or self._torch_object(v, c, at, k, depth + 1)
                for v, c, at, k in sites
            )
        if held is None:
            return False
        if held.kind == MODULE:
            return (held.what or "").startswith("torch.")
        return held.kind in (OPTIMIZER, SCHEDULER, LOADER, TENSOR, NDARRAY, LOSS, SCALER, DISTRIBUTION)

    def _instance_sites(self, fn) -> list | None:
        """For the ``forward`` of a module class of the file: the calls of its instances (``self.attn(x, mask)``
        where ``self.attn = Attention(...)``, ``block(x)`` for a block of a ModuleList of them), which run it,
        as [(call, its scopes, its class)]; None for any other function, or where the file calls none, or calls
        ``forward`` itself by name (those sites are read as a method's)."""
        klass = self._owner_class(fn) if fn.name == "forward" else None
        if klass is None or not self.is_module_class(klass) or self._index_calls()[1].get("forward"):
            return None
        key = id(klass)
        if key not in self._instances:
            self._instances[key] = None  # a forward whose calls are read through its own parameters: nothing more
            found = []
            for by_name in self._index_calls():
                for calls in by_name.values():
                    for call, chain, caller in calls:
                        func = call.func
                        if isinstance(func, ast.Attribute) and not (
                            isinstance(func.value, ast.Name) and func.value.id == "self"
                        ):
                            continue  # x.method(...): not a module called
                        held = self.held(func, chain, call.lineno, caller)
                        if held is not None and held.kind == MODULE and held.what == klass.name:
                            found.append((call, chain, caller))
            self._instances[key] = found or None
        return self._instances[key]

    def _constructed_by(self, fn) -> ast.ClassDef | None:
        """The module-level class (bound once) whose ``__init__`` ``fn`` is: its calls are the class's."""
        return self._owner_class(fn) if fn.name == "__init__" else None

    def _owner_class(self, fn) -> ast.ClassDef | None:
        """The module-level class, bound once, whose body defines ``fn``; None for any other function."""
        for cls in self.classes().values():
            if fn in cls.body:
                holder = self.scope(self.tree).names.get(cls.name, [])
                return cls if len(holder) == 1 and holder[0].value is cls else None
        return None

    def passed_values(self, name: str, chain, line: int) -> list[ast.AST] | None:
        """When ``name`` is a parameter here: what each call site passes for it, a name there taken one
        step to what it was assigned (``lr_sched = StepLR(...)`` -> the ``StepLR(...)`` call); else None."""
        binding, where = self.lookup(name, chain, line)
        if binding is None or binding.how != "param":
            return None
        sites = self.passed(where[0], name)
        if not sites:
            return None
        return [(self.value_of(v.id, c, at) or v) if isinstance(v, ast.Name) else v for v, c, at, _ in sites]

    def _passed_held(self, fn, param, d) -> Held | None:
        """A parameter holds what every call site in the module passes for it, when they agree. Once
        per (function, parameter): a chain of functions passing it on is read once, not per path."""
        key = (id(fn), param)
        if key in self._params:
            return self._params[key]
        self._params[key] = None  # a function passing the parameter to itself tells nothing more
        sites = self.passed(fn, param)
        helds = {self._site_held(value, chain, line, klass, d) for value, chain, line, klass in sites or ()}
        found = self._params[key] = helds.pop() if len(helds) == 1 else None
        return found

    def _site_held(self, value, chain, line, klass, d) -> Held | None:
        """What a call site passes. A parameter passed on is followed to its own call sites, not read
        from its annotation: an annotation is carried no further than its own function (diffusers'
        LTX pipeline annotates ``rope_interpolation_scale: torch.Tensor`` and passes a tuple)."""
        if isinstance(value, ast.Name) and d < 12:
            binding, where = self.lookup(value.id, chain, line)
            if binding is not None and binding.how == "param":
                return self._passed_held(where[0], value.id, d + 1)
        return self.held(value, chain, line, klass, d)

    def _element_held(self, iterable, where, line, klass, d) -> Held | None:
        """What iterating ``iterable`` yields: a DataLoader's batches are tensors (or tuples of them)."""
        if (
            isinstance(iterable, ast.Call)
            and iterable.args
            and ((self.qualify(iterable.func) or getattr(iterable.func, "id", "")).split(".")[-1] in ("tqdm", "iter"))
        ):
            iterable = iterable.args[0]  # tqdm(loader), iter(loader): the loader's batches
        if (
            isinstance(iterable, ast.Call)
            and isinstance(iterable.func, ast.Attribute)
            and iterable.func.attr in ("parameters", "buffers", "children", "modules")
            and (self.held(iterable.func.value, where, line, klass, d) or Held("")).kind == MODULE
        ):  # model.parameters(): its tensors; model.children(): its modules
            return Held(TENSOR, "parameter") if iterable.func.attr in ("parameters", "buffers") else Held(MODULE)
        if (built := self._container_built(iterable, klass)) is not None:  # for block in self.blocks
            return self._element_held(built[0], built[1], built[2], klass, d)
        if _dict_view(iterable, "values", "items"):  # a loader's dict batch: its values are the batch's tensors
            whole = self.held(iterable.func.value, where, line, klass, d)
            return Held(TENSOR) if whole is not None and whole == Held(TENSOR, "batch") else None
        if isinstance(iterable, ast.Name):  # bufs = [a, b] ... for b in bufs
            listed = self.value_of(iterable.id, where, line)
            if listed is None:  # a parameter: the lists every call of the function hands it
                elements = self._passed_elements(iterable.id, where, line, d)
                if elements is not None:
                    return elements
            iterable = listed if isinstance(listed, _LISTS) else iterable
        if isinstance(iterable, (ast.List, ast.Tuple)) and iterable.elts:  # [a, b]: what every element holds
            helds = {self.held(e, where, line, klass, d) for e in iterable.elts}
            return helds.pop() if len(helds) == 1 else None
        if isinstance(iterable, (ast.ListComp, ast.GeneratorExp)):  # [sharpen(s) for s in chunks]: its element
            return self.held(iterable.elt, where, line, klass, d)
        whole = self.held(iterable, where, line, klass, d)
        if whole is not None and whole.kind == LOADER:
            return Held(TENSOR, "batch") if whole.what != COLLATED else None
        if whole is None and _name_of(iterable) and LOADER_NAME.search(_name_of(iterable)):
            made = self.value_of(iterable.id, where, line) if isinstance(iterable, ast.Name) else None
            other = (
                made is not None
                and isinstance(made, ast.Call)
                and not (self.qualify(made.func) or "torch.").startswith("torch.")
            )
            return (
                None if other else Held(TENSOR, "batch")
            )  # a loader of another library (PyG's) batches its own objects
        if whole is not None and whole.kind == TENSOR:  # iterating a tensor: its rows
            return Held(TENSOR)
        return None

    def _container_built(self, iterable, klass):
        """``self.blocks`` assigned once, in the class, ``nn.ModuleList([...])`` (or of a generator of blocks) or
        ``nn.Sequential(a, b)``: (the listed elements, the scopes they were built in, the line), to read what
        iterating it yields."""
        if not (
            klass is not None
            and isinstance(iterable, ast.Attribute)
            and isinstance(iterable.value, ast.Name)
            and iterable.value.id == "self"
        ):
            return None
        assigned = self.self_attributes(klass).get(iterable.attr) or []
        if len(assigned) != 1:
            return None
        method, value, at = assigned[0]
        if not isinstance(value, ast.Call) or self.qualify(value.func) not in _LISTED_CONTAINERS:
            return None
        if len(value.args) == 1 and isinstance(value.args[0], (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)):
            listed = value.args[0]
        elif value.args and not any(isinstance(a, ast.Starred) for a in value.args):
            listed = ast.Tuple(elts=value.args, ctx=ast.Load())  # nn.Sequential(a, b, c)
        else:
            return None
        return listed, (method, self.tree), at + 1

    def _collated_otherwise(self, loader: ast.Call, chain, line, klass, d) -> bool:
        """The DataLoader batches with a ``collate_fn`` of the code's own that is not shown to return tensors: its
        batches are what that function makes (DGL graphs, dicts of lists, strings), not a tensor batch. Shown:
        torch's ``default_collate``, or a function of this module whose every return is a tensor or a tuple or
        list of them."""
        collate = next((k.value for k in loader.keywords if k.arg == "collate_fn"), None)
        if collate is None and len(loader.args) > 6:
            collate = loader.args[6]
        if collate is None or (isinstance(collate, ast.Constant) and collate.value is None):
            return False
        if (self.qualify(collate) or "").endswith("default_collate"):
            return False
        fn = self._function_named(collate.id, chain, line) if isinstance(collate, ast.Name) else None
        if fn is None:
            return True
        returned = returned_values(fn) or []
        for value, at in returned:
            parts = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
            for part in parts:
                held = self.held(part, (fn, self.tree), at + 1, None, d)
                if held is None or held.kind != TENSOR:
                    return True
        return not returned

    def _passed_elements(self, name, where, line, d) -> Held | None:
        """What each element of the lists the module's calls pass for parameter ``name`` holds
        (``predict(members, x)`` with ``members = [load_member(p) for p in paths]``), when they agree."""
        binding, owner = self.lookup(name, where, line)
        if binding is None or binding.how != "param":
            return None
        helds = set()
        for value, chain, at, klass in self.passed(owner[0], name) or ():
            if isinstance(value, ast.Name):
                value = self.value_of(value.id, chain, at)
            if not isinstance(value, _LISTS):
                return None
            helds.add(self._element_held(value, chain, at, klass, d))
        return helds.pop() if len(helds) == 1 else None

    def _call_held(self, call: ast.Call, chain, line, klass, d) -> Held | None:  # noqa: C901 - one branch per kind of constructor
        func = call.func
        q = self.qualify(func)
        if q:
            last = q.rsplit(".", 1)[-1]
            if q.startswith("torch.optim.lr_scheduler."):
                return Held(SCHEDULER, q)
            if q in GRAD_SCALERS or q.startswith("torch.amp.grad_scaler."):
                return Held(SCALER, q)
            if q.startswith("torch.distributions.") and last[:1].isupper():
                return Held(DISTRIBUTION, q)
            if q.startswith("torch.optim.") and last[:1].isupper():
                return Held(OPTIMIZER, q)
            if q in LOADERS:
                return Held(LOADER, COLLATED if self._collated_otherwise(call, chain, line, klass, d) else q)
            if q.startswith("torch.nn.functional.") or q == "torch.nn.utils.rnn.pad_sequence":
                return Held(TENSOR, last)
            if q.startswith("torch.nn.") and not q.startswith(("torch.nn.init.", "torch.nn.utils.")):
                if last in ("Parameter", "Buffer"):
                    return Held(TENSOR, "parameter")
                if last.endswith("Loss"):
                    return Held(LOSS, q)
                if last[:1].isupper():
                    return Held(MODULE, q)
                return None
            if q == "torch.compile" and call.args:
                return self.held(call.args[0], chain, line, klass, d)
            if (
                q.startswith(("torchvision.models.", "timm.create_model", "timm.models."))
                and last[:1].islower()
                and not last.startswith(("get_model_weights", "get_weight", "list_", "is_", "register"))
            ):
                return Held(MODULE, q)
            if q.startswith(("torch.linalg.", "torch.fft.", "torch.special.")) or (
                q.count(".") == 1 and q.startswith("torch.") and last in TENSOR_FUNCTIONS
            ):
                return Held(TENSOR, last)
            if q.startswith(("numpy.", "np.")) and last not in NUMPY_NON_ARRAY:
                return Held(NDARRAY, last)
            if q in ("tqdm.tqdm", "tqdm.auto.tqdm") and call.args:
                return self.held(call.args[0], chain, line, klass, d)
        if isinstance(func, ast.Name) and func.id == "self" and klass is not None and self.is_module_class(klass):
            # ``self(x)`` in a method of a module class (a LightningModule's training_step): its forward
            what = self._output_of(Held(MODULE, klass.name), func, chain, line, klass, d)
            return Held(TENSOR, what or MODEL_OUTPUT)
        if isinstance(func, ast.Name):
            if func.id == "next" and call.args:
                return self._element_held(call.args[0], chain, line, klass, d)
            if func.id == "iter" and call.args:
                inner = self.held(call.args[0], chain, line, klass, d)
                if inner is None and _name_of(call.args[0]) and LOADER_NAME.search(_name_of(call.args[0])):
                    return Held(LOADER)  # iter(train_loader), the loader a parameter
                return inner
            binding, _ = self.lookup(func.id, chain, line)
            cls = self.classes().get(func.id)
            if cls is not None and (binding is None or binding.value is cls) and self.is_module_class(cls):
                if any(isinstance(n, ast.Name) and n.id.endswith("Loss") for n in [func]):
                    return Held(LOSS, func.id)
                return Held(MODULE, func.id)
            function = self._local_function(call, chain, line)
            if function is not None:  # ``model = build_model(cfg)``, a function of this module
                return self._returned_held(function, None, d)
        picked = self._picked_constructor(func, chain, line)
        if picked is not None:
            return Held(MODULE, picked)
        if isinstance(func, ast.Attribute):
            receiver = self.held(func.value, chain, line, klass, d)
            if receiver is not None:
                return self._method_held(receiver, func.attr, call, chain, line, klass, d)
            if func.attr == "__iter__" and not call.args:
                return self._iterated_loader(call, chain, line, klass, d)
        callee = self.held(func, chain, line, klass, d)
        if callee is not None and callee.kind in (MODULE, LOSS):
            what = self._output_of(callee, func, chain, line, klass, d)
            if what is None and not _single_tensor_module(callee):
                what = MODEL_OUTPUT
            return Held(TENSOR, what)
        return None

    def _picked_constructor(self, func, chain, line) -> str | None:
        """A model constructor chosen by name: ``{"resnet18": models.resnet18, ...}[arch]`` (or a name bound
        to that), ``getattr(torchvision.models, arch)``; the first candidate's qualified name, where every
        candidate is a torchvision or timm model builder or a torch.nn module class."""
        if isinstance(func, ast.Name):
            binding, _ = self.lookup(func.id, chain, line)
            func = binding.value if binding is not None and binding.how == "assign" else None
        if isinstance(func, ast.Call) and getattr(func.func, "id", None) == "getattr" and len(func.args) >= 2:
            q = self.qualify(func.args[0]) or ""
            return q if q in ("torchvision.models", "timm.models") else None
        if not (isinstance(func, ast.Subscript) and isinstance(func.value, (ast.Dict, ast.List, ast.Tuple))):
            return None
        table = func.value
        candidates = table.values if isinstance(table, ast.Dict) else table.elts
        names = [self.qualify(c) or "" for c in candidates]
        builds = all(
            (n.startswith(("torchvision.models.", "timm.models.")) and n.rsplit(".", 1)[-1][:1].islower())
            or (n.startswith("torch.nn.") and n.count(".") == 2 and n.rsplit(".", 1)[-1][:1].isupper())
            for n in names
        )
        return names[0] if names and builds else None

    def _method_held(self, receiver: Held, attr, call, chain, line, klass, d) -> Held | None:
        if receiver.kind == MODULE:
            if attr in MODULE_SELF_METHODS:
                return receiver
            if attr == "forward":
                return Held(TENSOR)
            return None
        if receiver.kind == LOSS and attr == "forward":
            return Held(TENSOR)
        if receiver.kind == TENSOR:
            if attr == "numpy":
                return Held(NDARRAY)
            if attr in NON_TENSOR_METHODS:
                return None
            # ``.to()``/``.float()`` keep what the tensor is; any other method makes a new one
            keeps = attr in (
                "to",
                "cuda",
                "cpu",
                "float",
                "double",
                "half",
                "contiguous",
                "detach",
                "clone",
                "squeeze",
                "unsqueeze",
                "view",
                "reshape",
                "flatten",
                "requires_grad_",
            )
            return Held(TENSOR, receiver.what if keeps else attr)
        if receiver.kind == NDARRAY:
            return None if attr in ("tolist", "item") else Held(NDARRAY, attr)
        if receiver.kind == LOADER and attr == "__iter__":
            return receiver
        return None

    def _iterated_loader(self, call: ast.Call, chain, line, klass, d) -> Held | None:
        """``loader.__iter__()`` on a loader only its name tells (a parameter, ``self.train_loader``),
        as ``iter(train_loader)`` is read."""
        receiver = call.func.value
        if (
            self.held(receiver, chain, line, klass, d) is None
            and _name_of(receiver)
            and LOADER_NAME.search(_name_of(receiver))
        ):
            return Held(LOADER)
        return None

    def _output_of(self, callee: Held, func, chain, line, klass, d) -> str | None:
        """What calling a module gives, where it can be told: ``softmax`` for nn.Softmax, a
        Sequential that ends in one, or a class of this file whose forward returns one."""
        what = callee.what or ""
        last = what.rsplit(".", 1)[-1]
        if last in PROBABILITY_OPS:
            return last.lower()
        if what in LINEAR_LAYERS:
            return LINEAR  # raw scores: no activation after the last layer
        if what == "torch.nn.Sequential":
            ctor = self._constructor(func, chain, line, klass)
            if ctor is None and isinstance(func, ast.Name) and d < 12:  # a parameter: what every call hands it
                binding, owner = self.lookup(func.id, chain, line)
                if binding is not None and binding.how == "param":
                    sites = self.passed(owner[0], func.id) or ()
                    outs = {self._output_of(callee, value, c, at, k, d + 1) for value, c, at, k in sites}
                    return outs.pop() if len(outs) == 1 else None
            where = chain
            if isinstance(func, ast.Attribute) and klass is not None and getattr(func.value, "id", None) == "self":
                attrs = self.self_attributes(klass).get(func.attr) or []  # self.mlp = nn.Sequential(*layers)
                where = (attrs[0][0], self.tree) if attrs else chain  # read in the method that built it
            while (  # make_model(n).to(device): the module the call returns
                ctor is not None
                and isinstance(ctor.func, ast.Attribute)
                and ctor.func.attr in MODULE_SELF_METHODS
                and isinstance(ctor.func.value, ast.Call)
            ):
                ctor = ctor.func.value
            if ctor is not None and not self._is_sequential(ctor):  # model = make_model(...): what it returns
                fn = self._local_function(ctor, chain, line)
                returned = (returned_values(fn) or []) if fn is not None else []
                ctor = returned[0][0] if len(returned) == 1 and isinstance(returned[0][0], ast.Call) else None
                where = (fn, self.tree) if fn is not None else chain
            if ctor is not None and ctor.args:
                tail_node = self._last_layer(ctor.args[-1], where)
                tail = self.held(tail_node, where, getattr(tail_node, "lineno", line) + 1, klass, d)
                if tail is not None and (tail.what or "").rsplit(".", 1)[-1] in PROBABILITY_OPS:
                    return (tail.what or "").rsplit(".", 1)[-1].lower()
            return None
        cls = self.classes().get(what)
        if cls is not None:
            forward = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "forward"), None)
            if forward is not None:
                returns = [n.value for n in walk(forward) if isinstance(n, ast.Return) and n.value is not None]
                outs = {(self.held(r, (forward, self.tree), r.lineno + 1, cls, d) or Held("")).what for r in returns}
                if len(outs) == 1 and (next(iter(outs)) or "") in ("softmax", "sigmoid", LINEAR):
                    return next(iter(outs))
        return None

    def _is_sequential(self, call) -> bool:
        return self.qualify(call.func) in ("torch.nn.Sequential", "torch.nn.modules.container.Sequential")

    def _last_layer(self, arg, chain):
        """The last layer a Sequential is given: the argument itself, or for ``Sequential(*layers)`` the last
        element added to the list ``layers`` in its function (``layers += [..., nn.Sigmoid()]``,
        ``layers.append(...)``), where those statements can be read in order."""
        if not (isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name) and chain):
            return arg
        name, last = arg.value.id, None
        statements = [n for n in _own_nodes(chain[0]) if hasattr(n, "lineno")]
        for node in sorted(statements, key=lambda n: (n.lineno, n.col_offset)):
            if node.lineno > arg.lineno:
                break
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
                last = node.value.elts[-1] if isinstance(node.value, ast.List) and node.value.elts else None
            elif isinstance(node, ast.Assign) and any(  # layers, width = [], n: a new (empty) list
                isinstance(t, ast.Tuple) and any(getattr(e, "id", None) == name for e in t.elts) for t in node.targets
            ):
                last = None
            elif isinstance(node, ast.AugAssign) and getattr(node.target, "id", None) == name:
                last = node.value.elts[-1] if isinstance(node.value, ast.List) and node.value.elts else None
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append"
                and getattr(node.func.value, "id", None) == name
                and node.args
            ):
                last = node.args[0]
        return last if last is not None else arg

    def _constructor(self, node, chain, line, klass) -> ast.Call | None:
        """The call that built what ``node`` names (through one name or ``self.`` attribute)."""
        if isinstance(node, ast.Call):
            return node
        if isinstance(node, ast.Name):
            value = self.value_of(node.id, chain, line)
            return value if isinstance(value, ast.Call) else None
        if isinstance(node, ast.Attribute) and klass is not None and getattr(node.value, "id", None) == "self":
            attrs = self.self_attributes(klass).get(node.attr)
            return attrs[0][1] if attrs and isinstance(attrs[0][1], ast.Call) else None
        return None


_TUPLE_MODULES = (
    "RNN",
    "LSTM",
    "GRU",
    "MultiheadAttention",
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AdaptiveMaxPool2d",
    "AdaptiveLogSoftmaxWithLoss",
)


def returned_values(fn, index: int | None = None) -> list[tuple[ast.AST, int]] | None:
    """(expression, line) of every ``return`` of ``fn`` that returns something (element ``index`` of a
    returned tuple or list); None where a return has no such element."""
    values = []
    for node in _own_nodes(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if index is not None:
                if not (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) > index):
                    return None
                value = value.elts[index]
            values.append((value, node.lineno))
    return values


def _own_nodes(fn):
    """The nodes of a function's body, not those of the functions, classes and lambdas inside it."""
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        yield node
        for child in children(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                todo.append(child)


_LISTED_CONTAINERS = ("torch.nn.ModuleList", "torch.nn.Sequential")


def _assigned_pairs(node):
    """(target, value) of an assignment, element by element where a tuple is assigned a tuple of its length
    (``self.a, self.b = a, b``); a tuple target assigned anything else is left out."""
    for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
        if isinstance(target, (ast.Tuple, ast.List)):
            value = node.value
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                yield from zip(target.elts, value.elts)
        else:
            yield target, node.value


def _single_tensor_module(held: Held) -> bool:
    """A torch.nn layer whose call returns one tensor (not an RNN's (output, state), not a user model's
    outputs, which may be a tuple); a loss returns one tensor."""
    if held.kind == LOSS:
        return True
    what = held.what or ""
    return (
        what.startswith("torch.nn.") and what.rsplit(".", 1)[-1] not in _TUPLE_MODULES and what != "torch.nn.Sequential"
    )


def _dict_view(node, *views: str) -> bool:
    """``d.values()`` / ``d.items()`` (whichever ``views`` names), called without arguments."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in views
        and not node.args
        and not node.keywords
    )


def _inside(binding: Binding, line: int) -> bool:
    """``line`` lies in the binding's own right-hand side (``x = (torch.tensor(x)\n  .view(...))``): the
    statement has not bound the name yet there."""
    value = binding.value
    return (
        binding.how in ("assign", "item")
        and value is not None
        and getattr(value, "lineno", line + 1) <= line <= getattr(value, "end_lineno", 0)
    )


def _name_of(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None
