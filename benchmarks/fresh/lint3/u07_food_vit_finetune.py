"""Food-101 fine-tuning of a ViT-B/16 with progressive freezing of the early blocks (FreezeOut-style)."""

import argparse
import logging
import math

import timm
import torch
import torch.nn.functional as F
from torch.cuda.amp import autocast
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

logger = logging.getLogger("food101")


def loaders(root, batch_size, workers):
    norm = transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
    train_tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                   transforms.TrivialAugmentWide(), transforms.ToTensor(), norm])
    test_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm])
    train = datasets.Food101(root, split="train", transform=train_tf, download=True)
    test = datasets.Food101(root, split="test", transform=test_tf, download=True)
    return (DataLoader(train, batch_size, shuffle=True, num_workers=workers, pin_memory=True, drop_last=True),
            DataLoader(test, batch_size * 2, num_workers=workers, pin_memory=True))


def cosine_lr(step, total, base, warmup):
    if step < warmup:
        return base * step / warmup
    return 0.5 * base * (1 + math.cos(math.pi * (step - warmup) / (total - warmup)))


def blocks_to_freeze(epoch, schedule):
    """Number of leading transformer blocks frozen at this epoch."""
    return sum(epoch >= e for e in schedule)


@torch.no_grad()
def top1(model, loader, device):
    model.eval()
    hits = n = 0
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        hits += (model(x).argmax(1) == y).sum().item()
        n += y.numel()
    return hits / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/food101")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--bs", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--freeze-at", type=int, nargs="+", default=[3, 5, 7, 9])
    ap.add_argument("--amp", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda")

    train_dl, test_dl = loaders(args.root, args.bs, workers=8)
    model = timm.create_model("vit_base_patch16_224", pretrained=True, num_classes=101).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp)
    total = args.epochs * len(train_dl)
    step = 0
    for epoch in range(args.epochs):
        n_frozen = 3 * blocks_to_freeze(epoch, args.freeze_at)
        for i, blk in enumerate(model.blocks):
            if i < n_frozen:
                blk.requires_grad_(False)
        if n_frozen:
            model.patch_embed.requires_grad_(False)
        logger.info("epoch %d: %d of %d blocks frozen", epoch, n_frozen, len(model.blocks))

        model.train()
        for x, y in train_dl:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            for group in opt.param_groups:
                group["lr"] = cosine_lr(step, total, args.lr, warmup=len(train_dl))
            model.zero_grad(set_to_none=False)
            with autocast(enabled=args.amp):
                loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
            step += 1
            if step % 200 == 0:
                logger.info("step %d loss %.4f", step, loss.item())
        logger.info("epoch %d top-1 %.4f", epoch, top1(model, test_dl, device))
        torch.save(model.state_dict(), f"vit_food101_e{epoch}.pt")


if __name__ == "__main__":
    main()
