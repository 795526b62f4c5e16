"""Evaluate a chest X-ray classifier checkpoint: accuracy, confusion matrix, calibration (ECE),
and a temperature fitted on the validation logits. Writes per-image predictions to CSV."""
import argparse
import csv

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

CLASSES = ["normal", "pneumonia", "covid", "tuberculosis"]


def build_model(checkpoint, device):
    model = models.resnet50(weights=None)
    model.fc = nn.Linear(model.fc.in_features, len(CLASSES))
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)["model"]
    state = {k.removeprefix("module."): v for k, v in state.items()}
    model.load_state_dict(state)
    return model.to(device).eval()


@torch.no_grad()
def collect_logits(model, loader, device):
    all_logits, all_labels = [], []
    for images, labels in loader:
        all_logits.append(model(images.to(device, non_blocking=True)).float().cpu())
        all_labels.append(labels)
    return torch.cat(all_logits), torch.cat(all_labels)


def expected_calibration_error(probs, labels, n_bins=15):
    conf, pred = probs.max(dim=1)
    correct = (pred == labels).float()
    edges = torch.linspace(0, 1, n_bins + 1)
    ece = torch.zeros(())
    for lo, hi in zip(edges[:-1], edges[1:]):
        in_bin = (conf > lo) & (conf <= hi)
        if in_bin.any():
            ece += in_bin.float().mean() * (conf[in_bin].mean() - correct[in_bin].mean()).abs()
    return ece.item()


def fit_temperature(logits, labels, steps=100):
    log_t = torch.zeros(1, requires_grad=True)
    opt = torch.optim.LBFGS([log_t], lr=0.1, max_iter=steps)

    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(logits / log_t.exp(), labels)
        loss.backward()
        return loss

    opt.step(closure)
    return log_t.exp().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkpoint")
    ap.add_argument("--val-dir", default="data/cxr/val")
    ap.add_argument("--test-dir", default="data/cxr/test")
    ap.add_argument("--out", default="predictions.csv")
    args = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    tf = transforms.Compose([
        transforms.Grayscale(num_output_channels=3), transforms.Resize(256), transforms.CenterCrop(224),
        transforms.ToTensor(), transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ])
    val_set, test_set = datasets.ImageFolder(args.val_dir, tf), datasets.ImageFolder(args.test_dir, tf)
    assert val_set.classes == test_set.classes == sorted(CLASSES), val_set.classes
    model = build_model(args.checkpoint, device)

    val_logits, val_labels = collect_logits(model, DataLoader(val_set, batch_size=128, num_workers=6), device)
    temperature = fit_temperature(val_logits, val_labels)
    test_logits, test_labels = collect_logits(model, DataLoader(test_set, batch_size=128, num_workers=6), device)

    probs_raw = F.softmax(test_logits, dim=1)
    probs_cal = F.softmax(test_logits / temperature, dim=1)
    preds = probs_cal.argmax(dim=1)
    k = len(val_set.classes)
    confusion = torch.bincount(test_labels * k + preds, minlength=k * k).view(k, k)
    print(f"accuracy {(preds == test_labels).float().mean().item():.4f}  temperature {temperature:.3f}")
    print(f"ECE raw {expected_calibration_error(probs_raw, test_labels):.4f} "
          f"calibrated {expected_calibration_error(probs_cal, test_labels):.4f}")
    print("confusion (rows = truth):\n", confusion)

    with open(args.out, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["path", "label", "pred", *[f"p_{c}" for c in test_set.classes]])
        for (path, label), pred, row in zip(test_set.samples, preds.tolist(), probs_cal.tolist()):
            writer.writerow([path, label, pred, *[f"{p:.5f}" for p in row]])


if __name__ == "__main__":
    main()
