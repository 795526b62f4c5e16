"""Fine-tune a ViT-B/16 on a 200-class bird dataset on a single 24 GB GPU.
The reference recipe uses batch 512; we reach it with micro-batches of 64 and 8 steps of
gradient accumulation. Jobs on the shared cluster get preempted, so the script resumes."""

import argparse
import math
import os

import timm
import torch
import torch.nn as nn
from timm.data import create_transform, resolve_data_config
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

MICRO_BATCH, ACCUM_STEPS = 64, 8
BASE_LR, WARMUP_EPOCHS = 5e-4, 3


def lr_at(epoch, total):
    if epoch < WARMUP_EPOCHS:
        return BASE_LR * (epoch + 1) / WARMUP_EPOCHS
    progress = (epoch - WARMUP_EPOCHS) / max(1, total - WARMUP_EPOCHS)
    return BASE_LR * 0.5 * (1 + math.cos(math.pi * progress))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/birds200")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--ckpt", default="checkpoints/vit_birds_last.pt")
    args = ap.parse_args()
    device = torch.device("cuda")

    model = timm.create_model("vit_base_patch16_224.augreg_in21k", pretrained=True, num_classes=200,
                              drop_path_rate=0.1)
    cfg = resolve_data_config({}, model=model)
    train_dl = DataLoader(ImageFolder(os.path.join(args.data, "train"), create_transform(**cfg, is_training=True)),
                          batch_size=MICRO_BATCH, shuffle=True, num_workers=10, drop_last=True, pin_memory=True)
    val_dl = DataLoader(ImageFolder(os.path.join(args.data, "val"), create_transform(**cfg)),
                        batch_size=128, num_workers=10)
    model.to(device)

    decay = [p for n, p in model.named_parameters() if p.ndim > 1 and "pos_embed" not in n]
    other = [p for n, p in model.named_parameters() if p.ndim <= 1 or "pos_embed" in n]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                                   {"params": other, "weight_decay": 0.0}], lr=BASE_LR)
    scaler = torch.amp.GradScaler("cuda")
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    start_epoch = 0
    if os.path.exists(args.ckpt):
        state = torch.load(args.ckpt, map_location="cpu", weights_only=True)
        model.load_state_dict(state["model"])
        start_epoch = state["epoch"] + 1
        print(f"resuming at epoch {start_epoch}")

    for epoch in range(start_epoch, args.epochs):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(epoch, args.epochs)
        model.train()
        optimizer.zero_grad(set_to_none=True)
        for i, (images, labels) in enumerate(train_dl):
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(images), labels)
            scaler.scale(loss).backward()
            if (i + 1) % ACCUM_STEPS == 0:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)

        model.eval()
        hits = seen = 0
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
            for images, labels in val_dl:
                preds = model(images.to(device)).argmax(dim=1).cpu()
                hits += (preds == labels).sum().item()
                seen += labels.numel()
        print(f"epoch {epoch}: lr {lr_at(epoch, args.epochs):.2e} val top-1 {hits / seen:.4f}")
        torch.save({"model": model.state_dict(), "epoch": epoch}, args.ckpt)


if __name__ == "__main__":
    main()
