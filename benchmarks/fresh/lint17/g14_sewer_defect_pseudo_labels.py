"""Stage 1 of the sewer-inspection pipeline: train a teacher on the labelled CCTV frames,
pseudo-label the unlabelled survey footage, then hand over to the student training job.

Frames arrive as backbone features, one .npy file per defect class (crack, root intrusion,
deposit, joint offset, ...), exported by the annotation tool.
"""
import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import ConcatDataset, DataLoader, TensorDataset


def class_folder_dataset(root):
    files = sorted(Path(root).glob("*.npy"))
    classes = [f.stem for f in files]
    parts = []
    for label, f in enumerate(files):
        feats = torch.from_numpy(np.load(f).astype(np.float32))
        parts.append(TensorDataset(feats, torch.full((len(feats),), label, dtype=torch.long)))
    return ConcatDataset(parts), classes


class Teacher(nn.Module):
    def __init__(self, d_in, n_classes, hidden=1024):
        super().__init__()
        self.net = nn.Sequential(
            nn.LayerNorm(d_in), nn.Linear(d_in, hidden), nn.GELU(), nn.Dropout(0.2),
            nn.Linear(hidden, hidden), nn.GELU(), nn.Dropout(0.2), nn.Linear(hidden, n_classes),
        )

    def forward(self, x):
        return self.net(x)


def train_teacher(model, loader, epochs, lr, device):
    optimizer = torch.optim.AdamW(
        [{"params": [p for n, p in model.named_parameters() if p.ndim > 1], "weight_decay": 0.05},
         {"params": [p for n, p in model.named_parameters() if p.ndim <= 1], "weight_decay": 0.0}], lr=lr)
    for epoch in range(epochs):
        model.train()
        total, n = 0.0, 0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
            n += len(y)
        print(f"teacher epoch {epoch}: loss {total / n:.4f}")
    return optimizer


@torch.no_grad()
def pseudo_label(model, feats, threshold, device, batch_size=4096):
    model.eval()
    keep_idx, labels, confs = [], [], []
    for start in range(0, len(feats), batch_size):
        probs = model(feats[start:start + batch_size].to(device)).softmax(dim=1)
        conf, label = probs.max(dim=1)
        mask = conf >= threshold
        keep_idx.append(torch.nonzero(mask).squeeze(1).cpu() + start)
        labels.append(label[mask].cpu())
        confs.append(conf[mask].cpu())
    return torch.cat(keep_idx), torch.cat(labels), torch.cat(confs)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--labelled", default="data/sewer/labelled")
    ap.add_argument("--unlabelled", default="data/sewer/unlabelled_feats.npy")
    ap.add_argument("--out", default="runs/sewer/stage1")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--threshold", type=float, default=0.9)
    ap.add_argument("--student-script", default="train_student.py")
    ap.add_argument("--seed", type=int, default=17)
    args = ap.parse_args(argv)

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    labelled, classes = class_folder_dataset(args.labelled)
    loader = DataLoader(labelled, batch_size=args.batch_size, num_workers=2, pin_memory=True)
    d_in = labelled[0][0].numel()
    teacher = Teacher(d_in, len(classes)).to(device)
    optimizer = train_teacher(teacher, loader, args.epochs, args.lr, device)
    torch.save(teacher.state_dict(), out / "teacher.pt")

    unlabelled = torch.from_numpy(np.load(args.unlabelled).astype(np.float32))
    idx, labels, confs = pseudo_label(teacher, unlabelled, args.threshold, device)
    torch.save({"index": idx, "label": labels, "confidence": confs}, out / "pseudo_labels.pt")
    counts = torch.bincount(labels, minlength=len(classes)).tolist()
    (out / "pseudo_summary.json").write_text(json.dumps(dict(zip(classes, counts)), indent=1))
    print(f"kept {len(idx)} / {len(unlabelled)} unlabelled frames")

    del teacher, optimizer, unlabelled
    if args.student_script and Path(args.student_script).exists():
        subprocess.run([sys.executable, args.student_script, "--pseudo", str(out / "pseudo_labels.pt"),
                        "--labelled", args.labelled, "--unlabelled", args.unlabelled], check=True)


if __name__ == "__main__":
    main()
