"""What: tensor.storage().
Why: It returns a TypedStorage, deprecated since torch 2.0 (a warning).
Fix: use untyped_storage(), behind hasattr for torch 1.13.
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import CALL, Rule, _method, _receiver_may_be_tensor

RULE = Rule(
    "PTF106",
    ("typed-storage-deprecated",),
    "Tensor.storage() returns a TypedStorage, deprecated since torch 2.0 (warns); use "
    "untyped_storage() (guarded by hasattr for torch 1.13)",
    lambda n, c: (
        _method(n, "storage") and not n.args and not n.keywords and not c.guarded and _receiver_may_be_tensor(n, c)
    ),
    nodes=CALL,
    calls=("storage",),
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
)
