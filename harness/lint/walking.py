"""The walk the rules share: ``ast.walk``'s order (breadth first), with each node's children read once
and kept on the node. The rules walk the same functions many times (every call in a loop asks what
the loop holds), and reading a node's fields again each time was most of the linter's time."""

from __future__ import annotations

import ast
from collections import deque


def kept_on(node: ast.AST, key: str, make):
    """``make(node)``, computed once and kept on the node: what a rule asks of one function many times
    lives as long as the tree does (a cache with no global state to clear)."""
    found = node.__dict__.get(key)
    if found is None:
        found = node.__dict__[key] = make(node)
    return found


# The nodes that only say how another node reads or combines (a Name's Load, a BinOp's Add): no rule
# looks at one as a node of its own (a rule reads ``n.ctx`` or ``n.op``), and the parser shares a
# single instance of each among all the nodes that use it. Left out of every walk, they are a quarter
# of a tree's nodes that no walk visits.
_MARKERS = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)


def children(node: ast.AST) -> tuple:
    """``ast.iter_child_nodes(node)`` without the markers above, read once (the fields read from the
    node's ``__dict__``, where ast keeps them: a quarter faster than iter_child_nodes' two generators,
    on every node of every walk)."""
    fields = node.__dict__
    found = fields.get("_children")
    if found is None:
        found = []
        for name in node._fields:
            value = fields.get(name)
            if isinstance(value, ast.AST):
                if not isinstance(value, _MARKERS):
                    found.append(value)
            elif value.__class__ is list:
                found.extend(item for item in value if isinstance(item, ast.AST) and not isinstance(item, _MARKERS))
        found = fields["_children"] = tuple(found)
    return found


# The nodes whose walk is kept on them: a module and each function, class or loop, which many rules
# walk once per file or per candidate (each rule that reads a whole module used to walk all of it
# again); an expression or a statement is walked afresh (a short walk, often stopped early).
_KEPT = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While)


def walk(node: ast.AST):
    """``ast.walk(node)``: an iterator over the node and everything below it, breadth first."""
    if isinstance(node, _KEPT):
        return iter(kept_on(node, "_walk", lambda n: tuple(_breadth_first(n))))
    return _breadth_first(node)


def _breadth_first(node: ast.AST):
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(children(node))
        yield node
