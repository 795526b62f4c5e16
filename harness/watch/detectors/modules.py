"""unregistered-tensor-attribute: a tensor kept as a plain module attribute is not moved or cast
by ``module.to(...)`` and is missing from ``state_dict()``. Seen at either: a conversion
(``.to()``, ``.cuda()``, ``.double()``, even one that changes nothing, as on a CPU-only run) or a
``state_dict()`` (a checkpoint that will not hold it)."""

from __future__ import annotations

import torch
from torch import nn

from torch_pitfalls.watch.detectors.base import ClassPatch, Detector
from torch_pitfalls.watch.sites import user_site


def plain_tensor_attributes(module: nn.Module):
    for name, value in vars(module).items():
        if isinstance(value, torch.Tensor) and not isinstance(value, nn.Parameter) and not name.startswith("__"):
            yield name, value


def reference(module: nn.Module) -> torch.Tensor | None:
    """A registered tensor of the module (its own first, else a child's): what .to() converted."""
    for t in (
        *module.parameters(recurse=False),
        *module.buffers(recurse=False),
        *module.parameters(),
        *module.buffers(),
    ):
        return t
    return None


class UnregisteredTensorAttribute(Detector):
    case = "unregistered-tensor-attribute"
    message = (
        "a tensor stored as a plain module attribute is skipped by .to()/.cuda()/.double() (left on its "
        "device and dtype) and missing from state_dict(); register it: self.register_buffer(name, tensor)"
    )

    def start(self):
        self.depth = 0
        self.patches = [
            ClassPatch(nn.Module, name, self._wrap(name == "state_dict")) for name in ("_apply", "state_dict")
        ]

    def _wrap(self, saving: bool):
        detector = self

        def make(original):
            def wrapper(module, *args, **kwargs):
                detector.depth += 1
                try:
                    return original(module, *args, **kwargs)
                finally:
                    detector.depth -= 1
                    if detector.depth == 0 and not detector.watcher.busy:
                        detector.watcher.guarded(detector, detector.check, module, saving)

            return wrapper

        return make

    def stop(self):
        for patch in self.patches:
            patch.restore()

    def check(self, root: nn.Module, saving: bool = False):
        site = None
        for qualified, module in root.named_modules():
            ref = reference(module)
            if ref is None or module._forward_pre_hooks:
                continue  # a pre-hook recomputes its attributes each forward (weight_norm, pruning)
            for name, value in plain_tensor_attributes(module):
                # Whether or not this conversion changed anything (cpu to cpu), the attribute was
                # skipped: on another device or dtype it is left behind.
                site = site or user_site(2)
                owner = f"{type(module).__name__}.{name}" if not qualified else f"{qualified}.{name}"
                moved = value.device != ref.device
                cast = value.is_floating_point() and ref.is_floating_point() and value.dtype != ref.dtype
                if saving:
                    state = "not in this state_dict"
                else:
                    state = "left behind" if moved or cast else "not converted"
                self.report(
                    f"{owner} ({state}: {value.dtype} on {value.device}; the module's tensors are "
                    f"{ref.dtype} on {ref.device})",
                    site=site,
                )
