import argparse
import csv
from pathlib import Path

import torch
import torch.nn as nn
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms as T

NORMALIZE = T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])


class FlukeImages(Dataset):
    def __init__(self, root, rows, ids, train):
        self.root, self.rows, self.ids = Path(root), rows, ids
        aug = [T.RandomResizedCrop((224, 448), scale=(0.7, 1.0)), T.ColorJitter(0.3, 0.3)] if train else [T.Resize((224, 448))]
        self.tf = T.Compose(aug + [T.Grayscale(3), T.ToTensor(), NORMALIZE])

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        name, whale = self.rows[i]
        return self.tf(Image.open(self.root / name).convert("RGB")), self.ids[whale]


def load_backbone(arch):
    builder = {"resnet50": models.resnet50, "resnet101": models.resnet101}[arch]
    return builder(weights="IMAGENET1K_V2")


def adapt_head(model, n_ids, dropout=0.2):
    model.fc = nn.Sequential(nn.Dropout(dropout), nn.Linear(model.fc.in_features, n_ids))
    return model


def read_split(path):
    with open(path, newline="") as f:
        return [(r["image"], r["whale_id"]) for r in csv.DictReader(f)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--images", default="data/flukes/images")
    p.add_argument("--train-csv", default="data/flukes/train.csv")
    p.add_argument("--val-csv", default="data/flukes/val.csv")
    p.add_argument("--arch", default="resnet50")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--lr", type=float, default=3e-4)
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_rows, val_rows = read_split(args.train_csv), read_split(args.val_csv)
    ids = {w: i for i, w in enumerate(sorted({w for _, w in train_rows}))}
    val_rows = [r for r in val_rows if r[1] in ids]
    train = DataLoader(FlukeImages(args.images, train_rows, ids, True), batch_size=32, shuffle=True,
                       num_workers=8, pin_memory=True, drop_last=True)
    val = DataLoader(FlukeImages(args.images, val_rows, ids, False), batch_size=64, num_workers=8)

    model = load_backbone(args.arch).to(device)
    model = adapt_head(model, len(ids))
    head_params = list(model.fc.parameters())
    body_params = [p for n, p in model.named_parameters() if not n.startswith("fc.")]
    opt = torch.optim.AdamW([{"params": body_params, "lr": args.lr / 10}, {"params": head_params}],
                            lr=args.lr, weight_decay=0.0)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    for epoch in range(args.epochs):
        model.train()
        for images, labels in train:
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            loss = criterion(model(images), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        top1 = top5 = 0
        with torch.no_grad():
            for images, labels in val:
                ranked = model(images.to(device)).topk(5, dim=1).indices.cpu()
                top1 += (ranked[:, 0] == labels).sum().item()
                top5 += (ranked == labels[:, None]).any(dim=1).sum().item()
        print(f"epoch {epoch}: top1 {top1 / len(val_rows):.3f} top5 {top5 / len(val_rows):.3f}")
    torch.save(model.state_dict(), f"fluke_{args.arch}.pt")


if __name__ == "__main__":
    main()
