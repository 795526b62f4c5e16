"""The precision measurement's split (benchmarks/lint_heldout.toml) is the one its recorded seed
gives, its halves do not overlap, and no library the rules were tuned on before is in it."""

from __future__ import annotations

import sys

import tomllib
from planting import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

from lint_heldout import RECORD, split  # noqa: E402

# the fifteen libraries of benchmarks/lint_review.md and lint_review_untuned.md
TUNED_ON = {
    "torchvision", "timm", "pytorch-image-models", "lightning", "pytorch-lightning", "transformers", "accelerate",
    "diffusers", "einops", "kornia", "mmengine", "peft", "ignite", "sentence-transformers", "ao", "torchao",
    "torchmetrics", "ultralytics",
}  # fmt: skip


def test_the_recorded_split_is_the_seeds():
    record = tomllib.loads(RECORD.read_text(encoding="utf-8"))
    tuning, held_out = record["tuning"]["libraries"], record["held_out"]["libraries"]
    assert not set(tuning) & set(held_out) and len(tuning) + len(held_out) >= 30
    assert split(tuning + held_out, record["split"]["seed"]) == (tuning, held_out)
    assert not {name.split("/")[1].lower() for name in tuning + held_out} & TUNED_ON
