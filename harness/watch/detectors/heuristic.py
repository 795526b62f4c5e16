"""The heuristic detectors (``watch(pedantic=True)``, ``pitfalls watch --pedantic``).

Each reads what the user's code *means* from what a run shows, where the same values could
also come from correct code: a reshape to a permutation of the shape, a tensor divided by its
own norm, a 3-D tensor that looks like one image, a model in training mode predicting under
``no_grad``. They can be wrong, so they run only when asked, and each is proven by its case
(tests/watch/test_heuristic.py): the broken variant is reported, its fixed variant and near miss
are not. Each looks only at the torch calls it lists and leaves at the first cheap test that
fails; the costly test (a norm, a row sum) runs only on the calls that passed the cheap ones.
"""

from __future__ import annotations

import ast
import linecache
import math
import os
import sys
import weakref

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.modules import module as nn_module
from torch.optim import optimizer as optim

from torch_pitfalls.watch.detectors.base import Detector, arg
from torch_pitfalls.watch.detectors.graphs import BACKWARD
from torch_pitfalls.watch.sites import origin, shown_path, user_site


# -- where a call came from ---------------------------------------------------------------
def _called_from_torch() -> bool:
    """True when the torch call being watched was made by torch's own Python code (a module's
    forward, an optimizer, F.multi_head_attention_forward), not by the user's. Only for torch
    functions written in C (Tensor.view, torch.div): no torch frame sits between them and their caller."""
    frame = sys._getframe(1)
    while frame is not None and origin(frame.f_code.co_filename) == "watch":
        frame = frame.f_back
    return frame is not None and origin(frame.f_code.co_filename) == "torch"


def _unique(*functions) -> tuple:
    """Each callable once (Tensor.__truediv__ may be Tensor.div itself): a detector listed twice
    for one function would run twice per call."""
    seen, out = set(), []
    for f in functions:
        if f is not None and id(f) not in seen:
            seen.add(id(f))
            out.append(f)
    return tuple(out)


def _tensor_methods(*names) -> tuple:
    return tuple(getattr(torch.Tensor, n, None) for n in names)


def _non_singleton(shape) -> list[int]:
    return [s for s in shape if s > 1]


def _is_float(t) -> bool:
    return isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel() > 0


# -- l2-normalize-all-dims ------------------------------------------------------------------
def _is_weight(t: torch.Tensor) -> bool:
    """A Parameter, a leaf that requires grad (a hand-made weight), or a view of one."""
    for x in (t, t._base):
        if x is not None and (isinstance(x, nn.Parameter) or (x.is_leaf and x.requires_grad)):
            return True
    return False


def _several_vectors(t: torch.Tensor):
    """The shape of the tensor ``t`` holds, or is a whole flattened view of, when that tensor has
    two or more axes longer than 1 (several vectors, not one); else None. Weights are left alone
    (a Parameter, a leaf that requires grad, a view of either): dividing a weight matrix by its
    Frobenius norm is a method of its own, not features normalised."""
    if _is_weight(t):
        return None
    if len(_non_singleton(t.shape)) >= 2:
        return tuple(t.shape)
    base = t._base  # x.view(-1) / x.flatten() / x.reshape(-1) of a contiguous x
    if base is not None and base.numel() == t.numel() and len(_non_singleton(base.shape)) >= 2:
        return tuple(base.shape)
    return None


_DIVIDE = _unique(
    torch.div,
    torch.true_divide,
    *_tensor_methods("div", "__truediv__", "div_", "__itruediv__", "true_divide", "true_divide_"),
)
_MULTIPLY = _unique(torch.mul, *_tensor_methods("mul", "__mul__", "__rmul__", "mul_", "__imul__"))


class L2NormalizeAllDims(Detector):
    """A tensor of several vectors divided by (or multiplied by the reciprocal of) one number
    equal to its own L2 norm over every element, however that norm was spelled (x.norm(),
    torch.linalg.norm(x), (x ** 2).sum().sqrt(), with or without an epsilon): the whole batch is
    then one unit vector. Also F.normalize over the one axis of a whole flattened tensor."""

    case = "l2-normalize-all-dims"
    pedantic = True
    message = (
        "a tensor of several feature vectors is divided by one L2 norm over all its elements, so the "
        "vectors come out shorter than 1 and depend on the rest of the batch; normalise each vector "
        "with F.normalize(x, dim=1) (the channel / feature axis)"
    )
    RTOL = 1e-3  # an epsilon added to the norm (1e-12 .. 1e-6) stays far inside this

    def functions(self):
        return _unique(*_DIVIDE, *_MULTIPLY, F.normalize)

    def before(self, func, args, kwargs):
        if func is F.normalize:
            return self._normalize(args, kwargs)
        if len(args) < 2 and "other" not in kwargs:
            return
        a, b = args[0], arg(args, kwargs, 1, "other")
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return
        if func in _DIVIDE:
            if kwargs.get("rounding_mode") is not None:
                return
            x, scale, inverse = a, b, False
        else:  # x * (1 / ||x||), in either order
            x, scale = (a, b) if b.numel() == 1 else (b, a)
            inverse = True
        if scale.numel() != 1 or not _is_float(x) or not scale.is_floating_point():
            return
        shape = _several_vectors(x)
        if shape is None or _called_from_torch():
            return
        # one comparison on the device, one sync: scale·‖x‖ (or scale / ‖x‖) against 1
        norm = torch.linalg.vector_norm(x.detach(), dtype=torch.float32)
        s = scale.detach().reshape(()).to(torch.float32)
        value = (s * norm if inverse else s / norm).item()
        if math.isfinite(value) and abs(value - 1.0) <= self.RTOL:
            how = "multiplied by 1 / its" if inverse else "divided by its"
            self.report(f"a tensor of shape {shape} {how} norm over all {x.numel()} elements ({norm.item():.4g})")

    def _normalize(self, args, kwargs):
        x = arg(args, kwargs, 0, "input")
        p = arg(args, kwargs, 1, "p", 2.0)
        if not _is_float(x) or x.dim() != 1 or p != 2:
            return
        shape = _several_vectors(x)
        if shape is not None:
            self.report(f"F.normalize over a flattened tensor of shape {shape}")


# -- interpolate-3d-input ---------------------------------------------------------------------
_IMAGE_CHANNELS = (1, 3, 4)  # grey, RGB, RGBA
_ONE_D_CAPABLE = ("nearest", "nearest-exact", "area")  # "linear" names the 1-D mode: meant as 1-D
_ASPECT = 4  # an image's height and width within a factor of 4 of each other


def _pair(value) -> bool:
    return isinstance(value, (tuple, list)) and len(value) == 2


class Interpolate3dInput(Detector):
    """F.interpolate (nn.Upsample, F.upsample) given a 3-D tensor that is one image, C×H×W:
    either the size or scale factor names two spatial axes (it then raises, naming one), or the
    tensor has an image's channel count (1, 3, 4) and an image's proportions and is resized by a
    mode that also exists in 1-D (nearest, area): only its width changes."""

    case = "interpolate-3d-input"
    pedantic = True
    message = (
        "F.interpolate got a 3-D tensor that looks like one C×H×W image; it reads N×C×W, so only the "
        "width is resized (or a two-number size is refused); add the batch axis: "
        "F.interpolate(img.unsqueeze(0), ...).squeeze(0)"
    )

    def functions(self):
        return (F.interpolate,)

    def before(self, func, args, kwargs):
        x = arg(args, kwargs, 0, "input")
        if not isinstance(x, torch.Tensor) or x.dim() != 3:
            return
        size, scale = arg(args, kwargs, 1, "size"), arg(args, kwargs, 2, "scale_factor")
        if _pair(size) or _pair(scale):
            self.report(
                f"input {tuple(x.shape)} with {'size' if _pair(size) else 'scale_factor'}="
                f"{size if _pair(size) else scale}: two spatial sizes for a tensor with one spatial axis"
            )
            return
        mode = arg(args, kwargs, 3, "mode", "nearest")
        c, h, w = x.shape
        if mode in _ONE_D_CAPABLE and c in _IMAGE_CHANNELS and min(h, w) >= 2 and max(h, w) <= _ASPECT * min(h, w):
            self.report(
                f"input {tuple(x.shape)} read as {c} signals of {h} channels and length {w}; "
                f"mode={mode!r} resizes the width alone"
            )


# -- view-instead-of-permute ------------------------------------------------------------------
class ViewInsteadOfPermute(Detector):
    """view / reshape (method, torch.reshape, view_as, reshape_as, -1 or not) whose result has the
    same axes longer than 1 as its input, in another order (axes of length 1 may come or go:
    (H, W, C) -> (1, C, H, W)): the data is re-cut, not transposed. Calls from torch's own code
    are left alone."""

    case = "view-instead-of-permute"
    pedantic = True
    message = (
        "view/reshape to a permutation of the tensor's own shape keeps the element order, so the new "
        "axes hold scrambled data (HWC read as CHW: stripes of R, G, B); move axes with "
        "permute/transpose (e.g. img.permute(2, 0, 1))"
    )

    def functions(self):
        return _unique(torch.reshape, *_tensor_methods("view", "reshape", "view_as", "reshape_as"))

    def after(self, func, args, kwargs, result, state):
        x = args[0] if args else None
        if not (isinstance(x, torch.Tensor) and isinstance(result, torch.Tensor)):
            return
        if len(args) > 1 and isinstance(args[1], torch.dtype):
            return  # x.view(torch.int32): a reinterpretation of the bytes
        before, after = tuple(x.shape), tuple(result.shape)
        big_before, big_after = _non_singleton(before), _non_singleton(after)
        if big_before == big_after or sorted(big_before) != sorted(big_after):
            return  # the same axes in the same order (only 1s added or removed), or other sizes altogether
        if _called_from_torch():
            return
        self.report(f"{before} -> {after}{self._hint(before, after)}")

    @staticmethod
    def _hint(before, after) -> str:
        """The permute that moves the axes so, where one permutation fits (no repeated sizes, no
        axis of length 1 in the input)."""
        if len(set(before)) != len(before) or 1 in before:
            return ""
        order = tuple(before.index(s) for s in after if s != 1)
        more = "" if len(after) == len(before) else ", then add the axes of length 1"
        return f"; the same axes moved: permute{order}{more}"


# -- train-eval-mode ---------------------------------------------------------------------------
def _mode_dependent(module: nn.Module) -> bool:
    """A module that computes something else in eval(): BatchNorm/InstanceNorm keeping running
    statistics, dropout with p > 0 (as a layer, or inside RNNs and attention)."""
    if isinstance(module, (nn.modules.batchnorm._BatchNorm, nn.modules.instancenorm._InstanceNorm)):
        return bool(module.track_running_stats)
    if isinstance(module, nn.modules.dropout._DropoutNd):
        return module.p > 0
    if isinstance(module, nn.RNNBase):
        return module.dropout > 0 and module.num_layers > 1
    if isinstance(module, nn.MultiheadAttention):
        return module.dropout > 0
    return False


class TrainEvalMode(Detector):
    """A top-level module call, with gradients off (torch.no_grad / inference_mode), of a module
    in training mode holding BatchNorm or dropout that are in training mode too; reported when
    the same module runs so twice with no backward between: that is evaluation (a GAN's or
    MoCo's no-grad forward is followed by a backward before the next one). Calls made by torch's
    own code (swa_utils.update_bn recomputing BatchNorm statistics) are left alone."""

    case = "train-eval-mode"
    pedantic = True
    message = (
        "a model in training mode predicts with gradients off, again and again: its BatchNorm uses each "
        "batch's statistics and its dropout drops, so predictions depend on the batch; call "
        "model.eval() before evaluating (and model.train() after)"
    )

    def functions(self):
        return (*BACKWARD, torch.autograd.grad)

    def after(self, func, args, kwargs, result, state):
        self.backwards += 1

    def start(self):
        self.depth, self.backwards = 0, 0
        self.last = weakref.WeakKeyDictionary()  # module -> backward count at its last no-grad training forward
        self.layers = weakref.WeakKeyDictionary()  # module -> its mode-dependent submodules
        try:
            post = nn_module.register_module_forward_hook(self._post, always_call=True)
        except TypeError:  # before 2.1
            post = nn_module.register_module_forward_hook(self._post)
        self.handles = [nn_module.register_module_forward_pre_hook(self._pre), post]

    def stop(self):
        for h in self.handles:
            h.remove()

    def _pre(self, module, args):
        self.depth += 1
        if self.depth == 1 and module.training and not torch.is_grad_enabled():
            self.watcher.guarded(self, self._evaluating, module)

    def _post(self, module, args, output):
        self.depth = max(0, self.depth - 1)

    def _evaluating(self, module):
        layers = self.layers.get(module)
        if layers is None:
            layers = [m for m in module.modules() if _mode_dependent(m)]
            self.layers[module] = layers
        training = [m for m in layers if m.training]
        if not training:
            return
        site = user_site(2)
        if site is None or origin(self._caller_file()) == "torch":
            return
        seen = self.last.get(module)
        self.last[module] = self.backwards
        if seen == self.backwards:
            names = sorted({type(m).__name__ for m in training})
            self.report(
                f"{type(module).__name__} in training mode under no_grad, twice without a backward "
                f"({', '.join(names)} in training mode)",
                site=site,
            )

    @staticmethod
    def _caller_file() -> str:
        """The file that called the module: the first frame outside the watcher and torch's
        module-call machinery (Module._call_impl / _wrapped_call_impl)."""
        frame = sys._getframe(1)
        while frame is not None:
            name, code = frame.f_code.co_filename, frame.f_code.co_name
            if not (
                origin(name) == "watch"
                or code in ("_call_impl", "_wrapped_call_impl")
                or name.endswith(os.path.join("nn", "modules", "module.py"))
            ):
                return name
            frame = frame.f_back
        return ""


# -- shared-module-reuse -----------------------------------------------------------------------
class SharedModuleReuse(Detector):
    """One module instance with parameters registered twice in the same parent, under two names
    (nn.Sequential(*[layer] * n), nn.ModuleList([block] * n), self.b = self.a): "two layers" that
    are one. Parameter tying (decoder.weight = encoder.weight), parameter-free modules listed
    twice (ReLU) and one module called twice are left alone: those are how sharing is meant."""

    case = "shared-module-reuse"
    pedantic = True
    message = (
        "one module instance is registered as two layers, so both positions share one set of weights "
        "and the model has the capacity of one layer; build a new module per position "
        "([nn.Linear(4, 4) for _ in range(n)], or copy.deepcopy) unless the sharing is meant"
    )

    def start(self):
        self.handles = []
        register = getattr(nn_module, "register_module_module_registration_hook", None)
        if register is not None:  # torch >= 2.0
            self.handles.append(register(self._registered))

    def stop(self):
        for h in self.handles:
            h.remove()

    def _registered(self, module, name, submodule):
        self.watcher.guarded(self, self._check, module, name, submodule)
        return None

    def _check(self, parent, name, submodule):
        if submodule is None or next(submodule.parameters(), None) is None:
            return
        for other, child in parent._modules.items():
            if child is submodule and other != name:
                self.report(
                    f"{type(submodule).__name__} registered as {other!r} and {name!r} of {type(parent).__name__}",
                    site=user_site(2),
                )
                return


# -- cross-entropy-after-softmax -------------------------------------------------------------------
class CrossEntropyAfterSoftmax(Detector):
    """F.cross_entropy (nn.CrossEntropyLoss) given an input whose every row along the class
    axis is a probability distribution (non-negative, summing to 1): the softmax was applied
    already, and the loss applies log-softmax again. Reported at the softmax that made the input
    (the cause: the line to delete) when the watcher saw it run, else at the loss."""

    case = "cross-entropy-after-softmax"
    pedantic = True
    message = (
        "cross_entropy got probabilities (rows non-negative, summing to 1): a softmax ran before the loss, "
        "which applies log-softmax itself, so gradients vanish; pass the raw scores (logits)"
    )
    FLAG = "pitfalls_watch_softmax_site"
    HOPS = 3  # graph nodes between the softmax and the loss's input (a .float(), a view)

    def __init__(self):
        self.recent: dict[int, tuple] = {}  # id(softmax output without a graph) -> (weakref, site)

    def functions(self):
        return (F.cross_entropy, F.softmax, torch.softmax, torch.Tensor.softmax)

    def after(self, func, args, kwargs, result, state):
        if func is F.cross_entropy or not isinstance(result, torch.Tensor):
            return
        site = user_site(2)
        if result.grad_fn is not None:
            result.grad_fn.metadata[self.FLAG] = site
            return
        if len(self.recent) >= 32:
            self.recent = {k: v for k, v in self.recent.items() if v[0]() is not None}
            while len(self.recent) >= 32:
                del self.recent[next(iter(self.recent))]
        self.recent[id(result)] = (weakref.ref(result), site)

    def _softmax_site(self, x):
        entry = self.recent.get(id(x))
        if entry is not None and entry[0]() is x:
            return entry[1]
        todo, hops = [x.grad_fn], 0
        while todo and hops <= self.HOPS:
            nxt = []
            for node in todo:
                if node is None:
                    continue
                site = node.metadata.get(self.FLAG)
                if site is not None:
                    return site
                nxt += [parent for parent, _ in node.next_functions]
            todo, hops = nxt, hops + 1
        return None

    def before(self, func, args, kwargs):
        if func is not F.cross_entropy:
            return
        x = arg(args, kwargs, 0, "input")
        if not _is_float(x):
            return
        classes = 1 if x.dim() >= 2 else 0
        if x.shape[classes] < 2:
            return
        values = x.detach()
        if bool(values.min() >= 0) and torch.allclose(
            values.sum(classes), torch.ones((), dtype=values.dtype, device=values.device), atol=1e-3, rtol=0
        ):
            loss = user_site(2)
            cause = self._softmax_site(x)
            where = f"; the loss is at {shown_path(loss[0])}:{loss[1]}" if cause is not None and loss else ""
            self.report(
                f"input of shape {tuple(x.shape)}: every row along dim {classes} sums to 1{where}", site=cause or loss
            )


# -- kldiv-expects-log-input -------------------------------------------------------------------
class KLDivExpectsLogInput(Detector):
    """F.kl_div (nn.KLDivLoss) whose input, which it reads as log-probabilities (all <= 0), is
    non-negative and not all zero: probabilities (or another non-log quantity) were passed."""

    case = "kldiv-expects-log-input"
    pedantic = True
    message = (
        "kl_div's input must be log-probabilities, and this one is non-negative (probabilities?); the "
        "result is not KL(target || input): pass input.log() or log_softmax(...), and use "
        "reduction='batchmean'"
    )

    def functions(self):
        return (F.kl_div,)

    def before(self, func, args, kwargs):
        x = arg(args, kwargs, 0, "input")
        if not _is_float(x):
            return
        values = x.detach()
        if bool(values.min() >= 0) and bool(values.max() > 0):
            self.report(
                f"input of shape {tuple(x.shape)} lies in [{values.min().item():.3g}, "
                f"{values.max().item():.3g}]; log-probabilities are <= 0"
            )


# -- functional-dropout-training-flag -------------------------------------------------------------
_DROPOUTS = tuple(
    getattr(F, n)
    for n in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")
    if hasattr(F, n)
)
_FRAMES_UP = 8  # how far up from the F.dropout call to look for the module whose forward runs


def _running_module():
    """The nn.Module whose method (forward, or a helper it calls) made the current call: the
    nearest frame outside the watcher and torch with an nn.Module as ``self``."""
    frame, steps = sys._getframe(1), 0
    while frame is not None and steps < _FRAMES_UP:
        if origin(frame.f_code.co_filename) in ("user", "stdlib"):  # not the watcher's, not torch's
            steps += 1
            owner = frame.f_locals.get("self") if "self" in frame.f_code.co_varnames else None
            if isinstance(owner, nn.Module):
                return owner
        frame = frame.f_back
    return None


_written: dict[tuple, object] = {}


def _caller_of(code):
    """The frame that called the running Python function whose code object is ``code``."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code is not code:
        frame = frame.f_back
    return frame.f_back if frame is not None else None


def _call_as_written(caller):
    """The call expression the frame ``caller`` is executing, as its source writes it (an
    ast.Call), or None where the source cannot be read (Python < 3.11, no file). What a
    TorchFunctionMode receives has the defaults filled in; this tells what was written."""
    if caller is None or not hasattr(caller.f_code, "co_positions"):
        return None
    key = (caller.f_code, caller.f_lasti)
    if key in _written:
        return _written[key]
    call = None
    try:
        line, end, col, end_col = list(caller.f_code.co_positions())[caller.f_lasti // 2]
        lines = [text.encode() for text in linecache.getlines(caller.f_code.co_filename)[line - 1 : end]]
        if len(lines) == end - line + 1:  # offsets are in UTF-8 bytes
            text = (
                lines[0][col:end_col]
                if len(lines) == 1
                else lines[0][col:] + b"".join(lines[1:-1]) + lines[-1][:end_col]
            )
            node = ast.parse(text.decode(), mode="eval").body
            call = node if isinstance(node, ast.Call) else None
    except (IndexError, TypeError, ValueError, SyntaxError):
        call = None
    _written[key] = call
    return call


class FunctionalDropoutTrainingFlag(Detector):
    """Dropout that ignores the eval mode of the module whose forward runs it: F.dropout (and its
    1d/2d/3d/alpha forms) with p > 0 and training left at its default (the call as written passes
    no third argument and no ``training=``), or an nn.Dropout built inside the forward (it starts
    in training mode and no eval() reaches it). An explicit training=True (Monte Carlo dropout), a
    registered dropout layer switched back to train() on purpose, and a call whose source cannot be
    read are left alone."""

    case = "functional-dropout-training-flag"
    pedantic = True
    message = (
        "dropout runs in training mode inside a module in eval mode: F.dropout's default is "
        "training=True (and a layer built in forward is never switched); pass training=self.training, "
        "or register an nn.Dropout layer in __init__"
    )

    def functions(self):
        return _DROPOUTS

    def before(self, func, args, kwargs):
        p = arg(args, kwargs, 1, "p", 0.5)
        if not p or arg(args, kwargs, 2, "training", True) is not True:
            return
        module = _running_module()
        if module is None or module.training:
            return
        caller = _caller_of(getattr(func, "__code__", None))
        if caller is None:
            return
        if origin(caller.f_code.co_filename) == "torch":  # nn.Dropout.forward passes self.training
            layer = caller.f_locals.get("self")
            if (
                isinstance(layer, nn.modules.dropout._DropoutNd)
                and layer.training
                and not any(m is layer for m in module.modules())
            ):
                self.report(
                    f"a {type(layer).__name__}(p={p}) built inside the forward of {type(module).__name__} "
                    "(eval mode) is in training mode"
                )
            return
        call = _call_as_written(caller)
        if call is None:
            return
        given = (
            len(call.args) >= 3
            or any(isinstance(a, ast.Starred) for a in call.args)
            or any(k.arg in ("training", None) for k in call.keywords)
        )
        if not given:
            self.report(
                f"{func.__name__}(p={p}) without training= in the forward of {type(module).__name__}, "
                "which is in eval mode"
            )


# -- missing-zero-grad ---------------------------------------------------------------------------
class MissingZeroGrad(Detector):
    """optimizer.step() on gradients that backward added to the very gradients of the previous
    step: the same .grad tensors, written since, and never reset in between (zero_grad with or
    without set_to_none, p.grad = None, p.grad.zero_(), foreach zeroing, p.grad.copy_(...)). Steps
    with a closure (LBFGS: the closure zeroes) are left alone."""

    case = "missing-zero-grad"
    pedantic = True
    message = (
        "optimizer.step() used gradients that still hold the previous steps' gradients: nothing reset "
        ".grad between steps, and backward() adds to it; call optimizer.zero_grad() each step"
    )

    def functions(self):
        # what resets a gradient in place: zero_ (zero_grad(set_to_none=False), p.grad.zero_()),
        # foreach zeroing, fill_(0), and copy_ (a gradient overwritten: averaged, or computed elsewhere)
        return _unique(
            torch.Tensor.zero_, getattr(torch, "_foreach_zero_", None), torch.Tensor.fill_, torch.Tensor.copy_
        )

    def start(self):
        self.stepped = weakref.WeakKeyDictionary()  # optimizer -> {id(param): (weakref(grad), version)}
        self.grads: dict[int, tuple] = {}  # data_ptr of a stepped grad -> (optimizer ref, id(param))
        self.handles = [
            optim.register_optimizer_step_pre_hook(self._pre),
            optim.register_optimizer_step_post_hook(self._post),
        ]

    def stop(self):
        for h in self.handles:
            h.remove()

    def before(self, func, args, kwargs):
        if not self.grads:
            return
        first = args[0] if args else None
        if func is torch.Tensor.fill_ and arg(args, kwargs, 1, "value") != 0:
            return
        tensors = first if isinstance(first, (list, tuple)) else (first,)
        for t in tensors:
            if isinstance(t, torch.Tensor):
                entry = self.grads.pop(t.data_ptr(), None)
                if entry is not None:
                    opt = entry[0]()
                    if opt is not None:
                        self.stepped.get(opt, {}).pop(entry[1], None)

    def _pre(self, opt, args, kwargs):
        self.watcher.guarded(self, self._check, opt, args, kwargs)

    def _post(self, opt, args, kwargs):
        self.watcher.guarded(self, self._remember, opt)

    def _params(self, opt):
        for group in opt.param_groups:
            for p in group["params"]:
                if p.grad is not None and not p.grad.is_sparse:
                    yield p

    def _check(self, opt, args, kwargs):
        closure = kwargs.get("closure", args[1] if len(args) > 1 else None)  # args[0] is the optimizer
        if closure is not None:
            self.stepped.pop(opt, None)
            return
        last = self.stepped.get(opt)
        if not last:
            return
        carried = 0
        for p in self._params(opt):
            entry = last.get(id(p))
            if entry is not None and entry[0]() is p.grad and p.grad._version != entry[1]:
                carried += 1
        if carried:
            self.report(
                f"{type(opt).__name__}.step(): {carried} gradient(s) accumulated on top of the previous "
                "step's, never reset",
                site=user_site(2),
            )

    def _remember(self, opt):
        ref = weakref.ref(opt)
        self.grads = {ptr: entry for ptr, entry in self.grads.items() if entry[0]() not in (opt, None)}
        seen = {}
        for p in self._params(opt):
            seen[id(p)] = (weakref.ref(p.grad), p.grad._version)
            self.grads[p.grad.data_ptr()] = (ref, id(p))
        self.stepped[opt] = seen
