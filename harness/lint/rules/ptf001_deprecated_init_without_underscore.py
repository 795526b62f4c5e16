"""What: nn.init functions called by their old names, without the trailing underscore
(nn.init.xavier_uniform(w)).
Why: They are deprecated aliases of the in-place functions and warn on every call.
Fix: call the in-place name (xavier_uniform_, kaiming_normal_, ...).
"""

from __future__ import annotations

from torch_pitfalls.lint.fixes import Fix, _rename_called_method
from torch_pitfalls.lint.rules.base import CALL, Rule, _is_call_to, last_names

# the old names, said once: what the check matches (qualified) and what the fix renames
INIT_OLD = (
    "uniform",
    "normal",
    "constant",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
)
TORCH_INIT_OLD = tuple(f"torch.nn.init.{n}" for n in INIT_OLD)


RULE = Rule(
    "PTF001",
    ("deprecated-init-without-underscore",),
    "nn.init's names without the trailing underscore are deprecated aliases that warn on every call; "
    "call the in-place name (xavier_uniform_, kaiming_normal_, ...)",
    lambda n, c: _is_call_to(n, c, *TORCH_INIT_OLD),
    nodes=CALL,
    calls=last_names(*TORCH_INIT_OLD),
    fix=Fix(
        "xavier_uniform(...) -> xavier_uniform_(...) (the in-place name)",
        _rename_called_method(INIT_OLD, lambda name: name + "_"),
    ),
)
