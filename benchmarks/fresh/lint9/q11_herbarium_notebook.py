# %% [markdown]
# # Herbarium sheets: species classifier
# Digitised herbarium specimens (one sheet per image), 120 species of the regional flora.
# Exported from the lab notebook; run cell by cell.

# %%
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, Dataset
from torchvision import models

torch.manual_seed(0)
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

# %%
CFG = dict(
    image_dir="data/herbarium/images",
    meta_csv="data/herbarium/metadata.csv",
    size=320,
    batch_size=48,
    epochs=15,
    lr=5e-4,
    label_smoothing=0.1,
)
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)

# %%
meta = pd.read_csv(CFG["meta_csv"])
species = sorted(meta["species"].unique())
meta["label"] = meta["species"].map({s: i for i, s in enumerate(species)})
train_df, val_df = train_test_split(meta, test_size=0.15, stratify=meta["label"], random_state=0)
print(len(species), "species;", len(train_df), "train sheets,", len(val_df), "val sheets")


# %%
def load_sheet(path, size):
    img = Image.open(path).convert("RGB").resize((size, size), Image.BILINEAR)
    return np.asarray(img, dtype=np.uint8)


def to_tensor(arr):
    h, w, c = arr.shape
    x = torch.from_numpy(arr.copy()).float().div_(255.0)
    x = x.reshape(c, h, w)
    return (x - MEAN) / STD


class HerbariumSheets(Dataset):
    def __init__(self, frame, train):
        self.files = frame["file"].tolist()
        self.labels = frame["label"].tolist()
        self.train = train

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        x = to_tensor(load_sheet(os.path.join(CFG["image_dir"], self.files[i]), CFG["size"]))
        if self.train:
            if torch.rand(()) < 0.5:
                x = x.flip(-1)
            if torch.rand(()) < 0.5:
                x = x.flip(-2)
        return x, self.labels[i]


train_dl = DataLoader(HerbariumSheets(train_df, True), batch_size=CFG["batch_size"], shuffle=True,
                      num_workers=6, drop_last=True)
val_dl = DataLoader(HerbariumSheets(val_df, False), batch_size=CFG["batch_size"], num_workers=6)

# %%
model = models.resnet34(weights=models.ResNet34_Weights.IMAGENET1K_V1)
model.fc = nn.Linear(model.fc.in_features, len(species))
model = model.to(DEVICE)
optimizer = torch.optim.AdamW(
    [
        {"params": [p for n, p in model.named_parameters() if not n.startswith("fc.")], "lr": CFG["lr"] / 10},
        {"params": model.fc.parameters(), "lr": CFG["lr"]},
    ],
    weight_decay=0.0,
)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=CFG["epochs"])


# %%
def run_epoch(loader, train):
    model.train(train)
    loss_sum, correct, n = 0.0, 0, 0
    with torch.set_grad_enabled(train):
        for x, y in loader:
            x, y = x.to(DEVICE), y.to(DEVICE)
            logits = model(x)
            loss = F.cross_entropy(logits, y, label_smoothing=CFG["label_smoothing"])
            if train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            loss_sum += loss.item() * y.size(0)
            correct += (logits.argmax(1) == y).sum().item()
            n += y.size(0)
    return loss_sum / n, correct / n


history = []
for epoch in range(CFG["epochs"]):
    tr = run_epoch(train_dl, train=True)
    va = run_epoch(val_dl, train=False)
    scheduler.step()
    history.append((epoch, *tr, *va))
    print(f"epoch {epoch:02d}  train loss {tr[0]:.3f} acc {tr[1]:.3f} | val loss {va[0]:.3f} acc {va[1]:.3f}")

# %%
pd.DataFrame(history, columns=["epoch", "train_loss", "train_acc", "val_loss", "val_acc"]).to_csv(
    "herbarium_history.csv", index=False)
torch.save(model.state_dict(), "herbarium_resnet34.pt")

# %% [markdown]
# Top-5 accuracy on the validation sheets.

# %%
model.eval()
top5, total = 0, 0
with torch.no_grad():
    for x, y in val_dl:
        top = model(x.to(DEVICE)).topk(5, dim=1).indices.cpu()
        top5 += (top == y[:, None]).any(1).sum().item()
        total += y.numel()
print(f"val top-5: {top5 / total:.3f}")
