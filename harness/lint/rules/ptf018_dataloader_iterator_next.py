"""What: it.next() on a DataLoader iterator.
Why: Python 3 iterators have no .next() method: AttributeError.
Fix: call next(it).
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import CALL, Rule, _method


def _iterator_next_method(node, ctx) -> bool:
    """``iter(loader).next()``: Python 3 iterators have no ``.next()`` (the builtin ``next(it)``)."""
    return _method(node, "next") and not node.args and not node.keywords and ctx.kind(node.func.value) == "loader"


RULE = Rule(
    "PTF018",
    ("dataloader-iterator-next",),
    "a DataLoader iterator has no .next() method in Python 3 (AttributeError); call next(it)",
    _iterator_next_method,
    nodes=CALL,
    calls=("next",),
)
