"""PTF251 (resume-without-scheduler-state): a resume that restores model, optimizer and epoch, not the scheduler."""

PITFALL = {
    "script_cosine_restarts": """
import torch
from torch import nn
model = nn.Linear(32, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=100)
ckpt = torch.load("last.pt", weights_only=True)
model.load_state_dict(ckpt["model"])
optimizer.load_state_dict(ckpt["optimizer"])
start_epoch = ckpt["epoch"] + 1
for epoch in range(start_epoch, 100):
    optimizer.step()
    scheduler.step()
""",
    "onecycle_in_main": """
import torch
from torch.optim.lr_scheduler import OneCycleLR
from torchvision.models import resnet50
def main(resume, steps_per_epoch=500, epochs=30):
    model = resnet50()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = OneCycleLR(opt, max_lr=1e-3, total_steps=steps_per_epoch * epochs)
    state = torch.load(resume, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    step = state["step"]
    while step < steps_per_epoch * epochs:
        opt.step()
        sched.step()
        step += 1
""",
    "trainer_method_without_scheduler": """
import torch
from torch import nn
class Trainer:
    def __init__(self, model: nn.Module):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=30, gamma=0.1)
        self.epoch = 0
    def resume(self, path):
        ckpt = torch.load(path, weights_only=True)
        self.model.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        self.epoch = ckpt["epoch"]
""",
    "restore_function_handed_the_scheduler": """
import torch
from torch import nn
def new_job():
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model, opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 - s / 100)
def restore(model, opt, sched, ckpt):
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optimizer"])
def resume(path):
    model, opt, sched = new_job()
    restore(model, opt, sched, torch.load(path, weights_only=True))
    return model, opt, sched
""",
    "warmup_linear_restarts": """
import torch
from torch import nn
from torch.optim.lr_scheduler import LinearLR
def run(ckpt_path):
    net = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 1))
    optimizer = torch.optim.Adam(net.parameters(), lr=2e-4)
    warmup = LinearLR(optimizer, start_factor=0.01, total_iters=1000)
    checkpoint = torch.load(ckpt_path, weights_only=True)
    net.load_state_dict(checkpoint["net"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    it = checkpoint["iteration"]
    for i in range(it, 5000):
        optimizer.step()
        warmup.step()
""",
}

NEAR_MISS = {
    "scheduler_restored": """
import torch
from torch import nn
model = nn.Linear(32, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=100)
ckpt = torch.load("last.pt", weights_only=True)
model.load_state_dict(ckpt["model"])
optimizer.load_state_dict(ckpt["optimizer"])
scheduler.load_state_dict(ckpt["scheduler"])
start_epoch = ckpt["epoch"] + 1
""",
    "scheduler_built_at_the_resumed_epoch": """
import torch
from torch import nn
model = nn.Linear(32, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
ckpt = torch.load("last.pt", weights_only=True)
model.load_state_dict(ckpt["model"])
optimizer.load_state_dict(ckpt["optimizer"])
start_epoch = ckpt["epoch"] + 1
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, last_epoch=start_epoch - 1)
""",
    "plateau_scheduler_rate_in_optimizer": """
import torch
from torch import nn
model = nn.Linear(32, 10)
optimizer = torch.optim.Adam(model.parameters())
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=3)
ckpt = torch.load("last.pt", weights_only=True)
model.load_state_dict(ckpt["model"])
optimizer.load_state_dict(ckpt["optimizer"])
start_epoch = ckpt["epoch"]
""",
    "fine_tune_with_fresh_schedule": """
import torch
from torch import nn
model = nn.Linear(32, 10)
model.load_state_dict(torch.load("pretrained.pt", weights_only=True))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10)
""",
}

SEEN = {
    "trainer_method_without_scheduler": (
        "PolymathicAI/the_well#63 (the Trainer saves and loads the optimizer state but not the lr_scheduler's: "
        "warm-up and cosine decay restart on resume)"
    ),
    "script_cosine_restarts": (
        "jfzhang95/pytorch-video-recognition#51 (only the optimizer state is saved, not the scheduler's)"
    ),
    "warmup_linear_restarts": (
        "lightly-ai/lightly-train#301 (the warm-up schedule restarts because last_epoch is -1 after a resume)"
    ),
    "scheduler_built_at_the_resumed_epoch": (
        "mlbench/mlbench-old#50 (last_epoch set to the resumed epoch when the scheduler is rebuilt)"
    ),
}

# fresh set 7's held-out half (a miss at its first score; tuning material since): the restoring helper reads
# the epoch back, and the scheduler lives in the caller, which never hands it over
PITFALL["scheduler_in_the_caller_of_a_restoring_helper"] = """
import torch

def load_checkpoint(path, model, optimizer):
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["epoch"] + 1

def main(path, epochs, resume):
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    start = load_checkpoint(path, model, optimizer) if resume else 0
    for epoch in range(start, epochs):
        optimizer.step()
        scheduler.step()
"""
NEAR_MISS["scheduler_in_the_caller_built_at_the_resumed_epoch"] = """
import torch

def load_checkpoint(path, model, optimizer):
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["epoch"] + 1

def main(path, epochs, resume):
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    start = load_checkpoint(path, model, optimizer) if resume else 0
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs, last_epoch=start - 1)
    for epoch in range(start, epochs):
        optimizer.step()
        scheduler.step()
"""
SEEN["scheduler_in_the_caller_of_a_restoring_helper"] = (
    "benchmarks/fresh/lint7 y04_wind_power_forecast.py (load_checkpoint restores model and optimizer and the "
    "epoch; main's CosineAnnealingLR starts over)"
)
PITFALL["helper_restores_the_grad_scaler_not_the_scheduler"] = """
import os
import torch
from torch import nn
def load_checkpoint(path, model, opt, scaler):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["opt"])
    scaler.load_state_dict(ckpt["scaler"])
    return ckpt["step"]
def train(loader, total_steps, last):
    model = nn.Linear(8, 1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 1000))
    scaler = torch.amp.GradScaler("cuda")
    step = 0
    if os.path.exists(last):
        step = load_checkpoint(last, model, opt, scaler)
    while step < total_steps:
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            sched.step()
            step += 1
"""
NEAR_MISS["helper_restores_the_grad_scaler_and_the_scheduler"] = """
import os
import torch
from torch import nn
def load_checkpoint(path, model, opt, sched, scaler):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["opt"])
    sched.load_state_dict(ckpt["sched"])
    scaler.load_state_dict(ckpt["scaler"])
    return ckpt["step"]
def train(loader, total_steps, last):
    model = nn.Linear(8, 1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 1000))
    scaler = torch.amp.GradScaler("cuda")
    step = 0
    if os.path.exists(last):
        step = load_checkpoint(last, model, opt, sched, scaler)
    while step < total_steps:
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            sched.step()
            step += 1
"""
SEEN["helper_restores_the_grad_scaler_not_the_scheduler"] = (
    "fresh set 9's q20 (tuning half, read): a diffusion trainer's load_checkpoint restoring model, EMA, optimizer "
    "and GradScaler, its LambdaLR warm-up rebuilt at step 0; GradScaler.state_dict()/load_state_dict in checkpoints "
    "as the AMP recipe shows (https://pytorch.org/docs/stable/notes/amp_examples.html#saving-resuming)"
)
SEEN["helper_restores_the_grad_scaler_and_the_scheduler"] = SEEN["helper_restores_the_grad_scaler_not_the_scheduler"]
