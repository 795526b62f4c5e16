"""What: torch.qr / torch.cholesky, or .qr() / .cholesky() on a tensor.
Why: Removed in torch 2.14 (RuntimeError; deprecated since 1.9).
Fix: use torch.linalg.qr / torch.linalg.cholesky.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _method, _receiver_may_be_tensor, _use_of

RULE = Rule(
    "PTF135",
    ("qr-cholesky-removed",),
    "torch.qr and torch.cholesky (and Tensor.qr()/.cholesky()) were removed in torch 2.14 (RuntimeError; "
    "deprecated since 1.9); use torch.linalg.qr / torch.linalg.cholesky",
    lambda n, c: (
        _use_of(n, c, "torch.qr", "torch.cholesky")
        or (
            isinstance(n, ast.Call)
            and _method(n, "qr", "cholesky")
            and c.qualified(n.func) is None
            and all(isinstance(a, ast.Constant) for a in n.args)
            and _receiver_may_be_tensor(n, c)
        )
    ),
    nodes=(ast.Call, ast.Attribute, ast.Name),
    upgrade=True,
    needs=("qr", "cholesky"),
)
