"""Command-line options as rules read them: what ``args.x`` holds when the script runs with its
defaults, from the file's own ``parser.add_argument("--x", default=...)``."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _bound_once, _values
from torch_pitfalls.lint.walking import kept_on, walk


def _dest(call) -> str | None:
    """The attribute an ``add_argument`` call fills: ``dest=``, else its first long flag (``--num-workers``
    -> ``num_workers``), else a positional name."""
    dest = _kw(call, "dest")
    if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
        return dest.value
    flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    long = [f for f in flags if f.startswith("--")]
    if long:
        return long[0][2:].replace("-", "_")
    return flags[0] if flags and not flags[0].startswith("-") else None


def option_default(expr, ctx, chain=None, line: int | None = None):
    """The default of the option ``expr`` reads (``args.workers`` where ``args = parser.parse_args()``,
    or ``args = parse_args()``, a function of the file returning it), looked up in ``chain`` (default:
    where the rule is): the ``default=`` expression of the one ``add_argument`` that fills it, a ``None``
    constant where it gives none; None where it cannot be told (not an option, declared twice, no
    declaration here)."""
    if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)):
        return None
    chain = chain if chain is not None else ctx.chain()
    parsed = ctx.bindings.value_of(expr.value.id, chain, line if line is not None else expr.lineno)
    if not _parses_options(parsed, ctx):
        return None
    found = _declared(expr.attr, ctx)
    if len(found) != 1:
        return None
    default = _kw(found[0], "default")
    if default is not None:
        return default
    action = _kw(found[0], "action")  # a flag's default is the opposite of what it stores
    if isinstance(action, ast.Constant) and action.value in ("store_true", "store_false"):
        return ast.Constant(action.value == "store_false")
    return ast.Constant(None)


def default_truth(test, ctx, chain=None, line: int | None = None):
    """What a test of options gives when the script runs with its defaults: ``args.precision == "fp16"``,
    ``args.flag`` (``store_true``: False), ``not args.flag``; None where it is not such a test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = default_truth(test.operand, ctx, chain, line)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq)):
        left, right = test.left, test.comparators[0]
        if isinstance(left, ast.Constant):
            left, right = right, left
        default = option_default(left, ctx, chain, line)
        if isinstance(default, ast.Constant) and isinstance(right, ast.Constant):
            return (default.value == right.value) == isinstance(test.ops[0], ast.Eq)
        return None
    default = option_default(test, ctx, chain, line)
    if default is None:
        return None
    declared = _declared(test.attr, ctx)
    action = _kw(declared[0], "action") if declared else None
    if (
        isinstance(action, ast.Constant)
        and action.value in ("store_true", "store_false")
        and _kw(declared[0], "default") is None
    ):
        return action.value == "store_false"
    return bool(default.value) if isinstance(default, ast.Constant) else None


def _parses_options(value, ctx, depth: int = 0) -> bool:
    """``parser.parse_args()`` (or ``parse_known_args()[0]``), or a call of a function of this file whose
    every return is one (``def parse_args(): ...; return p.parse_args()``)."""
    if isinstance(value, ast.Subscript):  # args = parser.parse_known_args()[0]
        value = value.value
    if _method(value, "parse_args", "parse_known_args"):
        return True
    fn = (
        ctx.bindings.module_function(value.func.id)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
        else None
    )
    if fn is None or depth > 2:
        return False
    returned = returned_values(fn)
    return bool(returned) and all(
        _parses_options(
            ctx.bindings.value_of(v.id, (fn, ctx.module), at) if isinstance(v, ast.Name) else v, ctx, depth + 1
        )
        for v, at in returned
    )


# --- the numbers an expression may hold (a learning rate, a weight decay) ---------------------------
def _number(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    return None


def _options(tree) -> dict[str, list[ast.Call]]:
    """The file's ``add_argument`` calls by the attribute they fill (kept on the module)."""
    found: dict[str, list[ast.Call]] = {}
    for n in walk(tree):
        if _method(n, "add_argument"):
            dest = _dest(n)
            if dest:
                found.setdefault(dest, []).append(n)
    return found


def _numbers(expr, ctx, line: int, depth: int = 0) -> list[float] | None:
    """Every number ``expr`` may hold: a literal, a name bound to one (a module constant, a parameter
    every call of the module gives one), ``cfg["key"]`` of a dict literal, ``args.x`` of a parsed option
    with a literal default; None where something else may be given."""
    if depth > 4:
        return None
    value = _number(expr)
    if value is not None:
        return [value]
    if isinstance(expr, ast.Name):
        held = _values(expr.id, ctx.chain(), line, ctx.bindings)
        if not held or any(isinstance(v, ast.Name) and v.id == expr.id for v in held):
            return None
        out = []
        for v in held:
            inner = _numbers(v, ctx, line, depth + 1) if not isinstance(v, ast.Name) else None
            if inner is None:
                return None
            out += inner
        return out
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name):
        key = expr.slice
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None
        bases = _values(expr.value.id, ctx.chain(), line, ctx.bindings)
        if not bases or not all(isinstance(b, ast.Dict) for b in bases):
            return None
        out = []
        for d in bases:
            given = [v for k, v in zip(d.keys, d.values) if isinstance(k, ast.Constant) and k.value == key.value]
            found = _number(given[0]) if len(given) == 1 else None
            if found is None:
                return None
            out.append(found)
        return out
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        parsed = _values(expr.value.id, ctx.chain(), line, ctx.bindings)
        parsed = [p.value if isinstance(p, ast.Subscript) else p for p in parsed or ()]
        if parsed and all(_method(p, "parse_args", "parse_known_args") for p in parsed):
            return _option_number(expr.attr, ctx)
        return _field_numbers(expr, parsed, ctx, line)
    return _placeless_numbers(expr, ctx)


def _declared(dest: str, ctx) -> list[ast.Call]:
    """The file's ``add_argument`` calls that fill ``dest`` (the map is read once per file)."""
    return kept_on(ctx.module, "_options_by_dest", _options).get(dest, [])


def _option_number(dest: str, ctx) -> list[float] | None:
    """The literal default of the one option that fills ``dest``, followed to a class's default
    (``default=Config.lr``)."""
    declared = _declared(dest, ctx)
    default = _kw(declared[0], "default") if len(declared) == 1 else None
    return _placeless_numbers(default, ctx) if default is not None else None


def _placeless_numbers(expr, ctx) -> list[float] | None:
    """Numbers read without a scope: a literal, ``parser.parse_args().x`` (its option's default), or
    ``Config.x`` for a class of this file (its default)."""
    value = _number(expr)
    if value is not None:
        return [value]
    if not isinstance(expr, ast.Attribute):
        return None
    if _method(expr.value, "parse_args", "parse_known_args"):
        return _option_number(expr.attr, ctx)
    klass = _module_class(expr.value, ctx)
    return _class_default(klass, expr.attr, ctx) if klass is not None else None


def _module_class(node, ctx) -> ast.ClassDef | None:
    """The class of this file a name stands for at module level (defined once)."""
    if not isinstance(node, ast.Name):
        return None
    binding, where = ctx.bindings.lookup(node.id, (ctx.module,), 10**9)
    if (
        binding is None
        or not isinstance(binding.value, ast.ClassDef)
        or not _bound_once(node.id, where[0], ctx.bindings)
    ):
        return None
    return binding.value


def _field_numbers(expr: ast.Attribute, held, ctx, line: int) -> list[float] | None:
    """``cfg.lr`` where every value ``cfg`` may hold is built by a class of this file (``main(Config(...))``),
    or ``Config.lr`` itself: what each construction passes by keyword, else the class's default (a config
    dataclass's field). None where a construction passes arguments by position or unpacks a dict."""
    binding, _ = ctx.bindings.lookup(expr.value.id, ctx.chain(), line)
    if binding is not None and isinstance(binding.value, ast.ClassDef):
        klass = _module_class(expr.value, ctx)
        return _class_default(klass, expr.attr, ctx) if klass is binding.value else None
    made = [(h, _module_class(h.func, ctx)) for h in held or () if isinstance(h, ast.Call)]
    if not made or len(made) != len(held):
        return None
    out = []
    for call, klass in made:
        if klass is None or call.args or any(k.arg is None for k in call.keywords):
            return None
        given = _kw(call, expr.attr)
        found = _placeless_numbers(given, ctx) if given is not None else _class_default(klass, expr.attr, ctx)
        if found is None:
            return None
        out += found
    return out


def _class_default(klass: ast.ClassDef, attr: str, ctx) -> list[float] | None:
    """The number a class declares for ``attr`` (``lr: float = 1e-3``, ``lr = field(default=1e-3)``), where
    none of its methods sets ``self.attr`` (an ``__init__`` of its own would decide it)."""
    if attr in ctx.bindings.self_attributes(klass):
        return None
    value = None
    for stmt in klass.body:
        if isinstance(stmt, ast.AnnAssign) and getattr(stmt.target, "id", None) == attr:
            value = stmt.value
        elif isinstance(stmt, ast.Assign) and any(getattr(t, "id", None) == attr for t in stmt.targets):
            value = stmt.value
    if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", None)) == "field":
        value = _kw(value, "default")
    found = _number(value) if value is not None else None
    return [found] if found is not None else None


_CASTS = {"int": int, "float": float, "str": str}
_ENVIRONMENT = ("os.environ.get", "os.getenv")


def default_constant(expr, ctx, chain=None, line: int | None = None, depth: int = 0):
    """The constant a setting holds when the script runs with its defaults, as an ``ast.Constant``: a
    literal; an option's ``default=`` (``args.workers``); an environment variable's fallback
    (``int(os.environ.get("WORKERS", "0"))`` -> 0); a key of a dict literal the name is bound to, here
    or at every call site of the function it is a parameter of (``cfg["workers"]`` with ``CFG =
    {"workers": ...}`` passed in); a name, one step back. None where it cannot be told."""
    chain = chain if chain is not None else ctx.chain()
    line = line if line is not None else getattr(expr, "lineno", 1 << 30)
    if depth > 6 or expr is None:
        return None
    if isinstance(expr, ast.Constant):
        return expr
    if isinstance(expr, ast.Call):
        name = getattr(expr.func, "id", None)
        if name in _CASTS and len(expr.args) == 1 and not expr.keywords:
            inner = default_constant(expr.args[0], ctx, chain, line, depth + 1)
            try:
                return ast.Constant(_CASTS[name](inner.value)) if inner is not None else None
            except (TypeError, ValueError):
                return None
        if ctx.qualified(expr.func) in _ENVIRONMENT and len(expr.args) == 2:
            return default_constant(expr.args[1], ctx, chain, line, depth + 1)
        return None
    if isinstance(expr, ast.Attribute):
        found = option_default(expr, ctx, chain, line)
        if found is None:
            return _field_default(expr, ctx, chain, line, depth)
        return default_constant(found, ctx, chain, line, depth + 1)
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
        values = [
            default_constant(_item(d, expr.slice.value), ctx, c, at, depth + 1)
            for d, c, at in _dicts(expr.value, ctx, chain, line)
        ]
        if not values or any(v is None for v in values) or len({repr(v.value) for v in values}) != 1:
            return None
        return values[0]
    if isinstance(expr, ast.Name):
        value = ctx.bindings.value_of(expr.id, chain, line)
        return default_constant(value, ctx, chain, line, depth + 1) if value is not None else None
    return None


def _item(mapping: ast.Dict, key):
    return next(
        (v for k, v in zip(mapping.keys, mapping.values) if isinstance(k, ast.Constant) and k.value == key), None
    )


def keyed_values(expr, ctx, chain, line) -> list | None:
    """``cfg["key"]`` where ``cfg`` holds a dict literal at every site (_dicts): [(the value under the key, its
    scopes, line)] for each; None where a dict lacks the key or ``cfg`` is not known to hold dict literals."""
    if not (isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant)):
        return None
    found = [(_item(d, expr.slice.value), c, at) for d, c, at in _dicts(expr.value, ctx, chain, line)]
    return found if found and all(v is not None for v, _, _ in found) else None


def _dicts(expr, ctx, chain, line) -> list:
    """The dict literals a name holds: [(dict, its scopes, line)] (_held_values)."""
    return _held_values(expr, ctx, chain, line, lambda value: isinstance(value, ast.Dict))


def _held_values(expr, ctx, chain, line, wanted, depth: int = 0) -> list:
    """The ``wanted`` expressions (a dict literal, a construction) a name holds: [(value, its scopes, line)],
    through an assignment or, for a parameter, what every call site passes (or its default), followed through
    parameters handed on (``main(cfg=CONFIG)`` -> ``make_loader(ds, cfg)``); [] where one is something else."""
    if not isinstance(expr, ast.Name) or depth > 4:
        return []
    binding, where = ctx.bindings.lookup(expr.id, chain, line)
    if binding is None:
        return []
    if binding.how == "assign":
        return [(binding.value, where, line)] if wanted(binding.value) else []
    if binding.how != "param":
        return []
    out = []
    for value, site_chain, at, _ in ctx.bindings.passed(where[0], expr.id) or ():
        if wanted(value):
            out.append((value, site_chain, at))
            continue
        found = _held_values(value, ctx, site_chain, at, wanted, depth + 1)
        if not found:
            return []
        out += found
    return out


def _field_default(expr, ctx, chain, line, depth):
    """``cfg.crop`` where ``cfg`` holds, at every site, an instance of a settings class of the file (a dataclass
    or a plain class with no ``__init__``: ``crop: int = 224`` in its body), made with no value for that field
    (else the value given by keyword). None where it cannot be told."""
    if not isinstance(expr.value, ast.Name):
        return None
    classes = ctx.bindings.classes()

    def settings(value) -> bool:
        klass = classes.get(getattr(value.func, "id", None)) if isinstance(value, ast.Call) else None
        return klass is not None and not any(
            isinstance(f, ast.FunctionDef) and f.name == "__init__" for f in klass.body
        )

    values = []
    for made, site_chain, at in _held_values(expr.value, ctx, chain, line, settings):
        given = _kw(made, expr.attr)
        if given is None and (made.args or any(k.arg is None for k in made.keywords)):
            return None  # fields given by position or **kwargs: which one is not read here
        if given is None:
            given = next(
                (
                    f.value
                    for f in classes[made.func.id].body
                    if isinstance(f, (ast.Assign, ast.AnnAssign))
                    and f.value is not None
                    and any(getattr(t, "id", None) == expr.attr for t in _targets(f))
                ),
                None,
            )
        values.append(default_constant(given, ctx, site_chain, at, depth + 1) if given is not None else None)
    if not values or any(v is None for v in values) or len({repr(v.value) for v in values}) != 1:
        return None
    return values[0]


def _targets(statement) -> list:
    return statement.targets if isinstance(statement, ast.Assign) else [statement.target]
