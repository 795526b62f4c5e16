"""Generic training helpers used by the experiment scripts under experiments/."""

from __future__ import annotations

import math
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, value: float, n: int = 1) -> None:
        self.sum += value * n
        self.count += n

    @property
    def avg(self) -> float:
        return self.sum / max(self.count, 1)


def train_one_epoch(model, loader, optimizer, criterion, device, *, accum_steps=1, scaler=None,
                    scheduler=None, max_grad_norm=1.0, log_every=100):
    model.train()
    meter = AverageMeter()
    use_amp = scaler is not None and scaler.is_enabled()
    optimizer.zero_grad(set_to_none=True)
    started = time.time()
    for step, (inputs, targets) in enumerate(loader):
        inputs, targets = inputs.to(device, non_blocking=True), targets.to(device, non_blocking=True)
        with torch.autocast(device_type=device.type, enabled=use_amp):
            loss = criterion(model(inputs), targets)
        if use_amp:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        meter.update(loss.item(), inputs.size(0))

        last = step + 1 == len(loader)
        if (step + 1) % accum_steps == 0 or last:
            if use_amp:
                scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            if use_amp:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if scheduler is not None:
                scheduler.step()
        if log_every and step % log_every == 0:
            print(f"  step {step:5d}/{len(loader)}  loss {meter.avg:.4f}  {time.time() - started:.0f}s")
    return meter.avg


@torch.no_grad()
def evaluate(model, loader, criterion, device, metric_fn=None):
    model.eval()
    total_loss = 0.0
    outputs, labels = [], []
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        logits = model(inputs)
        total_loss += criterion(logits, targets).item()
        outputs.append(logits.float().cpu())
        labels.append(targets.cpu())
    result = {"loss": total_loss / len(loader)}
    if metric_fn is not None:
        result.update(metric_fn(torch.cat(outputs), torch.cat(labels)))
    return result


def cosine_with_warmup(optimizer, warmup_steps: int, total_steps: int, min_ratio: float = 0.0):
    def factor(step):
        if step < warmup_steps:
            return (step + 1) / max(1, warmup_steps)
        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
