import csv
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

FINDINGS = ["Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Effusion", "Pneumothorax"]
VIEWS = ["PA", "AP", "LATERAL"]
HPARAMS = {"root": "data/chexpert_small", "epochs": 6, "batch_size": 32, "lr": 1e-4, "view_weight": 0.2,
           "workers": 8, "seed": 31}


class Radiographs(Dataset):
    def __init__(self, root, split, transform):
        with open(Path(root) / f"{split}.csv", newline="") as handle:
            self.rows = list(csv.DictReader(handle))
        self.root, self.transform = Path(root), transform

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        row = self.rows[index]
        with Image.open(self.root / row["Path"]) as img:
            image = self.transform(img.convert("RGB"))
        labels = torch.tensor([float(row[f] == "1.0") for f in FINDINGS])
        view = VIEWS.index(row["View"]) if row["View"] in VIEWS else 0
        return image, labels, view


class FindingsNet(nn.Module):
    def __init__(self):
        super().__init__()
        backbone = models.densenet121(weights=models.DenseNet121_Weights.IMAGENET1K_V1)
        self.features = backbone.features
        self.feature_dim = backbone.classifier.in_features
        self.classifier = nn.Linear(self.feature_dim, len(FINDINGS))
        self.extra_heads = nn.ModuleDict()

    def forward(self, x):
        feats = F.adaptive_avg_pool2d(F.relu(self.features(x)), 1).flatten(1)
        out = {"findings": self.classifier(feats)}
        for name, head in self.extra_heads.items():
            out[name] = head(feats)
        return out


class Callback:
    def on_fit_start(self, trainer):
        pass

    def extra_loss(self, trainer, outputs, batch):
        return 0.0


class ViewAuxiliary(Callback):
    def __init__(self, weight):
        self.weight = weight

    def on_fit_start(self, trainer):
        trainer.model.extra_heads["view"] = nn.Linear(trainer.model.feature_dim, len(VIEWS))

    def extra_loss(self, trainer, outputs, batch):
        return self.weight * F.cross_entropy(outputs["view"], batch[2])


class Trainer:
    def __init__(self, model, device, callbacks, lr):
        self.model, self.device, self.callbacks, self.lr = model, device, callbacks, lr

    def fit(self, train_loader, valid_loader, epochs):
        self.model.to(self.device)
        for cb in self.callbacks:
            cb.on_fit_start(self)
        optimizer = torch.optim.Adam(self.model.parameters(), lr=self.lr)
        for epoch in range(epochs):
            self.model.train()
            for batch in train_loader:
                batch = [t.to(self.device, non_blocking=True) for t in batch]
                outputs = self.model(batch[0])
                loss = F.binary_cross_entropy_with_logits(outputs["findings"], batch[1])
                for cb in self.callbacks:
                    loss = loss + cb.extra_loss(self, outputs, batch)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
            print(f"epoch {epoch} mean AUROC {self.validate(valid_loader):.4f}")

    def validate(self, loader):
        self.model.eval()
        scores, targets = [], []
        with torch.no_grad():
            for images, labels, _ in loader:
                scores.append(torch.sigmoid(self.model(images.to(self.device))["findings"]).cpu())
                targets.append(labels)
        scores, targets = torch.cat(scores), torch.cat(targets)
        return float(np.mean([auroc(scores[:, k], targets[:, k]) for k in range(len(FINDINGS))]))


def auroc(score, target):
    order = torch.argsort(score)
    ranks = torch.empty_like(score)
    ranks[order] = torch.arange(1, len(score) + 1, dtype=score.dtype)
    pos = target == 1
    n_pos, n_neg = pos.sum().item(), (~pos).sum().item()
    if n_pos == 0 or n_neg == 0:
        return 0.5
    return (ranks[pos].sum().item() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def main(h=HPARAMS):
    random.seed(h["seed"]); np.random.seed(h["seed"]); torch.manual_seed(h["seed"])
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_tf = transforms.Compose([transforms.RandomResizedCrop(320, scale=(0.8, 1.0)),
                                   transforms.RandomRotation(7), transforms.ToTensor(), norm])
    valid_tf = transforms.Compose([transforms.Resize(320), transforms.CenterCrop(320), transforms.ToTensor(), norm])
    train_loader = DataLoader(Radiographs(h["root"], "train", train_tf), batch_size=h["batch_size"], shuffle=True,
                              num_workers=h["workers"], pin_memory=True, drop_last=True)
    valid_loader = DataLoader(Radiographs(h["root"], "valid", valid_tf), batch_size=64, num_workers=h["workers"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = FindingsNet()
    Trainer(model, device, [ViewAuxiliary(h["view_weight"])], h["lr"]).fit(train_loader, valid_loader, h["epochs"])
    Path("runs/chest_multitask").mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "findings": FINDINGS}, "runs/chest_multitask/final.pt")


if __name__ == "__main__":
    main()
