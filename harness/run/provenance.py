"""Where a report was made, in enough detail for a reader to trust or doubt a cell.

A CUDA cell from someone else's machine means little without the GPU model, the CUDA runtime
torch was built with, the driver, cuDNN and how torch was installed: those are recorded here,
once per report. Every field is read, never assumed; what this machine cannot say is None.
"""

from __future__ import annotations

import json
import os
import platform
from importlib import metadata

from torch_pitfalls.run.devices import cpu_model


def _dist_info(name: str) -> dict:
    """How a distribution was installed: its wheel tags, installer, and index or file."""
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return {"version": None, "wheel_tags": [], "installer": None, "source": None}
    wheel = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")]
    direct = dist.read_text("direct_url.json")
    source = None
    if direct:  # a local wheel or a checkout: its kind, not the path (it names the user's disk)
        info = json.loads(direct)
        source = "editable" if info.get("dir_info", {}).get("editable") else info.get("url", "").split(":", 1)[0]
    return {
        "version": dist.version,
        "wheel_tags": tags,
        "installer": (dist.read_text("INSTALLER") or "").strip() or None,
        "source": source or "index",
    }


def _accelerator(torch) -> dict | None:
    """The GPU the CUDA (or ROCm) lane ran on, or None where there is none."""
    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(0)
    driver = getattr(torch._C, "_cuda_getDriverVersion", None)
    try:
        driver = driver() if driver else None
    except RuntimeError:
        driver = None
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "model": torch.cuda.get_device_name(0),
        "count": torch.cuda.device_count(),
        "capability": ".".join(map(str, torch.cuda.get_device_capability(0))),
        "memory_gib": round(props.total_memory / 2**30, 1),
        # the driver's CUDA API version as the driver reports it (e.g. 12040 = 12.4)
        "driver_api": driver,
        "cudnn": cudnn,
    }


def provenance() -> dict:
    import torch

    try:
        import numpy

        numpy_version = numpy.__version__
    except ImportError:
        numpy_version = None
    libc = " ".join(filter(None, platform.libc_ver())) or None
    return {
        "python": {"version": platform.python_version(), "implementation": platform.python_implementation()},
        "os": {"system": platform.system(), "release": platform.release(), "machine": platform.machine(), "libc": libc},
        "cpu": {"model": cpu_model(), "count": os.cpu_count()},
        "torch": {
            "version": torch.__version__,
            "git": getattr(torch.version, "git_version", None),
            "cuda": torch.version.cuda,
            "hip": getattr(torch.version, "hip", None),
            "debug": bool(getattr(torch.version, "debug", False)),
            "install": _dist_info("torch"),
        },
        "numpy": numpy_version,
        "accelerator": _accelerator(torch),
    }


def describe(prov: dict | None, kind: str) -> str:
    """One line a reader can weigh a cell by: the device, its runtime, and how torch was installed."""
    if not prov:
        return "a machine whose report records no provenance"
    parts = []
    acc = prov.get("accelerator")
    if kind != "cpu" and acc:
        gpu = f"{acc['model']} (compute capability {acc['capability']}, {acc['memory_gib']} GiB"
        if acc.get("driver_api"):
            gpu += f", driver CUDA API {acc['driver_api'] // 1000}.{acc['driver_api'] % 1000 // 10}"
        if acc.get("cudnn"):
            gpu += f", cuDNN {acc['cudnn']}"
        parts.append(gpu + ")")
    elif kind != "cpu":
        parts.append(f"{kind} (no accelerator recorded)")
    cpu = prov.get("cpu") or {}
    parts.append(f"CPU {cpu.get('model') or 'unknown'} ×{cpu.get('count') or '?'}")
    torch = prov.get("torch") or {}
    runtime = (f", CUDA {torch['cuda']}" if torch.get("cuda") else "") + (
        f", ROCm {torch['hip']}" if torch.get("hip") else ""
    )
    tags = ", ".join((torch.get("install") or {}).get("wheel_tags") or []) or "no wheel tag"
    parts.append(f"torch {torch.get('version')}{runtime} ({tags})")
    py, os_ = prov.get("python") or {}, prov.get("os") or {}
    parts.append(f"Python {py.get('version')}, {os_.get('system')} {os_.get('machine')}")
    return "; ".join(parts)
