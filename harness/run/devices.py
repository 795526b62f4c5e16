"""The torch under test and the devices this machine can run it on (what a run records and skips by)."""

from __future__ import annotations

import platform


def torch_version() -> str:
    import torch

    return torch.__version__


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def device_unavailable_reason(device: str) -> str | None:
    """Why this machine cannot run ``device``, or None when it can."""
    import torch

    if device == "cpu":
        return None
    if device == "cuda":
        if torch.version.cuda is None:
            return f"CUDA not available: torch {torch.__version__} is built without CUDA"
        if not torch.cuda.is_available():
            return f"CUDA not available: torch {torch.__version__} (CUDA {torch.version.cuda}) sees no GPU"
        return None
    raise ValueError(f"unknown device {device!r}")


def device_names() -> dict[str, str]:
    """A readable name for every device this run can use."""
    import torch

    model = cpu_model()
    names = {"cpu": f"{model} ({platform.machine()})" if model else platform.machine()}
    if device_unavailable_reason("cuda") is None:
        names["cuda"] = torch.cuda.get_device_name(0)
    return names


def cpu_model() -> str | None:
    """The CPU model where Linux says it (``platform.processor()`` is often empty there)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None
