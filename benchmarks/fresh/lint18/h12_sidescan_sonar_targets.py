import argparse
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

LABELS = ["seabed", "rock", "tire", "mine_like", "wreck_debris"]


class SonarChips(Dataset):
    def __init__(self, files, augment):
        self.files, self.augment = files, augment

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        chip = np.load(self.files[i])
        x = torch.from_numpy(np.log1p(chip["intensity"].astype(np.float32)))[None]
        x = (x - x.mean()) / (x.std() + 1e-6)
        if self.augment:
            if torch.rand(()) < 0.5:
                x = x.flip(-1)
            x = x + 0.05 * torch.randn_like(x)
        return x, int(chip["label"])


class PosConvBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.peg = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)
        self.layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.1, batch_first=True, norm_first=True)

    def forward(self, tokens, grid):
        b, n, c = tokens.shape
        fmap = tokens.transpose(1, 2).reshape(b, c, *grid)
        tokens = tokens + self.peg(fmap).flatten(2).transpose(1, 2)
        return self.layer(tokens)


class SonarViT(nn.Module):
    def __init__(self, n_classes, patch=8, dim=128, depth=4, heads=4):
        super().__init__()
        self.embed = nn.Conv2d(1, dim, patch, stride=patch)
        self.blocks = nn.ModuleList(PosConvBlock(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, x):
        fmap = self.embed(x)
        grid = fmap.shape[-2:]
        tokens = fmap.flatten(2).transpose(1, 2)
        for block in self.blocks:
            tokens = block(tokens, grid)
        return self.head(self.norm(tokens).mean(dim=1))


def load_pretrained(model, path):
    state = torch.load(path, map_location="cpu", weights_only=True)
    state = {k.removeprefix("module."): v for k, v in state.items() if not k.startswith("module.head.")}
    result = model.load_state_dict(state, strict=False)
    if result.unexpected_keys or any(not k.startswith("head.") for k in result.missing_keys):
        raise RuntimeError(f"checkpoint does not match: {result}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--chips", default="data/sss_chips")
    p.add_argument("--pretrained", default="checkpoints/sonar_mae_encoder.pt")
    p.add_argument("--epochs", type=int, default=30)
    args = p.parse_args()
    random.seed(0)
    torch.manual_seed(0)

    surveys = sorted(d for d in Path(args.chips).iterdir() if d.is_dir())
    random.shuffle(surveys)
    held_out = set(surveys[: max(1, len(surveys) // 5)])
    train_files = [f for d in surveys if d not in held_out for f in sorted(d.glob("*.npz"))]
    val_files = [f for d in held_out for f in sorted(d.glob("*.npz"))]
    train = DataLoader(SonarChips(train_files, augment=True), batch_size=64, shuffle=True, drop_last=True)
    val = DataLoader(SonarChips(val_files, augment=False), batch_size=128)

    model = SonarViT(len(LABELS))
    load_pretrained(model, args.pretrained)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.ndim > 1], lr=3e-4, weight_decay=0.05)
    opt.add_param_group({"params": [p for p in model.parameters() if p.ndim <= 1], "weight_decay": 0.0})
    for epoch in range(args.epochs):
        model.train()
        for x, y in train:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            hits = sum((model(x).argmax(1) == y).sum().item() for x, y in val)
        print(f"epoch {epoch}: held-out survey accuracy {hits / len(val_files):.3f}")
    torch.save(model.state_dict(), "sonar_vit.pt")


if __name__ == "__main__":
    main()
