#!/usr/bin/env python
# coding: utf-8
# Fine-tune a ViT-B/16 on a 5-class flower dataset (exported from a notebook)

# In[1]:
import os

import torch
import torchvision
from torchvision import datasets, transforms

DATA_DIR = os.path.expanduser("~/datasets/flowers5")
device = "cuda" if torch.cuda.is_available() else "cpu"

# In[2]:
weights = torchvision.models.ViT_B_16_Weights.IMAGENET1K_V1
preprocess = weights.transforms()
train_ds = datasets.ImageFolder(os.path.join(DATA_DIR, "train"), transform=preprocess)
val_ds = datasets.ImageFolder(os.path.join(DATA_DIR, "val"), transform=preprocess)
train_dl = torch.utils.data.DataLoader(train_ds, batch_size=32, shuffle=True, num_workers=4)
val_dl = torch.utils.data.DataLoader(val_ds, batch_size=64, num_workers=4)
print(train_ds.classes)

# In[3]:
vit = torchvision.models.vit_b_16(weights=weights)
vit.heads.head = torch.nn.Linear(vit.heads.head.in_features, len(train_ds.classes))

# freeze everything except the classification head
for name, param in vit.named_parameters():
    if not name.startswith("heads"):
        param.require_grad = False

vit = vit.to(device)
n_trainable = sum(p.numel() for p in vit.parameters() if p.requires_grad)
print(f"trainable parameters: {n_trainable:,}")

# In[4]:
optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, vit.parameters()), lr=3e-4)
loss_fn = torch.nn.CrossEntropyLoss()


def run_epoch(train=True):
    vit.train(train)
    loader = train_dl if train else val_dl
    total_loss, correct, count = 0.0, 0, 0
    with torch.set_grad_enabled(train):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = vit(x)
            loss = loss_fn(logits, y)
            if train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total_loss += loss.item() * y.size(0)
            correct += (logits.argmax(1) == y).sum().item()
            count += y.size(0)
    return total_loss / count, correct / count


# In[5]:
for epoch in range(5):
    tr_loss, tr_acc = run_epoch(train=True)
    va_loss, va_acc = run_epoch(train=False)
    print(f"{epoch}: train {tr_loss:.3f}/{tr_acc:.3f}  val {va_loss:.3f}/{va_acc:.3f}")

# In[6]:
torch.save(vit.heads.state_dict(), "vit_flowers_head.pt")
