"""Score a trained camera-trap species classifier on a new deployment.

The checkpoint was written by the multi-GPU training job (DistributedDataParallel), so its
parameter names carry the wrapper's "module." prefix. Reports image-level and sequence-level
(majority of the burst) accuracy, and the loss, on the labelled images of the deployment.
"""
import argparse
import csv
from collections import Counter, defaultdict
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms as T


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoint", type=Path, default=Path("runs/ct_resnet50/best.pt"))
    ap.add_argument("--manifest", type=Path, default=Path("data/deploy_2026_07/labels.csv"))
    ap.add_argument("--images", type=Path, default=Path("data/deploy_2026_07/images"))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--save-confusion", type=Path, default=None)
    return ap.parse_args()


class TrapImages(Dataset):
    def __init__(self, manifest, folder, classes):
        with open(manifest) as f:
            self.rows = [r for r in csv.DictReader(f) if r["species"] in classes]
        self.folder, self.index = folder, {c: i for i, c in enumerate(classes)}
        self.tf = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(),
                             T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        r = self.rows[i]
        img = Image.open(self.folder / r["file"]).convert("RGB")
        return self.tf(img), self.index[r["species"]], r["sequence_id"]


def build_classifier(n_classes):
    net = torchvision.models.resnet50(weights=None)
    net.fc = nn.Sequential(nn.Dropout(0.2), nn.Linear(net.fc.in_features, n_classes))
    return net


def load_trained(path, device):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    classes = ckpt["classes"]
    state = {k.removeprefix("module."): v for k, v in ckpt["model"].items()}
    model = build_classifier(len(classes))
    model.load_state_dict(state)
    return model.to(device).eval(), classes


def evaluate(model, loader, device, n_classes):
    loss_sum, seen = 0.0, 0
    confusion = torch.zeros(n_classes, n_classes, dtype=torch.long)
    by_sequence = defaultdict(list)
    truth_of_sequence = {}
    with torch.inference_mode():
        for images, labels, seq_ids in loader:
            logits = model(images.to(device)).cpu()
            loss_sum += F.cross_entropy(logits, labels, reduction="sum").item()
            seen += labels.numel()
            preds = logits.argmax(dim=1)
            confusion += torch.bincount(labels * n_classes + preds, minlength=n_classes ** 2).view(n_classes, -1)
            for s, p, t in zip(seq_ids, preds.tolist(), labels.tolist()):
                by_sequence[s].append(p)
                truth_of_sequence[s] = t
    seq_hits = sum(Counter(v).most_common(1)[0][0] == truth_of_sequence[s] for s, v in by_sequence.items())
    return loss_sum / seen, confusion, seq_hits / max(len(by_sequence), 1)


def report(confusion, classes):
    support = confusion.sum(dim=1)
    recall = confusion.diag().float() / support.clamp(min=1).float()
    for c, n, r in zip(classes, support.tolist(), recall.tolist()):
        if n:
            print(f"  {c:24s} n={n:5d} recall={r:.3f}")
    present = support > 0
    print(f"image accuracy {confusion.diag().sum().item() / confusion.sum().item():.4f}; "
          f"mean per-class recall {recall[present].mean().item():.4f}")


def main():
    args = parse()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model, classes = load_trained(args.checkpoint, device)
    data = TrapImages(args.manifest, args.images, classes)
    loader = DataLoader(data, batch_size=args.batch, num_workers=args.workers)
    loss, confusion, seq_acc = evaluate(model, loader, device, len(classes))
    print(f"{len(data)} labelled images from {args.manifest.parent.name}")
    print(f"mean cross-entropy {loss:.4f}; sequence accuracy {seq_acc:.4f}")
    report(confusion, classes)
    if args.save_confusion is not None:
        with open(args.save_confusion, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["true/predicted"] + classes)
            for name, row in zip(classes, confusion.tolist()):
                writer.writerow([name] + row)


if __name__ == "__main__":
    main()
