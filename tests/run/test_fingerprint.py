"""Fingerprints keep what a user observes and mask what changes from run to run."""

from __future__ import annotations

import warnings

import pytest
import torch

from torch_pitfalls.observation import observe
from torch_pitfalls.run.fingerprint import fingerprint, mask, value_summary


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<Foo object at 0x7f3a2b1c9d00>", "<Foo object at 0x…>"),
        ("No module named 'x' in /tmp/pitfalls-cwd-ab12_c/x.py", "No module named 'x' in <tmp>"),
        (
            "File /root/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py, line 3",
            "File <site-packages>/torch/nn/modules/module.py, line 3",
        ),
        ("/usr/lib/python3.12/argparse.py", "<python-lib>/argparse.py"),
        ("took 12.5 ms then 3 s", "took <time> then <time>"),
        ("worker pid=4242 died", "worker id=… died"),
        ("expected scalar type Long but found Float", "expected scalar type Long but found Float"),
        ("size 224 is larger than 200", "size 224 is larger than 200"),
        (
            "deprecated on 0-D tensors. (Triggered internally at ../aten/src/ATen/native/TensorShape.cpp:3691.)",
            "deprecated on 0-D tensors. (Triggered internally at <torch source>)",
        ),
        (
            "deprecated. (Triggered internally at /pytorch/aten/src/ATen/nat…",  # cut short in an older record
            "deprecated. (Triggered internally at <torch source>)",
        ),
    ],
)
def test_volatile_text_is_masked_and_the_rest_kept(text, expected):
    assert mask(text) == expected


def test_a_tensor_is_summarised_by_dtype_shape_and_small_values():
    assert value_summary(torch.tensor([[1.0, float("nan")]])) == {
        "type": "Tensor",
        "dtype": "float32",
        "shape": [1, 2],
        "device": "cpu",
        "values": [1.0, "nan"],
    }
    big = value_summary(torch.ones(100, dtype=torch.float64))
    assert "values" not in big and big["sum"] == 100.0


def test_a_run_is_fingerprinted_by_exception_warnings_and_value():
    def warns_then_raises():
        warnings.warn("deprecated at 0xdeadbeef", FutureWarning)
        warnings.warn("deprecated at 0xdeadbeef", FutureWarning)  # once: a loop is one behaviour
        raise RuntimeError("expected scalar type Long\nbut found Float")

    fp = fingerprint(observe(warns_then_raises))
    assert fp == {
        "error": {"type": "RuntimeError", "message": "expected scalar type Long"},
        "warnings": [{"category": "FutureWarning", "message": "deprecated at 0x…"}],
        "value": None,
    }


def test_a_case_can_declare_what_is_stable_about_its_value():
    run = observe(lambda: torch.rand(3))
    assert fingerprint(run, stable=lambda v: {"shape": list(v.shape)})["value"] == {"shape": [3]}


def test_old_records_compare_with_todays_masks():
    from torch_pitfalls.run.fingerprint import remask

    old = {
        "error": None,
        "value": None,
        "warnings": [
            {"category": "UserWarning", "message": "x (Triggered internally at ../aten/a.cpp:1.)"},
            {"category": "UserWarning", "message": "x (Triggered internally at /pytorch/aten/a.cpp:2.)"},
        ],
    }
    assert remask(old)["warnings"] == [
        {"category": "UserWarning", "message": "x (Triggered internally at <torch source>)"}
    ]
