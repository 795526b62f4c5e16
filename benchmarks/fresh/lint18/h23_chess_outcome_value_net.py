import argparse
import copy

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

OUTCOMES = ["black_wins", "draw", "white_wins"]
PIECES = "PNBRQKpnbrqk"


def fen_to_planes(fen):
    board, side = fen.split()[:2]
    planes = np.zeros((13, 8, 8), dtype=np.float32)
    for r, row in enumerate(board.split("/")):
        c = 0
        for ch in row:
            if ch.isdigit():
                c += int(ch)
            else:
                planes[PIECES.index(ch), r, c] = 1.0
                c += 1
    planes[12] = 1.0 if side == "w" else 0.0
    return planes


def load_positions(path):
    fens, labels = [], []
    with open(path) as f:
        for line in f:
            fen, result = line.rstrip("\n").rsplit(",", 1)
            fens.append(fen_to_planes(fen))
            labels.append({"0-1": 0, "1/2-1/2": 1, "1-0": 2}[result])
    return TensorDataset(torch.from_numpy(np.stack(fens)), torch.tensor(labels))


class Residual(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch), nn.ReLU(),
                                  nn.Conv2d(ch, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch))

    def forward(self, x):
        return torch.relu(x + self.body(x))


class ValueNet(nn.Module):
    def __init__(self, ch=64, blocks=6):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(13, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch), nn.ReLU())
        self.tower = nn.Sequential(*[Residual(ch) for _ in range(blocks)])
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(ch * 64, 256), nn.ReLU(), nn.Linear(256, len(OUTCOMES)))

    def forward(self, planes):
        return self.head(self.tower(self.stem(planes)))

    @torch.no_grad()
    def expected_score(self, planes):
        probs = torch.softmax(self(planes), dim=1)
        return probs @ torch.tensor([0.0, 0.5, 1.0], device=probs.device)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", default="data/lichess_positions_train.csv")
    p.add_argument("--val", default="data/lichess_positions_val.csv")
    p.add_argument("--epochs", type=int, default=12)
    args = p.parse_args()
    train = DataLoader(load_positions(args.train), batch_size=256, shuffle=True, drop_last=True)
    val = DataLoader(load_positions(args.val), batch_size=1024)
    model = ValueNet()
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, nesterov=True)
    best_acc, best_state, losses = 0.0, None, []

    for epoch in range(args.epochs):
        model.train()
        for planes, outcome in train:
            loss = criterion(model(planes), outcome)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for planes, outcome in val:
                correct += (model(planes).argmax(dim=1) == outcome).sum().item()
                total += len(outcome)
        acc = correct / total
        print(f"epoch {epoch}: train loss {np.mean(losses[-len(train):]):.4f} val acc {acc:.3f}")
        if acc > best_acc:
            best_acc, best_state = acc, copy.deepcopy(model.state_dict())

    model.load_state_dict(best_state)
    model.eval()
    planes, _ = next(iter(val))
    print("expected score of first val positions:", model.expected_score(planes[:5]).tolist())
    torch.save(model.state_dict(), "chess_value_net.pt")


if __name__ == "__main__":
    main()
