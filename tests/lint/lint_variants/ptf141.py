"""PTF141 (onnx-export-dynamo-default): torch.onnx.export without an explicit dynamo=."""

PITFALL = {
    "legacy_call_with_dynamic_axes": """
import torch
def export(model, path):
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17)
""",
    "from_import": """
import torch
from torch.onnx import export
def to_onnx(net, sample, f):
    net.eval()
    export(net, sample, f, opset_version=13)
""",
    "aliased_module": """
import torch
import torch.onnx as tonnx
def save(model, dummy):
    tonnx.export(model, dummy, "model.onnx", do_constant_folding=True)
""",
    "keyword_arguments_only": """
import torch
from torch import nn
model = nn.Linear(3, 2).eval()
torch.onnx.export(model=model, args=(torch.ones(4, 3),), f="linear.onnx", input_names=["x"])
""",
    "in_a_method": """
import torch
class Exporter:
    def __init__(self, model):
        self.model = model
    def run(self, path, example):
        with torch.no_grad():
            torch.onnx.export(self.model, example, path, export_params=True, verbose=False)
""",
}

NEAR_MISS = {
    "dynamo_false_pinned": """
import torch
def export(model, x, path):
    torch.onnx.export(model, (x,), path, dynamo=False, dynamic_axes={"x": {0: "batch"}})
""",
    "dynamo_true": """
import torch
def export(model, x, path):
    batch = torch.export.Dim("batch")
    torch.onnx.export(model, (x,), path, dynamo=True, dynamic_shapes=({0: batch},))
""",
    "options_forwarded": """
import torch
def export(model, x, path, **options):
    torch.onnx.export(model, (x,), path, **options)
""",
    "another_librarys_export": """
from ultralytics import YOLO
def export(weights):
    YOLO(weights).export(format="onnx", opset=12)
""",
    "torch_export_not_onnx": """
import torch
def capture(model, x):
    return torch.export.export(model, (x,))
""",
}

SEEN = {
    "legacy_call_with_dynamic_axes": "https://github.com/open-edge-platform/anomalib/issues/3050 (Onnx export fails for torch 2.9.0 and above: No module named 'onnxscript')",
    "dynamo_false_pinned": "https://github.com/unit8co/darts/pull/2930 (PyTorch 2.9 changed the dynamo default to True; darts keeps dynamo=False while RNN modules are unsupported)",
    "keyword_arguments_only": "https://github.com/leggedrobotics/rsl_rl/pull/127 (torch 2.9 export defaults to torch.export, which imports onnxscript eagerly; the alternative named is dynamo=False)",
    "from_import": "PriorLabs/TabPFN#554 (the case's source: set dynamo=False after torch 2.9 changed the default)",
}

NEAR_MISS["exporter_chosen_by_a_flag"] = """
import torch
def export(model, x, path, new_exporter):
    if new_exporter:
        torch.onnx.export(model, (x,), path, dynamo=True, dynamic_shapes=({0: torch.export.Dim("batch")},))
    else:
        torch.onnx.export(model, (x,), path, dynamic_axes={"x": {0: "batch"}})
"""
SEEN["exporter_chosen_by_a_flag"] = (
    "the case's own fix (cases/upgrade/onnx_export_dynamo_default.py): the old exporter kept for releases "
    "before 2.8, chosen by a branch whose other side passes dynamo=True (here a flag chooses)"
)
