"""What: An argument parser that declares --local_rank and not --local-rank.
Why: torch.distributed.launch passes --local-rank since torch 2.0: the script exits with 'unrecognized
arguments'.
Fix: declare both (add_argument('--local-rank', '--local_rank', ...)) or read LOCAL_RANK from the
environment.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.fixes import Edit, Fix, Refused, Source, _one
from torch_pitfalls.lint.rules.base import CALL, Rule, _method


def _local_rank_underscore_only(node, ctx) -> bool:
    """``parser.add_argument("--local_rank", ...)`` without the dashed spelling in the same call."""
    if not _method(node, "add_argument"):
        return False
    names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return "--local_rank" in names and "--local-rank" not in names


def _local_rank(src: Source, finding) -> list[Edit]:
    """``add_argument("--local_rank", ...)`` -> ``add_argument("--local-rank", "--local_rank", ...)``:
    the dest stays ``local_rank`` (argparse takes it from the first long option)."""
    call = _one(
        [c for c in src.at(finding, ast.Call) if getattr(c.func, "attr", None) == "add_argument"], "add_argument call"
    )
    old = next((a for a in call.args if isinstance(a, ast.Constant) and a.value == "--local_rank"), None)
    if old is None:
        raise Refused("no '--local_rank' option string in the call")
    at = src.start(old)
    return [Edit(at, at, '"--local-rank", ')]


RULE = Rule(
    "PTF132",
    ("distributed-launch-local-rank",),
    "torch.distributed.launch passes --local-rank since torch 2.0, so a parser that only declares "
    "--local_rank exits with 'unrecognized arguments'; declare both (add_argument('--local-rank', "
    "'--local_rank', ...)) or read LOCAL_RANK from the environment",
    _local_rank_underscore_only,
    nodes=CALL,
    calls=("add_argument",),
    upgrade=True,
    fix=Fix('add_argument("--local_rank", ...) -> add_argument("--local-rank", "--local_rank", ...)', _local_rank),
)
