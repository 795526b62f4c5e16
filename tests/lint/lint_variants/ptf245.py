"""PTF245 (device-cuda-vs-cuda0): a tensor's .device compared with the index-less cuda device."""

PITFALL = {
    "assert_on_device": """
import torch
def check(batch: torch.Tensor):
    device = torch.device("cuda")
    x = batch.to(device, non_blocking=True)
    assert x.device == device
    return x
""",
    "string_compare": """
import torch
def maybe_pin(x: torch.Tensor):
    if x.device == "cuda":
        return x
    return x.pin_memory()
""",
    "parameter_device": """
import torch
from torch import nn
net = nn.Linear(3, 3).cuda()
on_gpu = next(net.parameters()).device == torch.device("cuda")
""",
    "device_from_type": """
import torch
def same_place(a, b):
    x = torch.zeros(2, device=a.device)
    kind = torch.device(b.device.type)
    return x.device == kind
""",
    "config_device_ifexp": """
import torch
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
def gather(chunks):
    out = torch.cat(chunks)
    if out.device != DEVICE:
        raise RuntimeError("chunks on the wrong device")
    return out
""",
    "indexed_vs_plain": """
import torch
cfg = torch.device("cuda")
gpu0 = torch.device("cuda", 0)
print(cfg == gpu0)
""",
    "str_of_device": """
import torch
def on_cuda(t):
    w = torch.ones(2, device=t.device)
    return str(w.device) == "cuda"
""",
}

NEAR_MISS = {
    "compare_types": """
import torch
def on_cuda(x: torch.Tensor):
    return x.device.type == "cuda"
""",
    "indexed_device": """
import torch
def check(x: torch.Tensor):
    return x.device == torch.device("cuda:0") or x.device == torch.device("cuda", 1)
""",
    "cpu_device": """
import torch
def on_cpu(x: torch.Tensor):
    return x.device == torch.device("cpu")
""",
    "guarded_move": """
import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
def prepare(x: torch.Tensor):
    if x.device != device:
        x = x.to(device)
    return x
""",
    "two_plain_names": """
import torch
a = torch.device("cuda")
b = torch.device("cuda")
same = a == b
""",
    "is_cuda": """
import torch
def on_cuda(x: torch.Tensor):
    return x.is_cuda
""",
}

PREVIEW = {
    "unknown_receiver": """
import torch
def on_gpu(batch):
    return batch.device == torch.device("cuda")
""",
}

NEAR_MISS["config_string"] = """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda")
args = parser.parse_args()
if args.device == "cuda" and not torch.cuda.is_available():
    raise RuntimeError("no GPU")
"""

SEEN = {
    "assert_on_device": "https://github.com/dynamiqs/dynamiqs/pull/337 (x = torch.randn(3, device='cuda'); x.device == torch.device('cuda') is False)",
    "parameter_device": "https://github.com/Atharva-Phatak/torchflare/issues/11 (checking a model's device; use is_cuda)",
    "indexed_vs_plain": "https://github.com/dynamiqs/dynamiqs/pull/337 (H.to('cuda') vs 'cuda:0' compared as devices)",
    "guarded_move": "common in training scripts: if x.device != device: x = x.to(device) (the always-true test only repeats a no-op move)",
    "config_string": "pyg-team/pytorch_geometric benchmark/inference/inference_benchmark.py (args.device == 'cuda': an argparse string)",
    "compare_types": "https://github.com/dynamiqs/dynamiqs/pull/337 (torch_device.type == 'cuda'), the fix",
}
