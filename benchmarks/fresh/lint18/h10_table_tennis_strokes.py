import argparse
import json
from pathlib import Path

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.data import DataLoader, Dataset

STROKES = ["forehand_drive", "backhand_drive", "forehand_loop", "backhand_loop", "push", "flick", "serve", "block"]
JOINTS = 17


class PoseClips(Dataset):
    def __init__(self, root, split, max_frames=96):
        self.clips = json.loads((Path(root) / f"{split}.json").read_text())
        self.max_frames = max_frames

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, i):
        clip = self.clips[i]
        pose = torch.tensor(clip["keypoints"], dtype=torch.float32)[: self.max_frames]
        hip = pose[:, 11:13].mean(dim=1, keepdim=True)
        scale = (pose[:, 5] - pose[:, 12]).norm(dim=-1).mean().clamp(min=1e-3)
        pose = (pose - hip) / scale
        return {"pose": pose.flatten(1), "length": len(pose), "label": STROKES.index(clip["stroke"])}


def collate(items):
    longest = max(it["length"] for it in items)
    pose = torch.zeros(len(items), longest, 2 * JOINTS)
    for i, it in enumerate(items):
        pose[i, : it["length"]] = it["pose"]
    return {"pose": pose, "length": torch.tensor([it["length"] for it in items]),
            "label": torch.tensor([it["label"] for it in items])}


class StrokeEncoder(nn.Module):
    def __init__(self, hidden=128, n_out=len(STROKES)):
        super().__init__()
        self.frame = nn.Sequential(nn.Linear(2 * JOINTS, hidden), nn.LayerNorm(hidden), nn.GELU())
        self.rnn = nn.LSTM(hidden, hidden, num_layers=2, batch_first=True, bidirectional=True, dropout=0.1)
        self.head = nn.Linear(2 * hidden, n_out)

    def forward(self, pose, length):
        packed = pack_padded_sequence(self.frame(pose), length.cpu(), batch_first=True, enforce_sorted=False)
        _, (h, _) = self.rnn(packed)
        return self.head(torch.cat([h[-2], h[-1]], dim=1))


def to_device(batch, device):
    return {key: value.to(device, non_blocking=True) for key, value in batch.items()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="data/tt_strokes")
    p.add_argument("--pretrained", default="checkpoints/badminton_pose_lstm.pt")
    p.add_argument("--epochs", type=int, default=40)
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    model = StrokeEncoder(n_out=12)
    model.load_state_dict(torch.load(args.pretrained, map_location="cpu", weights_only=True))
    model.head = nn.Linear(model.head.in_features, len(STROKES))
    model = model.to(device)
    opt = torch.optim.Adam([{"params": model.head.parameters(), "lr": 1e-3},
                            {"params": [p for n, p in model.named_parameters() if not n.startswith("head.")], "lr": 1e-4}])
    train = DataLoader(PoseClips(args.root, "train"), batch_size=32, shuffle=True, collate_fn=collate)
    val = DataLoader(PoseClips(args.root, "val"), batch_size=64, collate_fn=collate)

    for epoch in range(args.epochs):
        model.train()
        for batch in train:
            batch = to_device(batch, device)
            loss = nn.functional.cross_entropy(model(batch["pose"], batch["length"]), batch["label"])
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for batch in val:
                batch = to_device(batch, device)
                correct += (model(batch["pose"], batch["length"]).argmax(dim=1) == batch["label"]).sum().item()
                total += len(batch["label"])
        print(f"epoch {epoch}: val accuracy {correct / total:.3f}")
    torch.save(model.state_dict(), "tt_stroke_lstm.pt")


if __name__ == "__main__":
    main()
