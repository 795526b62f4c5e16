"""What: torch.symeig, or .symeig() on a tensor.
Why: Removed in torch 2.0 (RuntimeError; deprecated since 1.9).
Fix: use torch.linalg.eigh (eigenvalues ascending, the lower triangle by default), or
torch.linalg.eigvalsh.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _method, _receiver_may_be_tensor, _use_of

RULE = Rule(
    "PTF138",
    ("symeig-removed",),
    "torch.symeig (and Tensor.symeig()) was removed in torch 2.0 (RuntimeError; deprecated since 1.9); use "
    "torch.linalg.eigh (eigenvalues ascending, the lower triangle by default), or torch.linalg.eigvalsh",
    lambda n, c: (
        _use_of(n, c, "torch.symeig")
        or (
            isinstance(n, ast.Call)
            and _method(n, "symeig")
            and c.qualified(n.func) is None
            and _receiver_may_be_tensor(n, c)
        )
    ),
    nodes=(ast.Attribute, ast.Name, ast.Call),
    upgrade=True,
    needs=("symeig",),
)
