"""Grade road-surface patches from survey-vehicle cameras on the agency's 4-level condition scale
(1 = good, 2 = fair, 3 = poor, 4 = failed), as written by the inspectors in survey.json.
"""
import json
import random
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CFG = {
    "survey": "data/pavement/survey.json",
    "patches": "data/pavement/patches.npz",
    "num_grades": 4,
    "epochs": 25,
    "batch_size": 32,
    "lr": 1e-3,
    "val_fraction": 0.15,
    "seed": 21,
    "out": "runs/pavement",
}


class SurveyPatches(Dataset):
    def __init__(self, records, patches, train):
        self.records = records
        self.patches = patches
        self.train = train

    def __len__(self):
        return len(self.records)

    def __getitem__(self, i):
        rec = self.records[i]
        img = torch.from_numpy(self.patches[rec["patch_id"]]).permute(2, 0, 1).float() / 255.0
        if self.train:
            if random.random() < 0.5:
                img = img.flip(-1)
            img = img * (0.8 + 0.4 * random.random())
        img = (img - img.mean(dim=(1, 2), keepdim=True)) / (img.std(dim=(1, 2), keepdim=True) + 1e-5)
        return img, int(rec["condition_grade"])


class GradeNet(nn.Module):
    def __init__(self, num_grades):
        super().__init__()
        chans = [3, 32, 64, 96, 128]
        layers = []
        for c_in, c_out in zip(chans[:-1], chans[1:]):
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
                       nn.MaxPool2d(2)]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.3), nn.Linear(chans[-1], num_grades))

    def forward(self, x):
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


def split_by_road(records, fraction, seed):
    roads = sorted({r["road_id"] for r in records})
    random.Random(seed).shuffle(roads)
    held_out = set(roads[: max(1, int(len(roads) * fraction))])
    return [r for r in records if r["road_id"] not in held_out], [r for r in records if r["road_id"] in held_out]


def evaluate(model, loader, num_grades, device):
    model.eval()
    confusion = torch.zeros(num_grades, num_grades, dtype=torch.long)
    with torch.no_grad():
        for img, grade in loader:
            pred = model(img.to(device)).argmax(dim=1).cpu()
            confusion += torch.bincount(grade * num_grades + pred, minlength=num_grades ** 2).view(num_grades, num_grades)
    acc = confusion.diag().sum().item() / max(confusion.sum().item(), 1)
    return acc, confusion


def main(cfg):
    random.seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with open(cfg["survey"]) as fh:
        records = json.load(fh)
    patches = dict(np.load(cfg["patches"]))
    train_recs, val_recs = split_by_road(records, cfg["val_fraction"], cfg["seed"])
    train_dl = DataLoader(SurveyPatches(train_recs, patches, True), batch_size=cfg["batch_size"],
                          shuffle=True, drop_last=True)
    val_dl = DataLoader(SurveyPatches(val_recs, patches, False), batch_size=cfg["batch_size"])

    model = GradeNet(cfg["num_grades"]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    out = Path(cfg["out"])
    out.mkdir(parents=True, exist_ok=True)
    best = 0.0
    for epoch in range(cfg["epochs"]):
        model.train()
        for img, grade in train_dl:
            img, grade = img.to(device), grade.to(device)
            loss = F.cross_entropy(model(img), grade)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        acc, confusion = evaluate(model, val_dl, cfg["num_grades"], device)
        print(f"epoch {epoch}: val accuracy {acc:.3f}")
        if acc > best:
            best = acc
            torch.save(model.state_dict(), out / "grade_net.pt")
            (out / "confusion.json").write_text(json.dumps(confusion.tolist()))


if __name__ == "__main__":
    overrides = dict(arg.split("=", 1) for arg in sys.argv[1:])
    main({**CFG, **{k: type(CFG[k])(v) for k, v in overrides.items()}})
