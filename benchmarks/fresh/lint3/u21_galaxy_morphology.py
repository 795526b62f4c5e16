"""Galaxy morphology from SDSS cutouts, trained on the volunteer-consensus catalogue.

catalogue.csv columns: objid, ra, dec, morph (1 = elliptical, 2 = lenticular, 3 = spiral,
4 = barred spiral, 5 = irregular, 6 = merger), agreement (fraction of volunteers).
"""

import argparse
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from PIL import Image
from torch.utils.data import DataLoader, Dataset, WeightedRandomSampler
from torchvision import models, transforms

log = logging.getLogger("galaxy")
MORPH = {1: "elliptical", 2: "lenticular", 3: "spiral", 4: "barred spiral", 5: "irregular", 6: "merger"}


class Cutouts(Dataset):
    def __init__(self, frame, image_dir, transform):
        self.frame = frame.reset_index(drop=True)
        self.image_dir, self.transform = Path(image_dir), transform

    def __len__(self):
        return len(self.frame)

    def __getitem__(self, i):
        row = self.frame.iloc[i]
        img = Image.open(self.image_dir / f"{row.objid}.jpg").convert("RGB")
        return self.transform(img), int(row.morph)


def build_model(n_classes):
    net = models.efficientnet_b0(weights=models.EfficientNet_B0_Weights.DEFAULT)
    net.classifier[1] = nn.Linear(net.classifier[1].in_features, n_classes)
    return net


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--catalogue", default="data/galaxies/catalogue.csv")
    ap.add_argument("--images", default="data/galaxies/cutouts")
    ap.add_argument("--min-agreement", type=float, default=0.6)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--bs", type=int, default=64)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    cat = pd.read_csv(args.catalogue)
    cat = cat[cat.agreement >= args.min_agreement]
    val = cat.sample(frac=0.15, random_state=0)
    train = cat.drop(val.index)
    n_classes = len(MORPH)
    log.info("train %d / val %d, classes: %s", len(train), len(val), train.morph.value_counts().to_dict())

    # galaxies are rotation invariant: rotate and flip freely
    train_tf = transforms.Compose([transforms.RandomRotation(180), transforms.RandomHorizontalFlip(),
                                   transforms.CenterCrop(180), transforms.Resize(224), transforms.ToTensor()])
    val_tf = transforms.Compose([transforms.CenterCrop(180), transforms.Resize(224), transforms.ToTensor()])
    freq = train.morph.map(train.morph.value_counts())
    sampler = WeightedRandomSampler(torch.as_tensor((1.0 / freq).to_numpy()), num_samples=len(train))
    train_dl = DataLoader(Cutouts(train, args.images, train_tf), args.bs, sampler=sampler, num_workers=6)
    val_dl = DataLoader(Cutouts(val, args.images, val_tf), 256, num_workers=6)

    model = build_model(n_classes).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-3, total_steps=args.epochs * len(train_dl))
    criterion = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        model.eval()
        confusion = np.zeros((n_classes, n_classes), dtype=np.int64)
        with torch.no_grad():
            for x, y in val_dl:
                pred = model(x.to(device)).argmax(1).cpu()
                np.add.at(confusion, (y.numpy(), pred.numpy()), 1)
        acc = np.trace(confusion) / confusion.sum()
        per_class = confusion.diagonal() / confusion.sum(1).clip(min=1)
        log.info("epoch %d loss %.3f val acc %.3f per class %s", epoch, loss.item(), acc, np.round(per_class, 2))
    torch.save(model.state_dict(), "galaxy_effnet_b0.pt")


if __name__ == "__main__":
    main()
