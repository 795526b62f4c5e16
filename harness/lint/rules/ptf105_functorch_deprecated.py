"""What: functorch's functions (functorch.vmap, grad, jacrev, ...).
Why: functorch is deprecated since torch 2.0 (a warning; FutureWarning from 2.4).
Fix: use torch.func, behind hasattr(torch, 'func') where torch 1.13 must still work.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.fixes import Edit, Fix, Refused, Source
from torch_pitfalls.lint.names import import_map
from torch_pitfalls.lint.rules.base import REFS, Rule, _use_of

FUNCTORCH = tuple(
    f"functorch.{f}"
    for f in (
        "vmap",
        "grad",
        "grad_and_value",
        "vjp",
        "jvp",
        "jacrev",
        "jacfwd",
        "hessian",
        "functionalize",
        "make_functional",
        "make_functional_with_buffers",
        "combine_state_for_ensemble",
    )
)


def _functorch(src: Source, finding) -> list[Edit]:
    """``functorch.vmap`` -> ``torch.func.vmap`` (same functions, same signatures)."""
    refs = [
        n
        for n in src.at(finding, ast.Attribute)
        if isinstance(n.value, ast.Name) and import_map(src.tree).get(n.value.id) == "functorch"
    ]
    if not refs:
        raise Refused("imported from functorch by name: change the import to torch.func")
    ref = refs[0]
    return [Edit(src.start(ref.value), src.end(ref.value), f"{src.torch_name()}.func")]


RULE = Rule(
    "PTF105",
    ("functorch-deprecated",),
    "functorch is deprecated since torch 2.0 (warns; FutureWarning from 2.4); use torch.func, guarded by "
    "hasattr(torch, 'func') where torch 1.13 must still work",
    lambda n, c: _use_of(n, c, *FUNCTORCH),
    nodes=REFS,
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
    fix=Fix("functorch.X -> torch.func.X", _functorch),
    needs=("functorch",),
)
