"""What: a file that seeds torch (``torch.manual_seed``) to make its runs repeatable, while it draws from Python's
``random`` or NumPy's global generator (``random.shuffle``, ``np.random.rand``), which it never seeds.
Why: each library keeps its own generator; seeding torch tells the others nothing. Crops, flips, shuffles and
noise drawn from them change from run to run, and so do the losses. Reported only with --preview.
Fix: seed every generator the code draws from: ``random.seed(s)``, ``np.random.seed(s)``, ``torch.manual_seed(s)``
(one helper), or draw from a generator of your own made with the seed (``np.random.default_rng(s)``).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule
from torch_pitfalls.lint.walking import kept_on, walk

_TORCH_SEEDS = ("torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all")
# what each global generator is seeded by, and what of its module makes or restores a generator rather than draws
_GENERATORS = {
    "random": ("Python's random", ("seed",), ("Random", "SystemRandom", "getstate", "setstate")),
    "numpy.random": (
        "NumPy's global generator",
        ("seed",),
        (
            "default_rng",
            "RandomState",
            "Generator",
            "SeedSequence",
            "BitGenerator",
            "PCG64",
            "PCG64DXSM",
            "MT19937",
            "Philox",
            "SFC64",
            "get_state",
            "set_state",
        ),
    ),
}


def _unseeded_draws(module: ast.Module, ctx) -> list[str]:
    """The global generators (their labels) the file draws from and never seeds; none where it calls a seeding
    helper it does not define (``set_seed(0)``, ``seed_everything(42)``), which may seed them all."""
    local = {n.name for n in walk(module) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    drawn, seeded = set(), set()
    for node in walk(module):
        if not isinstance(node, ast.Call):
            continue
        q = ctx.qualified(node.func) or ""
        prefix, _, name = q.rpartition(".")
        if prefix in _GENERATORS:
            if name in _GENERATORS[prefix][1]:
                seeded.add(prefix)
            elif _a_draw(node, ctx):
                drawn.add(prefix)
            continue
        called = getattr(node.func, "id", None) or getattr(node.func, "attr", "")
        if "seed" in called.lower() and q not in _TORCH_SEEDS and called not in local:
            return []  # a seeding helper of another module or library: what it seeds is not shown here
    return [_GENERATORS[p][0] for p in sorted(drawn - seeded)]


def _a_draw(node, ctx) -> bool:
    q = ctx.qualified(node.func) if isinstance(node, ast.Call) else None
    prefix, _, name = (q or "").rpartition(".")
    return prefix in _GENERATORS and name not in _GENERATORS[prefix][1] + _GENERATORS[prefix][2]


def _seed_drawn(seed, ctx, line: int) -> bool:
    """The seed is itself drawn from a global generator (``torch.manual_seed(seeds[i])`` with
    ``seeds = np.random.randint(...)``): torch follows that generator, whose seeding is not this call's job."""
    for node in walk(seed):
        if _a_draw(node, ctx):
            return True
        if isinstance(node, ast.Name):
            value = ctx.bindings.value_of(node.id, ctx.chain(), line)
            if value is not None and any(_a_draw(n, ctx) for n in walk(value)):
                return True
    return False


def _torch_seeded_others_not(node, ctx) -> bool:
    if not (isinstance(node, ast.Call) and ctx.qualified(node.func) in _TORCH_SEEDS):
        return False
    if node.args and _seed_drawn(node.args[0], ctx, node.lineno):
        return False
    if node is not kept_on(ctx.module, "_ptf282_first", lambda m: [_first_seed(m, ctx)])[0]:
        return False  # one finding per file: the fix is one seeding place
    return bool(kept_on(ctx.module, "_ptf282_unseeded", lambda m: _unseeded_draws(m, ctx)))


def _first_seed(module: ast.Module, ctx):
    """The file's first torch seed call, in reading order."""
    seeds = [n for n in walk(module) if isinstance(n, ast.Call) and ctx.qualified(n.func) in _TORCH_SEEDS]
    return min(seeds, key=lambda n: (n.lineno, n.col_offset), default=None)


RULE = Rule(
    id="PTF282",
    cases=("seed-every-rng",),
    message=(
        "torch is seeded here, but this file also draws from Python's random or NumPy's global generator "
        "(np.random.*), which it never seeds: those draws (shuffles, crops, noise) differ on every run; seed "
        "them too (random.seed, np.random.seed) or draw from a generator made with the seed"
    ),
    test=_torch_seeded_others_not,
    nodes=ast.Call,
    needs=("manual_seed",),
    calls=("manual_seed", "manual_seed_all"),
    # read findings on code it was not tuned on: 1 true of 8 (draws that change no result; a helper that seeds)
    preview_only="its harm depends on what the draws feed, and a helper may seed them",
    case_at_preview=(
        "the rule reports only with `--preview`, since whether the unseeded draws change a result (or a helper "
        "in another file seeds them) is more than one file shows"
    ),
)
