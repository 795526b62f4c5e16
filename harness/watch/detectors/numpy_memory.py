"""from-numpy-shares-memory: a tensor from ``torch.from_numpy`` (or ``torch.as_tensor`` of an
array) shares the array's memory, so an in-place op on it rewrites the NumPy data."""

from __future__ import annotations

import weakref

import torch

from torch_pitfalls.watch.detectors.base import Detector

# Every public in-place Tensor method (add_, sub_, mul_, clamp_, copy_, ...): `x -= m` arrives as sub_.
INPLACE = tuple(
    getattr(torch.Tensor, n)
    for n in dir(torch.Tensor)
    if n.endswith("_") and not n.startswith("_") and callable(getattr(torch.Tensor, n, None))
)


def storage_address(t: torch.Tensor) -> int:
    # untyped_storage() from 2.0; 1.13 has storage() only
    return (t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()).data_ptr()


class FromNumpySharesMemory(Detector):
    case = "from-numpy-shares-memory"
    message = (
        "an in-place op writes into a tensor that shares memory with a NumPy array (torch.from_numpy / "
        "torch.as_tensor), so the array changes too; work out of place, or copy first (torch.tensor(a))"
    )

    def functions(self):
        return (torch.as_tensor,)  # the in-place ops only once an array is shared (_remember)

    def start(self):
        self.shared: dict[int, weakref.ref] = {}  # storage address -> the array it belongs to
        self.original = torch.from_numpy
        detector = self

        def from_numpy(array):
            tensor = detector.original(array)
            detector.watcher.guarded(detector, detector._remember, array, tensor)
            return tensor

        torch.from_numpy = from_numpy

    def stop(self):
        if torch.from_numpy is not self.original:
            torch.from_numpy = self.original

    def _remember(self, array, tensor):
        key = storage_address(tensor)
        if key:
            if not self.shared:
                self.watcher.watch_functions(self, INPLACE)
            self.shared[key] = weakref.ref(array, lambda _, k=key: self.shared.pop(k, None))

    def after(self, func, args, kwargs, result, state):
        if func is torch.as_tensor:
            import numpy as np

            array = args[0] if args else kwargs.get("data")
            if (
                isinstance(array, np.ndarray)
                and isinstance(result, torch.Tensor)
                and result.device.type == "cpu"
                and result.data_ptr() == array.__array_interface__["data"][0]
            ):
                self._remember(array, result)

    def before(self, func, args, kwargs):
        if func is torch.as_tensor or not self.shared:
            return
        x = args[0] if args else None
        if isinstance(x, torch.Tensor) and x.device.type == "cpu":
            ref = self.shared.get(storage_address(x))
            if ref is not None and ref() is not None:
                self.report(
                    f"Tensor.{func.__name__} on a tensor of shape {tuple(x.shape)} over a NumPy array "
                    f"of shape {ref().shape}"
                )
