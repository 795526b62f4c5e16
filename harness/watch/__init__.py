"""``pitfalls watch``: the corpus's pitfalls caught while the user's own program runs.

A linter reads spelling; most pitfalls live in shapes, dtypes, values and modes, which only a
run shows. The watcher switches on around user code (``pitfalls watch SCRIPT``, the ``watch()``
context manager, or ``pytest --pitfalls-watch``) and reports each pitfall once per place in the
user's code, with the case that proves it. Each detector belongs to one case and is proven by it:
run under the watcher, the case's broken code is reported and its fixed code and near miss are
not (tests/watch). Detectors watch torch through a ``TorchFunctionMode`` and torch's own global
module and optimizer hooks; none uses a ``TorchDispatchMode`` (it would switch torch.compile off).

    from torch_pitfalls.watch import watch
    with watch() as w:
        train()
    print(w.text())

In a notebook: ``%load_ext torch_pitfalls.watch``, then ``%%watch`` on a cell, or ``%watch on`` /
``%watch off`` around several (harness/watch/magic.py).
"""

from __future__ import annotations

from torch_pitfalls.watch.findings import Finding
from torch_pitfalls.watch.magic import load_ipython_extension, unload_ipython_extension
from torch_pitfalls.watch.session import Watcher, watch

__all__ = ["Finding", "Watcher", "load_ipython_extension", "unload_ipython_extension", "watch"]
