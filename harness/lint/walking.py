"""The walk the rules share: ``ast.walk``'s order (breadth first), with each node's children read once
and kept on the node. The rules walk the same functions many times (every call in a loop asks what
the loop holds), and reading a node's fields again each time was most of the linter's time."""

from __future__ import annotations

import ast
from collections import deque


def children(node: ast.AST) -> tuple:
    """``ast.iter_child_nodes(node)``, read once."""
    kept = node.__dict__.get("_children")
    if kept is None:
        kept = node._children = tuple(ast.iter_child_nodes(node))
    return kept


def walk(node: ast.AST):
    """``ast.walk(node)``: the node and everything below it, breadth first."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(children(node))
        yield node
