"""Evaluate a camera-trap species classifier on the held-out sites (evaluation only).

Checkpoints written by the multi-GPU trainer carry a "module." prefix; single-GPU ones do not.
"""
import argparse
import json
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from PIL import Image
from sklearn.metrics import balanced_accuracy_score, classification_report
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", default="runs/cct_effnet_b3/best.pt")
    p.add_argument("--species", default="runs/cct_effnet_b3/species.json")
    p.add_argument("--split-csv", default="data/cct20/cis_test.csv")
    p.add_argument("--image-root", default="data/cct20/images")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--out", default="cct_cis_test_predictions.csv")
    return p.parse_args()


class TrapImages(Dataset):
    def __init__(self, frame, root, transform):
        self.paths = [os.path.join(root, f) for f in frame["file_name"]]
        self.labels = frame["label"].tolist()
        self.transform = transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return self.transform(Image.open(self.paths[i]).convert("RGB")), self.labels[i]


def build_model(n_classes):
    net = models.efficientnet_b3(weights=None)
    net.classifier[1] = nn.Linear(net.classifier[1].in_features, n_classes)
    return net


def clean_state_dict(state):
    prefix = "module."
    return {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in state.items()}


def load_model(path, n_classes):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    state = clean_state_dict(ckpt.get("model", ckpt))
    model = build_model(n_classes)
    model.load_state_dict(state, strict=True)
    return model


@torch.inference_mode()
def predict(model, loader, device):
    model.eval()
    probs, golds = [], []
    for images, labels in loader:
        images = images.to(device, non_blocking=True)
        logits = model(images) + model(torch.flip(images, dims=[3]))
        probs.append(torch.softmax(logits / 2, dim=1).cpu())
        golds.append(labels)
    return torch.cat(probs).numpy(), torch.cat(golds).numpy()


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with open(args.species) as f:
        species = json.load(f)
    frame = pd.read_csv(args.split_csv)
    tf = transforms.Compose([transforms.Resize((300, 300)), transforms.ToTensor(),
                             transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    loader = DataLoader(TrapImages(frame, args.image_root, tf), batch_size=args.batch_size,
                        num_workers=8, pin_memory=True)
    model = load_model(args.checkpoint, len(species)).to(device)

    probs, gold = predict(model, loader, device)
    pred = probs.argmax(axis=1)
    print(f"images {len(gold)}  top-1 {np.mean(pred == gold):.4f}  "
          f"balanced acc {balanced_accuracy_score(gold, pred):.4f}")
    top3 = np.argsort(-probs, axis=1)[:, :3]
    print(f"top-3 {np.mean((top3 == gold[:, None]).any(axis=1)):.4f}")
    print(classification_report(gold, pred, labels=list(range(len(species))), target_names=species, zero_division=0))

    out = frame.copy()
    out["pred"] = [species[k] for k in pred]
    out["confidence"] = probs.max(axis=1)
    out.to_csv(args.out, index=False)
    low = out[out["confidence"] < 0.5]
    print(f"{len(low)} images below 0.5 confidence written for review")


if __name__ == "__main__":
    main()
