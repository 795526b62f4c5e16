"""RSNA paediatric bone age regression (months) from hand radiographs plus sex.

Schedule: end-to-end fine-tuning first, then the backbone is frozen and only the regression head
continues at the same optimizer settings (the head over-fits less once the features stop moving).
"""
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

CFG = dict(csv="data/rsna_boneage/train.csv", images="data/rsna_boneage/train", val_frac=0.1,
           size=384, batch_size=24, epochs=24, freeze_after=14, lr=0.01, seed=21)


class HandXrays(Dataset):
    def __init__(self, frame, image_dir, transform, mean, std):
        self.ids, self.male = frame["id"].tolist(), frame["male"].astype(np.float32).tolist()
        self.age = ((frame["boneage"] - mean) / std).astype(np.float32).tolist()
        self.image_dir, self.transform = image_dir, transform

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        img = Image.open(os.path.join(self.image_dir, f"{self.ids[i]}.png")).convert("RGB")
        return self.transform(img), torch.tensor([self.male[i]]), torch.tensor(self.age[i])


class BoneAgeNet(nn.Module):
    def __init__(self):
        super().__init__()
        net = models.resnet34(weights=models.ResNet34_Weights.IMAGENET1K_V1)
        net.fc = nn.Identity()
        self.backbone = net
        self.sex_embed = nn.Linear(1, 32)
        self.head = nn.Sequential(nn.Linear(512 + 32, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 1))

    def forward(self, image, male):
        return self.head(torch.cat([self.backbone(image), F.relu(self.sex_embed(male))], dim=1)).squeeze(1)


def global_grad_norm(model):
    return torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()])).item()


@torch.no_grad()
def mae_months(model, loader, std, device):
    model.eval()
    err, n = 0.0, 0
    for img, male, age in loader:
        pred = model(img.to(device), male.to(device))
        err += (pred - age.to(device)).abs().sum().item() * std
        n += age.numel()
    return err / n


def main(cfg=CFG):
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    frame = pd.read_csv(cfg["csv"])
    val = frame.sample(frac=cfg["val_frac"], random_state=cfg["seed"])
    train = frame.drop(val.index)
    mean, std = float(train["boneage"].mean()), float(train["boneage"].std())
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_tf = transforms.Compose([transforms.Resize((cfg["size"], cfg["size"])), transforms.RandomAffine(15, (0.05, 0.05), (0.9, 1.1)),
                                   transforms.ColorJitter(0.2, 0.2), transforms.ToTensor(), norm])
    val_tf = transforms.Compose([transforms.Resize((cfg["size"], cfg["size"])), transforms.ToTensor(), norm])
    train_dl = DataLoader(HandXrays(train, cfg["images"], train_tf, mean, std), batch_size=cfg["batch_size"],
                          shuffle=True, num_workers=8, drop_last=True)
    val_dl = DataLoader(HandXrays(val, cfg["images"], val_tf, mean, std), batch_size=64, num_workers=8)

    model = BoneAgeNet().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, nesterov=True)
    for epoch in range(cfg["epochs"]):
        stage_two = epoch >= cfg["freeze_after"]
        if epoch == cfg["freeze_after"]:
            model.backbone.requires_grad_(False)
        model.train()
        if stage_two:
            model.backbone.eval()
        total, seen, norms = 0.0, 0, []
        for img, male, age in train_dl:
            img, male, age = img.to(device), male.to(device), age.to(device)
            opt.zero_grad(set_to_none=False)
            loss = F.l1_loss(model(img, male), age)
            loss.backward()
            norms.append(global_grad_norm(model))
            opt.step()
            total += loss.item() * age.numel()
            seen += age.numel()
        print(f"epoch {epoch:2d} ({'head only' if stage_two else 'end-to-end'})  train MAE {total / seen * std:.2f} m  "
              f"val MAE {mae_months(model, val_dl, std, device):.2f} m  grad norm {np.median(norms):.3f}")
    torch.save(model.state_dict(), "boneage_r34.pt")


if __name__ == "__main__":
    main()
