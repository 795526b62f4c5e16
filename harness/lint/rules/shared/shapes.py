"""The shape of a tensor as the code shows it, for rules that compare a prediction's shape with a target's:
(N, 1), (N,), a number, a table (N, k), or unknown; through names, a loader's batches (shared/batches.py), a
module's output (a model ending in Linear(_, 1), an nn.Sequential a builder fills), pandas columns and NumPy
arrays. Read by PTF241 (the (N, 1) against (N,) broadcast) and PTF024 (one class index per sample)."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import _arg, _const
from torch_pitfalls.lint.rules.shared.batches import batch_field_sources, batch_sources
from torch_pitfalls.lint.walking import walk

COL, VEC, SCALAR, MAT = "col", "vec", "scalar", "mat"  # (N, 1), (N,), a number, and a table (N, k)
NOT_VEC = "not-vec"  # an axis of size 1 added to a tensor of unknown shape (y.unsqueeze(1)): whatever it is, not (N,)
# methods and functions that keep a tensor's (or array's) shape
_KEEP = frozenset(
    """to cuda cpu float double half bfloat16 long int detach clone copy contiguous type requires_grad_ astype fill_
normal_ uniform_ zero_
to_numpy numpy sigmoid tanh relu exp log log1p abs sqrt clamp clip neg expm1""".split()
)
_ELEMENTWISE = frozenset(
    """sigmoid tanh relu exp log log1p abs sqrt expm1 float32 array asarray ascontiguousarray tensor as_tensor
from_numpy FloatTensor Tensor DoubleTensor clamp clip softplus leaky_relu gelu elu""".split()
)
_ACTIVATIONS = frozenset("Sigmoid Tanh ReLU Softplus Identity Dropout LeakyReLU GELU ELU Hardtanh ReLU6".split())
_FACTORIES = ("zeros", "ones", "empty", "rand", "randn", "full")
_FRAMES = ("pandas.read_csv", "pandas.read_excel", "pandas.read_parquet", "pandas.read_json", "pandas.DataFrame")
_FRAME_METHODS = frozenset(
    "dropna fillna copy reset_index sample drop astype query sort_values select_dtypes head tail loc iloc".split()
)


class Shapes:
    """The shape an expression has, where the code shows it: (N, 1), (N,) or unknown (None)."""

    def __init__(self, ctx):
        self.ctx, self.b = ctx, ctx.bindings

    # --- names -------------------------------------------------------------------------
    def of(self, node, chain, line, klass, d=0):  # noqa: C901 - one branch per kind of expression
        if node is None or d > 20:
            return None
        d += 1
        if isinstance(node, ast.Name):
            return self._name(node.id, chain, line, klass, d)
        if isinstance(node, (ast.List, ast.Tuple)):
            return _literal(node)
        if isinstance(node, ast.Attribute):
            if node.attr == "values" and _named_column(node.value):
                return VEC  # df["price"].values: only pandas has .values of one named column
            if node.attr in ("values", "data"):
                return self.of(node.value, chain, line, klass, d)
            if getattr(node.value, "id", None) == "self" and klass is not None:  # self.y, set once
                attrs = self.b.self_attributes(klass).get(node.attr) or []
                if len(attrs) == 1:
                    method, value, at = attrs[0]
                    return self.of(value, (method, self.b.tree), at, klass, d)
            return self._batch_field(node, chain, line, d)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, chain, line, klass, d)
        if isinstance(node, ast.Constant):
            return SCALAR if type(node.value) in (int, float) else None
        if isinstance(node, ast.BinOp):
            sides = [self.of(s, chain, line, klass, d) for s in (node.left, node.right)]
            if isinstance(node.op, ast.MatMult):
                return COL if sides[1] == COL else None  # (N, k) @ (k, 1)
            if sides[0] == SCALAR:
                return sides[1]
            if sides[1] == SCALAR:
                return sides[0]
            if MAT in sides and all(side in (MAT, None) for side in sides):
                return MAT  # (values - mean) / std: broadcasting keeps a table a table
            return sides[0] if sides[0] == sides[1] else None
        if isinstance(node, ast.Call):
            return self._call(node, chain, line, klass, d)
        return None

    def _name(self, name, chain, line, klass, d):
        binding, where = self.b.lookup(name, chain, line)
        if binding is None:
            return None
        if binding.how == "assign":
            return self.of(binding.value, where, binding.line, klass, d)
        if binding.how == "item" and isinstance(binding.value, ast.Call) and binding.index is not None:
            q = self.ctx.qualified(binding.value.func) or ""
            if q.endswith("train_test_split") and len(binding.value.args) > binding.index // 2:
                return self.of(binding.value.args[binding.index // 2], where, binding.line, klass, d)
            fn = self.b._local_function(binding.value, where, binding.line)  # x, y = get_batch()
            returns = returned_values(fn, binding.index) if fn is not None else None
            if returns:
                found = {self.of(v, (fn, self.b.tree), at + 1, None, d) for v, at in returns}
                return found.pop() if len(found) == 1 else None
            return None
        if binding.how == "iter":
            return self._batch_element(name, binding, where, klass, d)
        if binding.how == "param":  # a loss helper's argument: what every call of the module passes
            sites = self.b.passed(where[0], name) or []
            found = {self.of(v, caller, at, owner, d) for v, caller, at, owner in sites}
            return found.pop() if len(found) == 1 else None
        return None

    def _batch_field(self, node, chain, line, d):
        """``batch.y`` / ``batch["y"]`` of a whole batch: the per-sample values its collate stacks there
        (shared/batches.py)."""
        return self._batched(batch_field_sources(node, chain, line, self.ctx), None, d)

    def _batch_element(self, name, binding, where, klass, d):
        """``for xb, yb in loader``: a batch of a Dataset class's per-sample numbers is (N,); of a
        TensorDataset's tensor, that tensor's rows (shared/batches.py reads the loader)."""
        return self._batched(batch_sources(name, binding, where, self.ctx), klass, d)

    def _batched(self, sources, klass, d):
        """The shape of a batch made of these sources: (N,) from one number per sample; a tensor's rows as
        that tensor is; None where they disagree or are not known."""
        if not sources:
            return None
        found = {
            (VEC if self.of(s.expr, s.chain, s.line, s.klass, d) == SCALAR else None)
            if s.kind == "sample"
            else self.of(s.expr, s.chain, s.line, klass, d)
            for s in sources
        }
        return found.pop() if len(found) == 1 else None

    # --- expressions -------------------------------------------------------------------
    def _subscript(self, node, chain, line, klass, d):
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        if len(parts) == 2 and isinstance(parts[0], ast.Slice) and parts[0].lower is None and parts[0].upper is None:
            last = parts[1]
            if _const(last, None) or (isinstance(last, ast.Attribute) and last.attr == "newaxis"):
                return COL if self.of(node.value, chain, line, klass, d) == VEC else None
            if self._position(last, chain, line, klass, d):  # x[:, 0], table[:, FEATURES.index("power")]
                return VEC if self.of(node.value, chain, line, klass, d) in (COL, MAT) else None
            return None
        if all(self._position(p, chain, line, klass, d) for p in parts):  # one element: y[i], table[i, 0]
            if len(parts) == 1:
                appended = self._appended(node.value, chain, line, klass, d)
                if appended is not None:  # series[s]: one of the arrays a list was filled with
                    return appended
            rank = {VEC: 1, COL: 2, MAT: 2}.get(self.of(node.value, chain, line, klass, d))
            return SCALAR if rank == len(parts) else None
        if len(parts) == 1 and self._columns(parts[0], chain, line):
            return MAT  # df[FEATURES]: only a DataFrame is indexed by a list of names, and gives a table
        if len(parts) == 1 and isinstance(parts[0], ast.Slice):  # a slice of the rows keeps the shape
            return self.of(node.value, chain, line, klass, d)
        if len(parts) == 1 and isinstance(parts[0], ast.Constant) and isinstance(parts[0].value, str):
            if self._frame(node.value, chain, line, d):
                return VEC  # df["price"]: one column
            return self._batch_field(node, chain, line, d)  # batch["price"]: a field of a whole batch
        return None

    def _appended(self, container, chain, line, klass, d):
        """The shape every value appended to a list shares: ``self.series = []`` then
        ``self.series.append(g[FEATURES].to_numpy())`` in the class (or a name and its scope); else None."""
        if (
            isinstance(container, ast.Attribute)
            and getattr(container.value, "id", None) == "self"
            and klass is not None
        ):
            attrs = self.b.self_attributes(klass).get(container.attr) or []
            made = [v for _, v, _ in attrs]
            scopes = [m for m in klass.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
        elif isinstance(container, ast.Name):
            binding, where = self.b.lookup(container.id, chain, line)
            if binding is None or binding.how != "assign":
                return None
            made, scopes = [binding.value], [where[0]]
        else:
            return None
        if not (len(made) == 1 and isinstance(made[0], ast.List) and not made[0].elts):
            return None
        key = ast.dump(container)
        shapes = {
            self.of(n.args[0], (scope, self.b.tree), n.lineno, klass, d)
            for scope in scopes
            for n in walk(scope)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "append"
            and len(n.args) == 1
            and ast.dump(n.func.value) == key
        }
        return shapes.pop() if len(shapes) == 1 else None

    def _position(self, index, chain, line, klass, d) -> bool:
        """An index that picks one position: an int, arithmetic on names (``s + WINDOW - 1``), or a name
        not known to hold an array (a sample's index)."""
        if isinstance(index, ast.Constant):
            return type(index.value) is int
        if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):  # x[:, -1]: the last column
            return isinstance(index.operand, ast.Constant) and type(index.operand.value) is int
        if isinstance(index, ast.BinOp):  # i + self.history - 1: an offset of a sample's index
            return all(
                self._position(side, chain, line, klass, d)
                or (isinstance(side, ast.Attribute) and self.of(side, chain, line, klass, d) in (None, SCALAR))
                for side in (index.left, index.right)
            )
        if isinstance(index, ast.Name):
            return self.of(index, chain, line, klass, d) in (None, SCALAR) and not self._columns(index, chain, line)
        if isinstance(index, ast.Attribute):  # self.history: only where it is known to hold a number
            return self.of(index, chain, line, klass, d) == SCALAR
        # len(x), int(k), FEATURES.index("power"): a number
        return isinstance(index, ast.Call) and (
            getattr(index.func, "id", None) in ("len", "int") or getattr(index.func, "attr", None) == "index"
        )

    def _columns(self, node, chain, line) -> bool:
        """A list of column names (``["load", "temp"]``, or a name bound to one)."""
        if isinstance(node, ast.Name):
            node = self.b.value_of(node.id, chain, line)
        return (
            isinstance(node, ast.List)
            and bool(node.elts)
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
        )

    def _call(self, node, chain, line, klass, d):  # noqa: C901 - one branch per kind of call
        func = node.func
        q = self.ctx.qualified(func) or ""
        last = q.rsplit(".", 1)[-1] if q else getattr(func, "attr", getattr(func, "id", ""))
        if not q and isinstance(func, ast.Name):  # Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
            q = self._tensor_type(func, chain, line)
            last = q.rsplit(".", 1)[-1]
        if q in ("torch.autograd.Variable", "torch.autograd.variable.Variable") and node.args:
            return self.of(node.args[0], chain, line, klass, d)
        if q.startswith("torch.") and last.endswith("Tensor") and last != "Tensor" and len(node.args) >= 2:
            return _factory_shape(node)  # torch.FloatTensor(n, 1): a size
        if isinstance(func, ast.Name) and func.id in ("float", "int") and len(node.args) == 1 and not q:
            return SCALAR  # float(self.gaps[i]): one number, whatever it was read from
        if q.startswith(("torch.", "numpy.")):
            if last in ("mm", "matmul") and len(node.args) == 2:
                return COL if self.of(node.args[1], chain, line, klass, d) == COL else None
            if last in _FACTORIES and node.args:
                return _factory_shape(node)
            if last in _ELEMENTWISE and node.args:
                return self.of(node.args[0], chain, line, klass, d)
            if last in ("view_as", "reshape_as") and len(node.args) == 2:
                return self.of(node.args[1], chain, line, klass, d)
            return None
        if q:
            return None
        if isinstance(func, ast.Attribute):
            receiver = func.value
            attr = func.attr
            if attr == "to_numpy" and _named_column(receiver):
                return VEC
            if attr in _KEEP:
                return self.of(receiver, chain, line, klass, d)
            if attr == "item" and not node.args:
                return SCALAR
            if attr in ("mm", "matmul") and len(node.args) == 1:
                return COL if self.of(node.args[0], chain, line, klass, d) == COL else None
            if attr in ("squeeze",):
                if node.args and not (_int_const(node.args[0], 1) or _int_const(node.args[0], -1)):
                    return None
                return VEC if self.of(receiver, chain, line, klass, d) == COL else None
            if attr in ("flatten", "ravel") and not node.args:
                return VEC
            if attr in ("view", "reshape"):
                dims = node.args[0].elts if len(node.args) == 1 and isinstance(node.args[0], ast.Tuple) else node.args
                if len(dims) == 1 and _int_const(dims[0], -1):
                    return VEC
                if len(dims) == 2 and _int_const(dims[1], 1):
                    return COL
                return None
            if attr == "unsqueeze" and node.args and (_int_const(node.args[0], 1) or _int_const(node.args[0], -1)):
                inner = self.of(receiver, chain, line, klass, d)
                return COL if inner == VEC else (NOT_VEC if inner is None else None)
            if attr in ("view_as", "reshape_as", "expand_as") and node.args:
                return self.of(node.args[0], chain, line, klass, d)
            if attr == "pop" and node.args and isinstance(node.args[0], ast.Constant):
                return VEC if self._frame(receiver, chain, line, d) else None
        fn = self.b._local_function(node, chain, line)  # y = f(x), a function of this module
        if fn is not None:
            returns = returned_values(fn) or []
            found = {self.of(v, (fn, self.b.tree), at + 1, None, d) for v, at in returns}
            return found.pop() if len(found) == 1 else None
        held = self.b.held(func, chain, line, klass)
        if held is not None and held.kind == "module":
            if node.args and self.of(node.args[0], chain, line, klass, d) == VEC:
                return None  # one unbatched sample: Linear(k, 1) gives (1,)
            return COL if self._one_output(func, held, chain, line, klass, d) else None
        return None

    def _tensor_type(self, func, chain, line) -> str:
        value = self.b.value_of(func.id, chain, line)
        if isinstance(value, ast.IfExp):
            names = {self.ctx.qualified(value.body), self.ctx.qualified(value.orelse)}
            names = {(n or "").replace("torch.cuda.", "torch.") for n in names}
            if len(names) == 1:
                return names.pop()
        return ""

    # --- a model with one output --------------------------------------------------------
    def _one_output(self, func, held, chain, line, klass, d) -> bool:
        what = held.what or ""
        if what in ("torch.nn.Linear", "torch.nn.LazyLinear", "torch.nn.Sequential"):
            found = self._module_ctor(func, chain, line, klass)
            return found is not None and self._ctor_one_output(found[0], found[1], klass, d)
        cls = self.b.classes().get(what)
        if cls is None:
            return False
        forward = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "forward"), None)
        returns = returned_values(forward) if forward is not None else None
        return bool(returns) and all(self.of(v, (forward, self.b.tree), at + 1, cls, d + 1) == COL for v, at in returns)

    def _module_ctor(self, func, chain, line, klass):
        """(the call that built the module ``func`` names, the scopes it is in), or None."""
        ctor = None
        if isinstance(func, ast.Name):
            binding, where = self.b.lookup(func.id, chain, line)
            if binding is not None and binding.how == "assign":
                ctor, chain = binding.value, where
        elif isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self" and klass is not None:
            attrs = self.b.self_attributes(klass).get(func.attr) or []
            if len(attrs) == 1:
                method, ctor, _at = attrs[0]
                chain = (method, self.b.tree)
        while (
            isinstance(ctor, ast.Call)
            and isinstance(ctor.func, ast.Attribute)
            and ctor.func.attr in ("to", "cuda", "cpu", "float", "double")
        ):
            ctor = ctor.func.value
        return (ctor, chain) if isinstance(ctor, ast.Call) else None

    def _ctor_one_output(self, ctor, chain, klass, d) -> bool:
        q = self.ctx.qualified(ctor.func) or ""
        if q in ("torch.nn.Linear", "torch.nn.LazyLinear"):
            out = _arg(ctor, 0 if q.endswith("LazyLinear") else 1, "out_features")
            return _int_const(out, 1)
        if not q and d < 20:  # model = build_mlp(...): what the function of this file returns
            fn = self.b._local_function(ctor, chain, ctor.lineno)
            inner = (fn, self.b.tree)
            calls = [self._value_call(v, inner, at + 1) for v, at in returned_values(fn) or []] if fn else []
            return bool(calls) and all(c is not None and self._ctor_one_output(c, inner, klass, d + 1) for c in calls)
        if q == "torch.nn.Sequential" and len(ctor.args) == 1 and isinstance(ctor.args[0], ast.Starred):
            last = _last_listed(ctor.args[0].value, chain, ctor.lineno, self.ctx)
            return last is not None and self._ctor_one_output(last, chain, klass, d + 1)
        if q == "torch.nn.Sequential" and ctor.args and not any(isinstance(a, ast.Starred) for a in ctor.args):
            for layer in reversed(ctor.args):
                if not isinstance(layer, ast.Call):
                    return False
                lq = self.ctx.qualified(layer.func) or ""
                if lq.startswith("torch.nn.") and lq.rsplit(".", 1)[-1] in _ACTIVATIONS:
                    continue
                return self._ctor_one_output(layer, chain, klass, d)
        return False

    def _value_call(self, value, chain, line):
        """The call ``value`` is, or that the name ``value`` was last assigned, else None."""
        if isinstance(value, ast.Name):
            value = self.b.value_of(value.id, chain, line)
        return value if isinstance(value, ast.Call) else None

    # --- pandas -------------------------------------------------------------------------
    def _frame(self, node, chain, line, d) -> bool:
        """A pandas DataFrame: read or built by pandas, a method of one that returns one, or a function of
        this module that returns one."""
        if d > 20:
            return False
        d += 1
        if isinstance(node, ast.Name):
            binding, where = self.b.lookup(node.id, chain, line)
            return (
                binding is not None and binding.how == "assign" and self._frame(binding.value, where, binding.line, d)
            )
        if not isinstance(node, ast.Call):
            return False
        q = self.ctx.qualified(node.func) or ""
        if q in _FRAMES or q == "pandas.get_dummies":
            return True
        if isinstance(node.func, ast.Attribute) and node.func.attr in _FRAME_METHODS and not q:
            return self._frame(node.func.value, chain, line, d)
        fn = self.b._local_function(node, chain, line)
        if fn is None:
            return False
        returns = returned_values(fn) or []
        return bool(returns) and all(self._frame(v, (fn, self.b.tree), at + 1, d) for v, at in returns)


def _last_listed(name, chain, line, ctx):
    """The last layer of the list ``nn.Sequential(*layers)`` unpacks, where the function that builds it
    shows it: ``layers = []``, then ``layers += [...]`` / ``layers.append(...)`` / ``layers.extend([...])``
    in loops, the last statement that adds to it in the function's own body (not under a loop or an if),
    activations skipped; None where it cannot be told."""
    if not (isinstance(name, ast.Name) and chain and isinstance(chain[0], (ast.FunctionDef, ast.AsyncFunctionDef))):
        return None
    added: list = []  # what each statement adds, in order; None for a loop that adds (its last is not told)
    for stmt in chain[0].body:
        if getattr(stmt, "lineno", line) >= line:
            break
        layers = _added_layers(stmt, name.id)
        if layers is not None:
            added.append(layers)
        elif isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == [name.id]:
            added = [list(stmt.value.elts)] if isinstance(stmt.value, ast.List) else [None]
        elif any(isinstance(n, ast.Name) and n.id == name.id for n in walk(stmt)):
            added.append(None)  # a loop or an if that adds, or another use: what it leaves last is not told
    for layers in reversed(added):
        if layers is None:
            return None
        for layer in reversed(layers):
            lq = (ctx.qualified(layer.func) or "") if isinstance(layer, ast.Call) else ""
            if lq.startswith("torch.nn.") and lq.rsplit(".", 1)[-1] in _ACTIVATIONS:
                continue
            return layer if isinstance(layer, ast.Call) else None
    return None


def _added_layers(stmt, name):
    """The layers one statement of the function's body adds to the list ``name`` (a list of calls), or None
    for a statement that adds nothing to it at this level."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if isinstance(call.func, ast.Attribute) and getattr(call.func.value, "id", None) == name and call.args:
            if call.func.attr == "append":
                return [call.args[0]]
            if call.func.attr == "extend" and isinstance(call.args[0], (ast.List, ast.Tuple)):
                return list(call.args[0].elts)
    if (
        isinstance(stmt, ast.AugAssign)
        and isinstance(stmt.op, ast.Add)
        and getattr(stmt.target, "id", None) == name
        and isinstance(stmt.value, (ast.List, ast.Tuple))
    ):
        return list(stmt.value.elts)
    return None


def _named_column(node) -> bool:
    """``x["price"]``: one column picked by its name."""
    return (
        isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
    )


def _int_const(node, value) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return type(node.operand.value) is int and -node.operand.value == value
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == value


def _number(node) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _literal(node):
    """A list literal of numbers: (N,); of one-number rows: (N, 1)."""
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        return None
    if all(_number(e) or (isinstance(e, ast.Call) and getattr(e.func, "id", None) == "float") for e in node.elts):
        return VEC
    if all(isinstance(e, (ast.List, ast.Tuple)) and len(e.elts) == 1 and _number(e.elts[0]) for e in node.elts):
        return COL
    return None


def _factory_shape(node):
    """``torch.zeros(n)`` (N,); ``torch.zeros(n, 1)`` or ``torch.zeros((n, 1))``: (N, 1)."""
    packed = len(node.args) == 1 and isinstance(node.args[0], (ast.Tuple, ast.List))
    dims = node.args[0].elts if packed else node.args
    if any(isinstance(a, ast.Starred) for a in dims):
        return None
    if len(dims) == 1:  # a name or an attribute may hold a whole size (``torch.zeros(x.shape)``)
        return None if isinstance(dims[0], (ast.Tuple, ast.List, ast.Name, ast.Attribute, ast.Starred)) else VEC
    if len(dims) == 2 and _int_const(dims[1], 1):
        return COL
    return None
