"""The walk that applies the rules to one module, and what a rule sees of the code around a node.

A rule sees a node with its context: the imports (qualified names), the function it is in (and
what that function assigns), the class it is in, and whether it sits behind a feature or version
guard (``if hasattr(torch, "func")``, ``except ImportError``: the portable spellings the cases'
fixes use, which name the old API on purpose).
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path

from torch_pitfalls.lint.applied import moved_by_package, moved_in_tree
from torch_pitfalls.lint.bindings import Bindings, Held
from torch_pitfalls.lint.guards import _caught, _handles_missing, _is_guard_test
from torch_pitfalls.lint.names import import_map, module_aliases, qualified
from torch_pitfalls.lint.releases import Releases
from torch_pitfalls.lint.walking import children

# what a rule's check raises on an unusual shape of code (a tuple where a name was expected, a name bound through
# itself past a rule's depth): no finding from that rule there, and the run goes on
UNUSUAL_CODE = (AttributeError, IndexError, TypeError, ValueError, RecursionError)
# a call is offered only to the rules whose ``calls`` name it (rules/base.py); False: to every call rule
# (tests/lint/test_call_dispatch.py compares the two)
BY_CALL_NAME = True


@dataclass
class Context:
    imports: dict[str, str]
    module: ast.AST | None = None
    function: ast.AST | None = None  # the innermost function (or the module)
    klass: ast.ClassDef | None = None
    guarded: bool = False
    caught: tuple[str, ...] = ()  # the exceptions the enclosing ``except`` handler catches
    scopes: list = field(default_factory=list)  # the enclosing functions, outermost first (the module first)
    releases: Releases = field(default_factory=Releases.every)  # the torch releases the code runs on (releases.py)
    path: str | None = None  # the file linted (its package is read for what the package's code does elsewhere)
    _qualified: dict[int, str | None] = field(default_factory=dict)
    _bindings: Bindings | None = None
    _moved: frozenset | None = None
    _parents: dict | None = None

    def moved_by_package(self) -> frozenset:
        """The tensor attributes an ``_apply`` override in this module or its package moves (applied.py)."""
        if self._moved is None:
            on_disk = self.path is not None and os.path.isfile(self.path)
            self._moved = moved_in_tree(self.module) | (moved_by_package(Path(self.path)) if on_disk else frozenset())
        return self._moved

    def qualified(self, node: ast.AST) -> str | None:
        key = id(node)  # the tree outlives the walk: a node's id is its own
        try:
            return self._qualified[key]
        except KeyError:
            found = self._qualified[key] = qualified(node, self.imports)
            return found

    @property
    def bindings(self) -> Bindings:
        if self._bindings is None:
            self._bindings = Bindings(self.module, self.qualified)
        return self._bindings

    def chain(self) -> tuple:
        """The scopes a name is looked up in, innermost first."""
        if self.scopes:
            return tuple(reversed(self.scopes))
        return (self.function,) if self.function is not None else ()

    def value_of(self, node: ast.AST, before: int) -> ast.AST | None:
        """What a bare name was last assigned, before line ``before``, in its scope."""
        if not isinstance(node, ast.Name) or self.function is None:
            return None
        return self.bindings.value_of(node.id, self.chain(), before)

    def resolve(self, node: ast.AST, before: int) -> ast.AST:
        """The expression itself, or what the name it is was assigned (one step)."""
        return self.value_of(node, before) or node

    def held(self, node: ast.AST, line: int | None = None) -> Held | None:
        """What an expression holds here (bindings.py): a module, a loss, an optimizer, a tensor..."""
        if self.function is None:
            return None
        at = line if line is not None else getattr(node, "lineno", 1 << 30)
        return self.bindings.held(node, self.chain(), at, self.klass)

    def kind(self, node: ast.AST, line: int | None = None) -> str | None:
        found = self.held(node, line)
        return found.kind if found else None

    def parent(self, node: ast.AST) -> ast.AST | None:
        parents = self._parents  # asked of most nodes a rule matches: the map itself, not a call per ask
        if parents is None:
            parents = self._parents = self.bindings.parents()
        return parents.get(id(node))


def _imports(tree: ast.AST) -> list[ast.AST]:
    """The module's import statements, wherever they are, found through the statements alone (an
    import is never inside an expression): names.import_map then reads these, not the whole tree."""
    found, todo = [], [tree]
    while todo:
        node = todo.pop()
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            if not isinstance(children, list):
                continue
            for child in children:
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    found.append(child)
                elif isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                    todo.append(child)
    return found


@dataclass(frozen=True)
class Hit:
    rule: "object"
    line: int
    col: int
    sure: bool = True  # False: the rule answered UNSURE (rules/base.py), reported only with --preview


class Walker(ast.NodeVisitor):
    """Each node is offered only to the rules that look at its type (a rule's ``nodes``): most
    rules look at calls, a few at names, attributes, imports, loops or classes."""

    def __init__(self, rules, tree, releases: Releases | None = None, path: str | None = None, preview: bool = False):
        self.rules, self.preview = rules, preview
        imports = import_map(ast.Module(body=_imports(tree), type_ignores=[]))
        self.ctx = Context(
            module_aliases(tree, imports),
            module=tree,
            function=tree,
            scopes=[tree],
            releases=releases or Releases.every(),
            path=path,
        )
        self.hits: list[Hit] = []
        self._by_type: dict[type, list] = {}
        self._by_call_name: dict[str | None, list] = {}
        # the call rules once: those offered every call, and the others by the names in their ``calls``
        self._every_call: list = []
        self._named_calls: dict[str, list] = {}
        for r in rules:
            if issubclass(ast.Call, getattr(r, "nodes", ast.AST)):
                if getattr(r, "calls", ()):
                    for name in r.calls:
                        self._named_calls.setdefault(name, []).append(r)
                else:
                    self._every_call.append(r)
        self._methods: dict[type, object] = {}
        self._found_once: set[str] = set()  # the once-per-file rules that made this file's finding

    def _check(self, node):
        cls = type(node)
        if cls is ast.Call and BY_CALL_NAME:
            rules = self._call_rules(self._call_name(node))
        else:
            rules = self._rules_for(cls)
        ctx = self.ctx
        for rule in rules:  # the check called here: no frame of its own on the millions of nodes it answers no
            try:
                found = rule.test(node, ctx)
                if found is False or found is None:
                    continue
                found = rule.judged(found, node, ctx)
            except UNUSUAL_CODE:
                continue
            if found is True and rule.once_per_file:  # an UNSURE match does not take the file's one finding
                if rule.id in self._found_once:
                    continue
                self._found_once.add(rule.id)
            if found or (self.preview and found is not False):  # not False: UNSURE (rules/base.py)
                sure = found is True
                self.hits.append(Hit(rule, getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1, sure))

    def _rules_for(self, cls) -> list:
        """The rules that look at nodes of this type (a rule without ``nodes`` looks at every node), once per type."""
        rules = self._by_type.get(cls)
        if rules is None:
            rules = self._by_type[cls] = [r for r in self.rules if issubclass(cls, getattr(r, "nodes", ast.AST))]
        return rules

    def _call_name(self, call: ast.Call) -> str | None:
        """The name a call ends with, as rules' ``calls`` spell it: the method's, or the function's last
        name once aliases are read (None for a call of a call or of a subscript)."""
        func = call.func
        if isinstance(func, ast.Attribute):
            return func.attr
        if isinstance(func, ast.Name):
            return (self.ctx.qualified(func) or func.id).rsplit(".", 1)[-1]
        return None

    def _call_rules(self, name: str | None) -> list:
        """The rules offered a call ending with ``name``: those that look at every call, then those whose
        ``calls`` name it."""
        found = self._by_call_name.get(name)
        if found is None:
            named = self._named_calls.get(name)
            found = self._by_call_name[name] = self._every_call + named if named else self._every_call
        return found

    def visit(self, node):
        cls = type(node)
        method = self._methods.get(cls)
        if method is None:  # NodeVisitor's getattr per node, once per node type
            method = self._methods[cls] = self._method_for(cls)
        method(node)

    def _method_for(self, cls):
        """The visit of a node type: its own ``visit_X``, else the generic walk, which skips the rules'
        check on the types no rule looks at (most nodes: names in a load, constants, arguments)."""
        method = getattr(self, f"visit_{cls.__name__}", None)
        if method is not None:
            return method
        if cls is ast.Call or self._rules_for(cls):
            return self.generic_visit
        return self._walk_children

    def generic_visit(self, node):
        self._check(node)
        self._walk_children(node)

    def _walk_children(self, node):
        methods = self._methods
        for child in children(node):
            method = methods.get(type(child))
            if method is None:
                method = methods[type(child)] = self._method_for(type(child))
            method(child)

    visit_Constant = generic_visit  # not NodeVisitor's, which looks for the visit_Num of Python 3.7

    def visit_FunctionDef(self, node):
        self._check(node)
        for d in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if d is not None:
                self.visit(d)
        saved = self.ctx.function
        self.ctx.function = node
        self.ctx.scopes.append(node)
        for child in node.body:
            self.visit(child)
        self.ctx.scopes.pop()
        self.ctx.function = saved

    def visit_AnnAssign(self, node):
        """An annotation is a type, not code that builds something: no rule sees it."""
        self._check(node)
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self._check(node)  # class-level rules see the class itself
        saved = self.ctx.klass
        self.ctx.klass = node
        for child in children(node):
            self.visit(child)
        self.ctx.klass = saved

    def visit_If(self, node):
        self._check(node)
        self.visit(node.test)
        guard = self.ctx.guarded or _is_guard_test(node.test)
        for child in [*node.body, *node.orelse]:
            self._visit_guarded(child, guard)

    def visit_IfExp(self, node):
        self._check(node)
        self.visit(node.test)
        guard = self.ctx.guarded or _is_guard_test(node.test)
        for child in (node.body, node.orelse):
            self._visit_guarded(child, guard)

    def visit_Try(self, node):
        guard = self.ctx.guarded or any(_handles_missing(h) for h in node.handlers)
        for child in node.body:
            self._visit_guarded(child, guard)
        for child in [*node.handlers, *node.orelse, *node.finalbody]:
            self._visit_guarded(child, guard if child in node.handlers else self.ctx.guarded)

    visit_TryStar = visit_Try

    def visit_ExceptHandler(self, node):
        saved = self.ctx.caught
        self.ctx.caught = _caught(node)
        self.generic_visit(node)
        self.ctx.caught = saved

    def _visit_guarded(self, node, guard):
        saved = self.ctx.guarded
        self.ctx.guarded = guard
        self.visit(node)
        self.ctx.guarded = saved


def walk(
    tree: ast.AST, rules, releases: Releases | None = None, path: str | None = None, preview: bool = False
) -> list[Hit]:
    walker = Walker(rules, tree, releases, path, preview)
    walker.visit(tree)
    return walker.hits
