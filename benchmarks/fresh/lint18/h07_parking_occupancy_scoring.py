import argparse
import csv
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from PIL import Image

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


class OccupancyNet(nn.Module):
    def __init__(self, width=32, dropout=0.3):
        super().__init__()
        chans = [3, width, 2 * width, 4 * width, 8 * width]
        self.features = nn.Sequential(*[
            nn.Sequential(nn.Conv2d(a, b, 3, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU(), nn.MaxPool2d(2))
            for a, b in zip(chans[:-1], chans[1:])
        ])
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(dropout), nn.Linear(chans[-1], 1))

    def forward(self, x):
        return self.classifier(nn.functional.adaptive_avg_pool2d(self.features(x), 1)).squeeze(1)


def crop_spaces(frame, spaces, size):
    crops = []
    for space in spaces:
        x0, y0, x1, y1 = space["box"]
        patch = frame.crop((x0, y0, x1, y1)).convert("RGB").resize((size, size), Image.BILINEAR)
        arr = (np.asarray(patch, dtype=np.float32) / 255.0 - MEAN) / STD
        crops.append(torch.from_numpy(arr.transpose(2, 0, 1).copy()))
    return torch.stack(crops)


class LotScorer:
    def __init__(self, weights, device, size=64, threshold=0.5):
        self.device, self.size, self.threshold = device, size, threshold
        self.model = OccupancyNet()
        self.model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        self.model.to(device)

    @torch.inference_mode()
    def score_frame(self, frame_path, spaces):
        frame = Image.open(frame_path)
        batch = crop_spaces(frame, spaces, self.size).to(self.device)
        probs = torch.sigmoid(self.model(batch)).cpu()
        return [
            {"space": s["id"], "p_occupied": round(float(p), 4), "occupied": bool(p >= self.threshold)}
            for s, p in zip(spaces, probs)
        ]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--weights", default="models/occupancy_net.pt")
    p.add_argument("--layout", default="lots/lot_b_spaces.json")
    p.add_argument("--frames", default="frames/lot_b")
    p.add_argument("--out", default="occupancy_lot_b.csv")
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    spaces = json.loads(Path(args.layout).read_text())["spaces"]
    scorer = LotScorer(args.weights, device)
    frames = sorted(Path(args.frames).glob("*.jpg"))
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["frame", "space", "p_occupied", "occupied"])
        writer.writeheader()
        for frame_path in frames:
            rows = scorer.score_frame(frame_path, spaces)
            for row in rows:
                writer.writerow({"frame": frame_path.name, **row})
            free = sum(not r["occupied"] for r in rows)
            print(f"{frame_path.name}: {free}/{len(rows)} free")


if __name__ == "__main__":
    main()
