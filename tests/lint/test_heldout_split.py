"""Each precision measurement's split (benchmarks/lint_heldout.toml, lint_heldout_round2.toml,
lint_heldout_round3.toml, lint_heldout_round4.toml, lint_heldout_round5.toml, lint_heldout_round6.toml,
lint_heldout_round7.toml, lint_heldout_round8.toml, lint_heldout_round9.toml) is the one its recorded
seed gives, its halves do not overlap, no library the rules were tuned on before is in it, and each round
shares no library with the rounds before it."""

from __future__ import annotations

import re
import sys

import pytest
import tomllib
from planting import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

from lint_heldout import RECORDS, names, split  # noqa: E402

# the fifteen libraries of benchmarks/lint_review.md and lint_review_untuned.md
TUNED_ON = {
    "torchvision", "timm", "pytorch-image-models", "lightning", "pytorch-lightning", "transformers", "accelerate",
    "diffusers", "einops", "kornia", "mmengine", "peft", "ignite", "sentence-transformers", "ao", "torchao",
    "torchmetrics", "ultralytics",
}  # fmt: skip


def _halves(path):
    record = tomllib.loads(path.read_text(encoding="utf-8"))
    return record, names(record["tuning"]["libraries"]), names(record["held_out"]["libraries"])


def _plain(name: str) -> str:
    """``owner/repo`` or a package folder, as one comparable word: ``pytorch_geometric`` -> ``pytorchgeometric``."""
    return re.sub(r"[^a-z0-9]", "", name.rsplit("/", 1)[-1].lower())


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.name)
def test_the_recorded_split_is_the_seeds(path):
    record, tuning, held_out = _halves(path)
    assert not set(tuning) & set(held_out) and len(tuning) + len(held_out) >= 30
    assert split(tuning + held_out, record["split"]["seed"]) == (tuning, held_out)
    assert not {_plain(name) for name in tuning + held_out} & {_plain(name) for name in TUNED_ON}


@pytest.mark.parametrize("later", range(1, len(RECORDS)), ids=lambda i: RECORDS[i].name)
def test_each_round_is_new_code(later):
    def plain_names(path):
        _, *halves = _halves(path)
        return {_plain(n) for half in halves for n in half}

    earlier = set().union(*(plain_names(path) for path in RECORDS[:later]))
    assert not plain_names(RECORDS[later]) & earlier
