"""What: a dataset augmented before it is split: jittered/flipped copies of each sample concatenated in, or a
random training transform built into it, then ``random_split`` (Subsets, train_test_split) into train and test.
Why: Copies of one sample land on both sides, so test samples have twins in training and the score measures
memory; with a random transform, the validation subset shares the dataset object and is augmented too.
Fix: split first, then augment only the training part (give validation its own dataset with eval transforms).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import Rule, _kw
from torch_pitfalls.lint.rules.shared.flow import _scopes_of
from torch_pitfalls.lint.walking import children, walk

_SPLITS = ("torch.utils.data.random_split", "torch.utils.data.dataset.random_split")
# scikit-learn's split of arrays (its copies are what matter: it holds no transform)
_ARRAY_SPLITS = ("sklearn.model_selection.train_test_split", "sklearn.model_selection._split.train_test_split")
_SUBSETS = ("torch.utils.data.Subset", "torch.utils.data.dataset.Subset")
_TENSOR_DATASETS = ("torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset")
_CONCAT_DATASETS = ("torch.utils.data.ConcatDataset", "torch.utils.data.dataset.ConcatDataset")
_CATS = ("torch.cat", "torch.concat", "torch.concatenate", "torch.vstack", "numpy.concatenate", "numpy.vstack")
_COMPOSES = (
    "torchvision.transforms.Compose",
    "torchvision.transforms.v2.Compose",
    "albumentations.Compose",
    "albumentations.OneOf",
    "torchvision.transforms.RandomApply",
)
# torchvision's random transforms that do not start with Random
_RANDOM_TV = frozenset(
    "ColorJitter RandAugment AutoAugment TrivialAugmentWide AugMix GaussianBlur ElasticTransform "
    "ScaleJitter MixUp CutMix JPEG".split()
)
# albumentations' transforms that are deterministic (p=1, no sampled parameter)
_FIXED_ALBUMENTATIONS = frozenset(
    "Compose Normalize Resize CenterCrop PadIfNeeded LongestMaxSize SmallestMaxSize ToFloat FromFloat "
    "ToGray ToRGB Crop Lambda NoOp".split()
)
_FIXED_ALBUMENTATIONS_TORCH = ("ToTensorV2", "ToTensor")


def _lookup(name, chain, line, ctx):
    return ctx.bindings.lookup(name, chain, line)


def _chain_of(fn, ctx):
    """The scopes a name in ``fn`` is looked up in, innermost first."""
    return (fn, *_scopes_of(fn, ctx)) if fn is not ctx.module else (fn,)


def _values(expr, chain, line, ctx, depth):
    """(expression, its scopes, line) for what ``expr`` is: itself, or what a name was bound to (an element
    a module function returns for ``x, y = augment(...)``; what the module's calls pass for a parameter)."""
    if not isinstance(expr, ast.Name) or depth > 6:
        return [(expr, chain, line)]
    binding, where = _lookup(expr.id, chain, line, ctx)
    if binding is None:
        return []
    if binding.how == "assign":
        return _values(binding.value, where, binding.line, ctx, depth + 1)
    if binding.how == "item" and isinstance(binding.value, ast.Call):
        fn = ctx.bindings._local_function(binding.value, where, binding.line)
        if fn is not None and binding.index is not None:
            out = []
            for value, at in returned_values(fn, binding.index) or []:
                out += _values(value, _chain_of(fn, ctx), at + 1, ctx, depth + 1)
            return out
        return []
    if binding.how == "param":
        sites = ctx.bindings.passed(where[0], expr.id) or []
        out = []
        for value, caller, at, _klass in sites:
            out += _values(value, caller, at, ctx, depth + 1)
        return out
    return []


def _copies(expr, chain, line, ctx, depth=0) -> bool:
    """``expr`` holds samples concatenated with augmented copies of themselves."""
    if depth > 8:
        return False
    for value, where, at in _values(expr, chain, line, ctx, depth):
        if _copies_here(value, where, at, ctx, depth):
            return True
    return False


def _copies_here(value, chain, line, ctx, depth) -> bool:
    if isinstance(value, ast.BinOp):  # (x - lo) / (hi - lo): arithmetic keeps the rows, and their copies
        return any(
            _copies(side, chain, line, ctx, depth + 1)
            if isinstance(side, ast.Name)
            else _copies_here(side, chain, line, ctx, depth + 1)
            for side in (value.left, value.right)
        )
    if not isinstance(value, ast.Call):
        return False
    q = ctx.qualified(value.func) or ""
    if q in _TENSOR_DATASETS:
        return any(_copies(a, chain, line, ctx, depth + 1) for a in value.args)
    if q in _CONCAT_DATASETS and value.args:
        parts = _elements(value.args[0], chain, line, ctx)
        if parts is None:
            return False
        sources = [_source(p) for p in parts]
        if len(set(s for s in sources if s is not None)) < len([s for s in sources if s is not None]):
            return True  # ConcatDataset([ImageFolder(root, plain), ImageFolder(root, flipped)])
        return any(_copies(p, chain, line, ctx, depth + 1) for p in parts)
    if q in _CATS and value.args:
        dim = _kw(value, "dim") or _kw(value, "axis") or (value.args[1] if len(value.args) > 1 else None)
        if dim is not None and not (isinstance(dim, ast.Constant) and dim.value == 0):
            return False  # features side by side, not more samples
        return _self_with_variants(value.args[0], chain, line, ctx)
    if isinstance(value.func, ast.Attribute) and value.func.attr in ("to", "float", "cuda", "contiguous"):
        return _copies(value.func.value, chain, line, ctx, depth + 1)
    fn = ctx.bindings._local_function(value, chain, line)
    if fn is not None:
        return any(_copies(v, _chain_of(fn, ctx), at + 1, ctx, depth + 1) for v, at in returned_values(fn) or [])
    return False


def _elements(arg, chain, line, ctx):
    if isinstance(arg, ast.Name):
        binding, _ = _lookup(arg.id, chain, line, ctx)
        arg = binding.value if binding is not None and binding.how == "assign" else arg
    return list(arg.elts) if isinstance(arg, (ast.List, ast.Tuple)) else None


def _source(dataset) -> str | None:
    """What a dataset is read from: the dump of its first argument (the same root folder twice)."""
    if isinstance(dataset, ast.Call) and dataset.args and not isinstance(dataset.args[0], ast.Starred):
        return ast.dump(dataset.args[0])
    return None


def _names(expr) -> set[str]:
    return {n.id for n in walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _self_with_variants(arg, chain, line, ctx) -> bool:
    """The list concatenated holds one tensor and transformed copies of it: ``[x, x + noise]``,
    ``[x, x.flip(-1)]``, or a list appended in a loop with transforms of one tensor bound outside it
    (``for k in range(4): xs.append(torch.rot90(x, k))``)."""
    if isinstance(arg, (ast.List, ast.Tuple)):
        elts = [e for e in arg.elts if not isinstance(e, ast.Starred)]
        for i, a in enumerate(elts):
            for b in elts[i + 1 :]:
                if ast.dump(a) == ast.dump(b):
                    continue
                common = _resolved_names(a, chain, line, ctx) & _resolved_names(b, chain, line, ctx)
                # two selections of rows (x[mask], x[~mask]) may be disjoint; the whole with rows of
                # itself (x, x[picks]) or two transforms of it hold the same samples twice
                if common and not all(_selects_rows(e, common, chain, line, ctx) for e in (a, b)):
                    return True
        return False
    if not isinstance(arg, ast.Name) or not chain:
        return False
    scope = chain[0]
    for n in walk(scope):
        if not (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "append"
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id == arg.id
            and n.args
        ):
            continue
        loop = _loop_of(n, scope, ctx)
        if loop is None:
            continue
        for source in _loop_invariant_roots(n.args[0], loop, chain, n.lineno, ctx):
            if source:
                return True
    return False


def _resolved_names(expr, chain, line, ctx, depth=0) -> set[str]:
    """The names an expression is made of, and those the names it reads were assigned from (a few steps)."""
    out = {n for n in _names(expr) if n not in ctx.imports}
    if depth < 3:
        for name in list(out):
            binding, where = _lookup(name, chain, line, ctx)
            if binding is not None and binding.how in ("assign", "aug") and binding.value is not None:
                out |= _resolved_names(binding.value, where, binding.line, ctx, depth + 1)
            if binding is not None and binding.how == "aug":  # x += noise: still what x was before
                out |= _resolved_names(ast.Name(id=name, ctx=ast.Load()), where, binding.line, ctx, depth + 1)
    return out


def _selects_rows(expr, names, chain, line, ctx, depth=0) -> bool:
    """``x[idx]`` (here, or in what a name it reads was assigned): a selection of ``x``'s rows."""
    for n in walk(expr):
        if (
            isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Name)
            and n.value.id in names
            and not isinstance(n.slice, ast.Slice)
        ):
            return True
        if depth < 3 and isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in names:
            binding, where = _lookup(n.id, chain, line, ctx)
            if binding is not None and binding.how == "assign" and binding.value is not None:
                if _selects_rows(binding.value, names, where, binding.line, ctx, depth + 1):
                    return True
    return False


def _loop_of(node, scope, ctx):
    up = ctx.parent(node)
    while up is not None and up is not scope:
        if isinstance(up, (ast.For, ast.While)):
            return up
        up = ctx.parent(up)
    return None


def _loop_invariant_roots(value, loop, chain, line, ctx, depth=0):
    """For each name the appended value is made of (through names bound in the loop): True for a tensor bound
    before the loop and taken whole (transformed, not indexed by what the loop varies)."""
    if depth > 4:
        return
    varying = _names(loop.target) if isinstance(loop, ast.For) else set()
    for n in walk(value):
        if not (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)) or n.id in varying:
            continue
        binding, where = _lookup(n.id, chain, line, ctx)
        if binding is None:
            continue
        inside = loop.lineno <= binding.line <= loop.end_lineno
        if inside and binding.how in ("assign", "item") and binding.value is not None:
            yield from _loop_invariant_roots(binding.value, loop, chain, binding.line, ctx, depth + 1)
        elif not inside and binding.how in ("param", "assign", "item"):
            parent = _parent_in(value, n)
            if isinstance(parent, ast.Subscript) and parent.value is n:
                continue  # x[i]: one slice of it
            if isinstance(parent, ast.Call) and parent.func is n:
                continue  # a function, not a tensor
            yield depth > 0 or _transformed(value, n)


def _parent_in(root, target):
    for n in walk(root):
        for child in children(n):
            if child is target:
                return n
    return None


def _transformed(value, name) -> bool:
    return value is not name and not (isinstance(value, ast.Name) and value.id == name.id)


# --- the random transform built into the dataset -------------------------------------------------
def _random_transform(dataset, chain, line, ctx, depth=0) -> bool:
    """The dataset is built with a transform pipeline holding a random op (RandomCrop, ColorJitter,
    RandAugment, albumentations' flips...)."""
    for value, where, at in _values(dataset, chain, line, ctx, depth):
        if not isinstance(value, ast.Call):
            continue
        q = ctx.qualified(value.func) or ""
        transform = _kw(value, "transform")
        if transform is None and q in ("torchvision.datasets.ImageFolder", "torchvision.datasets.DatasetFolder"):
            transform = value.args[1] if len(value.args) > 1 else None
        if transform is not None and _random_pipeline(transform, where, at, ctx):
            return True
    return False


def _random_pipeline(expr, chain, line, ctx, depth=0) -> bool:
    if depth > 5:
        return False
    for value, where, at in _values(expr, chain, line, ctx, depth):
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant):
            table = _values(value.value, where, at, ctx, depth + 1)
            for d, w, a in table:
                if isinstance(d, ast.Dict):
                    for k, v in zip(d.keys, d.values):
                        if isinstance(k, ast.Constant) and k.value == value.slice.value:
                            if _random_pipeline(v, w, a, ctx, depth + 1):
                                return True
            continue
        if not isinstance(value, ast.Call):
            continue
        q = ctx.qualified(value.func) or ""
        if q in _COMPOSES and value.args:
            elements = _elements(value.args[0], where, at, ctx) or []
            if any(_random_op(e, where, at, ctx, depth) for e in elements):
                return True
        elif _random_op(value, where, at, ctx, depth):
            return True
    return False


def _random_op(expr, chain, line, ctx, depth) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    q = ctx.qualified(expr.func) or ""
    last = q.rsplit(".", 1)[-1]
    if q in _COMPOSES:
        return _random_pipeline(expr, chain, line, ctx, depth + 1)
    if q.startswith("torchvision.transforms."):
        return last.startswith("Random") or last in _RANDOM_TV
    if q.startswith("albumentations."):
        if last in _FIXED_ALBUMENTATIONS or last in _FIXED_ALBUMENTATIONS_TORCH:
            return False
        p = _kw(expr, "p")
        return not (isinstance(p, ast.Constant) and p.value in (0, 0.0))
    return False


def _validation_reads_only_indices(node, ctx) -> bool:
    """The parts of the split are used only for their ``.indices`` (a second dataset with eval transforms is
    indexed by them), or one part's dataset is replaced; also where the parts cannot be told."""
    parent = ctx.parent(node)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Tuple)):
        return True
    names = [e.id for e in parent.targets[0].elts if isinstance(e, ast.Name)]
    if len(names) < 2:
        return True
    later = names[1:]
    uses = [
        n
        for n in walk(ctx.function)
        if isinstance(n, ast.Name) and n.id in later and n.lineno > parent.lineno and isinstance(n.ctx, ast.Load)
    ]
    if not uses:
        return True
    for use in uses:
        up = ctx.parent(use)
        if isinstance(up, ast.Attribute) and up.attr in ("indices", "dataset"):
            if up.attr == "indices":
                continue
            return True  # val.dataset = ... / val.dataset.transform = ...: its transform is changed
        return False
    return True


def _split_after_augmentation(node, ctx):
    if not isinstance(node, ast.Call) or not node.args or ctx.function is None:
        return False
    q = ctx.qualified(node.func)
    if q in _ARRAY_SPLITS:
        return _copies(node.args[0], ctx.chain(), node.lineno, ctx)
    if q in _SPLITS:
        pass
    elif q in _SUBSETS:
        if not _first_of_two_subsets(node, ctx):
            return False
    else:
        return False
    dataset = node.args[0]
    chain, line = ctx.chain(), node.lineno
    if _copies(dataset, chain, line, ctx):
        return True
    if _random_transform(dataset, chain, line, ctx):
        return q in _SUBSETS or not _validation_reads_only_indices(node, ctx)
    return False


def _first_of_two_subsets(node, ctx) -> bool:
    """``Subset(ds, train_idx)`` and ``Subset(ds, val_idx)`` of one dataset: the first of them."""
    same = [
        n
        for n in walk(ctx.function)
        if isinstance(n, ast.Call)
        and n.args
        and ctx.qualified(n.func) in _SUBSETS
        and ast.dump(n.args[0]) == ast.dump(node.args[0])
    ]
    return len(same) >= 2 and min(same, key=lambda n: (n.lineno, n.col_offset)) is node


RULE = Rule(
    "PTF248",
    ("split-after-augmentation-leaks",),
    "the dataset is augmented before it is split: augmented copies of one sample land on both sides (test "
    "samples have twins in training), or the validation subset shares the dataset and its random training "
    "transforms; split first, then augment only the training part (validation gets its own eval-transform dataset)",
    _split_after_augmentation,
    nodes=ast.Call,
    needs=("random_split", "Subset", "train_test_split"),
)
