import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
from torch.utils.data import DataLoader, TensorDataset

SYMBOLS = ["whole", "half", "quarter", "eighth", "sixteenth", "rest_quarter", "rest_eighth", "sharp", "flat", "natural", "clef_g", "clef_f"]


class GlyphBackbone(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1, bias=False), nn.BatchNorm2d(2 * width), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 4 * width, 3, padding=1, bias=False), nn.BatchNorm2d(4 * width), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.dim = 4 * width

    def forward(self, x):
        return self.net(x)


class SymbolClassifier(nn.Module):
    def __init__(self, backbone, n_classes, p_drop=0.3):
        super().__init__()
        self.backbone = backbone
        self.fc = nn.Linear(backbone.dim, n_classes)
        self.p_drop = p_drop

    def forward(self, x):
        z = F.dropout(self.backbone(x), p=self.p_drop, training=self.training)
        return F.log_softmax(self.fc(z), dim=1)


def load_pretrained(path):
    backbone = GlyphBackbone()
    state = torch.load(path, map_location="cpu", weights_only=True)
    state = state.get("backbone", state)
    consume_prefix_in_state_dict_if_present(state, "module.")
    backbone.load_state_dict(state)
    return backbone


def glyph_tensors(images, labels):
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)
    return TensorDataset((x - 0.9) / 0.2, torch.from_numpy(labels.astype(np.int64)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="glyphs.npz")
    parser.add_argument("--pretrained", default="glyph_backbone.pt")
    parser.add_argument("--epochs", type=int, default=15)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = np.load(args.data)
    train_loader = DataLoader(glyph_tensors(data["train_x"], data["train_y"]), batch_size=64, shuffle=True)
    val_loader = DataLoader(glyph_tensors(data["val_x"], data["val_y"]), batch_size=256)
    model = SymbolClassifier(load_pretrained(args.pretrained), len(SYMBOLS)).to(device)
    model.backbone.requires_grad_(False)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05, momentum=0.9)
    criterion = nn.NLLLoss()
    for epoch in range(args.epochs):
        model.train()
        model.backbone.eval()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        hits, n = 0, 0
        with torch.no_grad():
            for x, y in val_loader:
                hits += (model(x.to(device)).argmax(dim=1).cpu() == y).sum().item()
                n += len(y)
        print(f"epoch {epoch}: val acc {hits / n:.4f}")
    torch.save(model.fc.state_dict(), "symbol_head.pt")


if __name__ == "__main__":
    main()
