"""The stamp under a cell's outputs: the torch version and the devices (by name) they came from."""

from __future__ import annotations

import html
from dataclasses import dataclass

import nbformat
import torch

from torch_pitfalls.run.devices import device_names

STAMP_KEY = "torch_pitfalls"  # metadata key of the stamp, on stamp outputs and the notebook


@dataclass(frozen=True)
class Stamp:
    """Where outputs came from: this process's torch and the names of its devices."""

    torch: str
    names: dict[str, str]

    @classmethod
    def here(cls) -> "Stamp":
        return cls(torch.__version__, device_names())

    def text(self, devices: list[str]) -> str:
        where = ", ".join(f"{d} ({self.names[d]})" if d in self.names else d for d in devices)
        return f"torch {self.torch} · {where}"

    def output(self, devices: list[str]) -> nbformat.NotebookNode:
        text = self.text(devices)
        return nbformat.v4.new_output(
            "display_data",
            data={
                "text/plain": f"[output of {text}]",
                # the words a reader reads outside <samp>, the machine's own names inside: the zh
                # edition translates the words (docs.site.zh) and keeps the names
                "text/html": f'<p class="pitfalls-stamp">output of <samp>{html.escape(text)}</samp></p>',
            },
            metadata={STAMP_KEY: {"torch": self.torch, "devices": devices}},
        )
