import argparse
import csv
import json
from collections import defaultdict
from pathlib import Path

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms
from torchvision.io import ImageReadMode, read_image

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--split-file", default="data/herbarium/test_split.csv")
    p.add_argument("--image-root", default="data/herbarium/images")
    p.add_argument("--checkpoint", default="runs/herbarium/best.pt")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--report", default="reports_out/herbarium_eval.json")
    p.add_argument("--predictions", default="reports_out/herbarium_predictions.csv")
    return p.parse_args()


def eval_pipeline(size=224):
    return transforms.Compose([
        transforms.Resize(int(size * 256 / 224)),
        transforms.CenterCrop(size),
        transforms.ToTensor(),
        transforms.Normalize(MEAN, STD),
    ])


class SheetImages(Dataset):
    def __init__(self, split_file, image_root, transform):
        with open(split_file, newline="") as handle:
            self.rows = [(r["file"], int(r["species_idx"])) for r in csv.DictReader(handle)]
        self.root = Path(image_root)
        self.transform = transform

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        name, label = self.rows[index]
        image = read_image(str(self.root / name), mode=ImageReadMode.RGB)
        return self.transform(image), label, name


def build_model(checkpoint, device):
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)
    model = models.resnet50(weights=None)
    model.fc = nn.Linear(model.fc.in_features, state["num_classes"])
    model.load_state_dict(state["model"])
    return model.to(device).eval(), state.get("species_names")


def topk_hits(logits, labels, ks=(1, 5)):
    top = logits.topk(max(ks), dim=1).indices
    hits = top == labels.unsqueeze(1)
    return {k: hits[:, :k].any(dim=1) for k in ks}


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dataset = SheetImages(args.split_file, args.image_root, eval_pipeline())
    loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers, pin_memory=True)
    model, names = build_model(args.checkpoint, device)
    counts = {1: 0, 5: 0}
    per_class = defaultdict(lambda: [0, 0])
    total = 0
    Path(args.predictions).parent.mkdir(parents=True, exist_ok=True)
    with open(args.predictions, "w", newline="") as handle, torch.no_grad():
        writer = csv.writer(handle)
        writer.writerow(["file", "label", "pred", "confidence"])
        for images, labels, files in loader:
            logits = model(images.to(device, non_blocking=True)).float().cpu()
            hits = topk_hits(logits, labels)
            for k in counts:
                counts[k] += int(hits[k].sum())
            probs = logits.softmax(dim=1)
            conf, pred = probs.max(dim=1)
            for f, y, p_, c, h in zip(files, labels.tolist(), pred.tolist(), conf.tolist(), hits[1].tolist()):
                writer.writerow([f, y, p_, f"{c:.4f}"])
                per_class[y][0] += int(h)
                per_class[y][1] += 1
            total += labels.numel()
    macro = sum(c / n for c, n in per_class.values()) / max(len(per_class), 1)
    report = {"images": total, "top1": counts[1] / total, "top5": counts[5] / total, "macro_top1": macro}
    if names:
        worst = sorted(per_class.items(), key=lambda kv: kv[1][0] / kv[1][1])[:10]
        report["worst_species"] = [names[k] for k, _ in worst]
    Path(args.report).write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
