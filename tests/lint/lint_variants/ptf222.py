"""PTF222 (fp16-gradient-underflow): backward() on an unscaled loss in float16 training."""

PITFALL = {
    "autocast_cuda_default_dtype": """
import torch
import torch.nn.functional as F
def train_one_epoch(model, loader, optimizer):
    for images, targets in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = F.cross_entropy(model(images.cuda()), targets.cuda())
        loss.backward()
        optimizer.step()
""",
    "amp_autocast_device_type_keyword": """
import torch
from torch.amp import autocast
def train(model, loader, opt, criterion):
    model.train()
    for batch in loader:
        with autocast(device_type="cuda"):
            outputs = model(batch["x"])
            loss = criterion(outputs, batch["y"])
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
    "explicit_float16_dtype": """
import torch
def finetune_step(model, inputs, optimizer, device):
    with torch.amp.autocast(device, dtype=torch.float16):
        loss = model(**inputs).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
    "cuda_amp_autocast_backward_inside": """
import torch
from torch.cuda.amp import autocast
def step(net, x, y, optim):
    with autocast():
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
    optim.step()
""",
    "model_converted_whole_with_half": """
import torch
from torch import nn
model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).cuda().half()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
def train_step(x, y):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x.half()), y)
    loss.backward()
    optimizer.step()
""",
    "half_weights_made_by_a_helper": """
import torch
def make_weights(n, dtype):
    w = torch.randn(n, n, dtype=dtype, device="cuda", requires_grad=True)
    b = torch.zeros(n, dtype=dtype, device="cuda", requires_grad=True)
    return w, b
def fit(x, y):
    w, b = make_weights(64, torch.float16)
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    return w.grad, b.grad
""",
}

NEAR_MISS = {
    "grad_scaler": """
import torch
import torch.nn.functional as F
scaler = torch.amp.GradScaler("cuda")
def train_one_epoch(model, loader, optimizer):
    for images, targets in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = F.cross_entropy(model(images), targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
    "bfloat16_autocast": """
import torch
import torch.nn.functional as F
def train_one_epoch(model, loader, optimizer):
    for images, targets in loader:
        optimizer.zero_grad()
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(images), targets)
        loss.backward()
        optimizer.step()
""",
    "cpu_autocast": """
import torch
import torch.nn.functional as F
def train_step(model, x, y, optimizer):
    with torch.autocast("cpu"):
        loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
""",
    "fp16_inference_only": """
import torch
@torch.no_grad()
def predict(model, x):
    with torch.autocast("cuda"):
        return model(x).argmax(-1)
""",
    "accelerate_scales_itself": """
import torch
from accelerate import Accelerator
accelerator = Accelerator(mixed_precision="fp16")
def train(model, loader, optimizer):
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for x, y in loader:
        with accelerator.autocast():
            loss = torch.nn.functional.cross_entropy(model(x), y)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
""",
    "autocast_disabled": """
import torch
def train_step(model, x, y, optimizer):
    with torch.autocast("cuda", enabled=False):
        loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
""",
    "scaled_by_hand": """
import torch
SCALE = 2.0 ** 14
def step(model, x, y, optimizer):
    with torch.autocast("cuda"):
        loss = torch.nn.functional.mse_loss(model(x), y)
    (loss * SCALE).backward()
    for p in model.parameters():
        p.grad.div_(SCALE)
    optimizer.step()
""",
    "half_teacher_frozen": """
import torch
from torch import nn
teacher = nn.Linear(32, 10).cuda().half()
teacher.requires_grad_(False)
student = nn.Linear(32, 10).cuda()
def distill(x, opt):
    with torch.no_grad():
        target = teacher(x.half()).float()
    loss = nn.functional.mse_loss(student(x), target)
    loss.backward()
    opt.step()
""",
    "half_model_of_another_function": """
import torch
from torch import nn
def export_half(path):
    model = nn.Linear(8, 8).cuda().half()
    torch.save(model.state_dict(), path)
def train_step(x, y, opt):
    model = nn.Linear(8, 8).cuda()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
""",
    "one_step_in_a_unit_test": """
import torch
from torch import nn
def test_ema_fp16():
    model = nn.Linear(4, 4).cuda().half()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss = model(torch.randn(4, device="cuda").half()).sum()
    loss.backward()
    opt.step()
""",
}

SEEN = {
    "amp_autocast_device_type_keyword": "https://github.com/engichang1467/Open-Rig3R/issues/35 ('autocast defaults to fp16 with no GradScaler': with autocast(device_type=str(device)) in train.py, no scaler in the file)",
    "explicit_float16_dtype": "https://github.com/huggingface/diffusers/pull/13539 (training under torch.amp.autocast(torch_device, dtype=torch.float16) lost its gradients; switched to bfloat16)",
    "model_converted_whole_with_half": "https://github.com/pytorch/pytorch/issues/74739 (pure float16 models trained without a usable GradScaler: 'Attempting to unscale FP16 gradients')",
    "autocast_cuda_default_dtype": "https://github.com/karpathy/nanoGPT/pull/87 (dtype float16 training needed a GradScaler, added only for float16)",
    "one_step_in_a_unit_test": "fairseq tests/test_ema.py test_ema_fp16 (a .half() model, one unscaled backward to test EMA: nothing is trained)",
    "half_weights_made_by_a_helper": "this corpus's case: float16 leaves from a helper given torch.float16, backward on the unscaled loss",
}

# The dtype through a name and the options' defaults (fresh set 8's tuning half, z20: --precision fp16 by default).
_PRECISION = """
import argparse
import torch
import torch.nn.functional as F
from torch import nn
def main():
    p = argparse.ArgumentParser()
    p.add_argument("--precision", choices=["fp32", "fp16"], default="{default}")
    p.add_argument("--fp16", action="store_true")
    args = p.parse_args()
    dtype = torch.float16 if {test} else torch.float32
    model = nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 1, 3, padding=1))
    model = model.to(device="cuda", dtype=dtype)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for x, y in []:
        loss = F.mse_loss(model(x.to("cuda", dtype)), y.to("cuda", dtype))
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
PITFALL["dtype_from_a_precision_option"] = _PRECISION.format(default="fp16", test='args.precision == "fp16"')
NEAR_MISS["precision_option_defaults_to_fp32"] = _PRECISION.format(default="fp32", test='args.precision == "fp16"')
NEAR_MISS["half_only_behind_a_store_true_flag"] = _PRECISION.format(default="fp32", test="args.fp16")
SEEN["dtype_from_a_precision_option"] = "benchmarks/fresh/lint8 z20_radar_nowcast_halfprec.py (tuning half)"

# fresh set 18: the dtype picked from a table by an option whose default is "fp16" (and, near miss, "bf16")
_TABLE = """
import argparse
import torch
from torch import nn
DTYPES = {{"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}}
def main():
    p = argparse.ArgumentParser()
    p.add_argument("--precision", choices=sorted(DTYPES), default="{default}")
    args = p.parse_args()
    dtype = DTYPES[args.precision]
    model = nn.Linear(8, 1).to(device="cuda", dtype=dtype)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    for x, y in loader():
        loss = nn.functional.mse_loss(model(x.cuda().to(dtype)), y.cuda().to(dtype))
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
PITFALL["dtype_from_a_table_by_an_option"] = _TABLE.format(default="fp16")
NEAR_MISS["bfloat16_from_a_table_by_an_option"] = _TABLE.format(default="bf16")
