"""What: torch.onnx.export(...) without an explicit dynamo= keyword.
Why: From torch 2.9 the default is dynamo=True: the torch.export-based exporter, which imports onnxscript
first (ModuleNotFoundError without it), turns dynamic_axes into dynamic_shapes and writes external
data; 2.8 warns that the default changes.
Fix: say which exporter: dynamo=True (with onnxscript, dynamic_shapes) or dynamo=False.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _has_kw, _is_call_to, last_names
from torch_pitfalls.lint.walking import walk

EXPORTS = ("torch.onnx.export",)


def _export_without_dynamo(node, ctx) -> bool:
    """``torch.onnx.export(...)`` (through any import alias) that names no ``dynamo=`` (a ``**kwargs``
    may pass it: quiet), unless the other branch of its ``if`` exports with ``dynamo=``: the code chooses
    the exporter by a condition (a release, a flag), the default path on purpose."""
    return _is_call_to(node, ctx, *EXPORTS) and not _has_kw(node, "dynamo") and not _exporter_chosen(node, ctx)


def _exporter_chosen(node, ctx) -> bool:
    inner, up = node, ctx.parent(node)
    while up is not None and up is not ctx.function:
        if isinstance(up, ast.If):
            other = up.orelse if inner in up.body else up.body
            if any(_is_call_to(n, ctx, *EXPORTS) and _has_kw(n, "dynamo") for stmt in other for n in walk(stmt)):
                return True
        inner, up = up, ctx.parent(up)
    return False


RULE = Rule(
    "PTF141",
    ("onnx-export-dynamo-default",),
    "torch.onnx.export without dynamo= switches to the torch.export-based exporter from torch 2.9 (it needs "
    "onnxscript, turns dynamic_axes into dynamic_shapes and writes external data; 2.8 warns); pass dynamo=True "
    "(with onnxscript) or dynamo=False explicitly",
    _export_without_dynamo,
    nodes=CALL,
    calls=last_names(*EXPORTS),
    upgrade=True,
    needs=("onnx",),
)
