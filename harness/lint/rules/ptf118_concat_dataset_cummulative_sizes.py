"""What: ConcatDataset.cummulative_sizes (misspelt).
Why: A deprecated alias (FutureWarning since torch 2.4).
Fix: read cumulative_sizes.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.fixes import Edit, Fix, Source, _one, _rename_attr
from torch_pitfalls.lint.rules.base import Rule


def _cumulative_sizes(src: Source, finding) -> list[Edit]:
    """``.cummulative_sizes`` -> ``.cumulative_sizes``."""
    ref = _one([n for n in src.at(finding, ast.Attribute) if n.attr == "cummulative_sizes"], ".cummulative_sizes")
    return [_rename_attr(src, ref, "cumulative_sizes")]


RULE = Rule(
    "PTF118",
    ("concat-dataset-cummulative-sizes",),
    "ConcatDataset.cummulative_sizes is a misspelt alias (FutureWarning since torch 2.4); read cumulative_sizes",
    lambda n, c: isinstance(n, ast.Attribute) and n.attr == "cummulative_sizes",
    nodes=ast.Attribute,
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
    fix=Fix(".cummulative_sizes -> .cumulative_sizes", _cumulative_sizes),
)
