"""What: module.register_backward_hook(...).
Why: The hook gets the gradients of the module's last operation, not of its inputs, and the method is
deprecated.
Fix: use register_full_backward_hook.
"""

from __future__ import annotations

from torch_pitfalls.lint.fixes import Fix, _rename_called_method
from torch_pitfalls.lint.guards import deliberate
from torch_pitfalls.lint.rules.base import CALL, Rule, _is_call_to, _method

RULE = Rule(
    "PTF004",
    ("backward-hook-non-full",),
    "register_backward_hook reports the gradients of the module's last operation, not of its inputs, "
    "and is deprecated; use register_full_backward_hook",
    lambda n, c: (
        (
            _method(n, "register_backward_hook")
            or _is_call_to(n, c, "torch.nn.modules.module.register_module_backward_hook")
        )
        # the fallback a version guard keeps for a torch older than the full hook (1.8): chosen, not a slip
        and not (c.guarded or deliberate(n, c.module, False))
    ),
    nodes=CALL,
    calls=("register_backward_hook", "register_module_backward_hook"),
    fix=Fix(
        "register_backward_hook -> register_full_backward_hook",
        _rename_called_method({"register_backward_hook"}, lambda name: "register_full_backward_hook"),
    ),
)
