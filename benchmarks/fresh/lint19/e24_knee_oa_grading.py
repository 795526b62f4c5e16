import argparse
import csv
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from PIL import Image

KL_GRADES = ["KL0 none", "KL1 doubtful", "KL2 minimal", "KL3 moderate", "KL4 severe"]


class ResidualBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(h)) + self.skip(x))


class KneeGrader(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, width, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.layers = nn.Sequential(ResidualBlock(width, width, 1), ResidualBlock(width, 2 * width, 2),
                                    ResidualBlock(2 * width, 4 * width, 2), ResidualBlock(4 * width, 8 * width, 2))
        self.head = nn.Sequential(nn.Dropout(0.5), nn.Linear(8 * width, len(KL_GRADES)))

    def forward(self, x):
        return self.head(self.layers(self.stem(x)).mean(dim=(2, 3)))


def load_model(path, device):
    state = torch.load(path, map_location="cpu", weights_only=True)
    model = KneeGrader(width=state["width"])
    model.load_state_dict(state["model"])
    return model.to(device)


def load_radiograph(path, size=256):
    img = Image.open(path).convert("L").resize((size, size), Image.BILINEAR)
    x = np.asarray(img, dtype=np.float32) / 255.0
    return torch.from_numpy((x - x.mean()) / (x.std() + 1e-6))[None]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", default="runs/knee/grader_best.pt")
    ap.add_argument("--images", type=Path, default=Path("data/knee_test"))
    ap.add_argument("--out", default="submission.csv")
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = load_model(args.weights, device)
    files = sorted(args.images.glob("*.png"))
    rows = []
    with torch.inference_mode():
        for start in range(0, len(files), args.batch_size):
            chunk = files[start:start + args.batch_size]
            x = torch.stack([load_radiograph(f) for f in chunk]).to(device)
            probs = torch.softmax(model(x), dim=1).cpu()
            expected = (probs * torch.arange(len(KL_GRADES))).sum(1)
            for f, p, e in zip(chunk, probs, expected):
                rows.append([f.stem, int(p.argmax()), f"{e:.3f}"] + [f"{v:.4f}" for v in p.tolist()])

    with open(args.out, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["image_id", "kl_grade", "expected_grade"] + [f"p_kl{k}" for k in range(len(KL_GRADES))])
        writer.writerows(rows)
    print(f"wrote {len(rows)} predictions to {args.out}")


if __name__ == "__main__":
    main()
