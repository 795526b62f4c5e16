"""Handwritten line recognition for digitised parish registers: CRNN trained with CTC.

labels.tsv holds "<file name>\t<transcription>"; the line images are greyscale PNGs of any
width, resized to a fixed 32 x 512 strip.
"""
import argparse
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset, random_split
from torchvision import transforms

HEIGHT = 32
WIDTH = 512
ALPHABET = " abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:'-()&"


class LineImages(Dataset):
    def __init__(self, root):
        self.root = Path(root)
        with open(self.root / "labels.tsv", encoding="utf-8") as fh:
            pairs = [line.rstrip("\n").split("\t", 1) for line in fh if "\t" in line]
        self.items = [(name, text) for name, text in pairs if all(c in ALPHABET for c in text)]
        self.to_tensor = transforms.ToTensor()

    def __len__(self):
        return len(self.items)

    def load_image(self, i):
        img = Image.open(self.root / self.items[i][0]).convert("L")
        img = np.asarray(img.resize((WIDTH, HEIGHT), Image.BILINEAR)) / 255.0
        return self.to_tensor(1.0 - img)

    def __getitem__(self, i):
        text = self.items[i][1]
        target = torch.tensor([ALPHABET.index(c) + 1 for c in text], dtype=torch.long)
        return self.load_image(i).float(), target


def line_collate(batch):
    images = torch.stack([img for img, _ in batch])
    targets = torch.cat([t for _, t in batch])
    target_lengths = torch.tensor([len(t) for _, t in batch], dtype=torch.long)
    return images, targets, target_lengths


class CRNN(nn.Module):
    def __init__(self, n_chars, hidden=128):
        super().__init__()
        def block(c_in, c_out, pool):
            return [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(), nn.MaxPool2d(pool)]
        self.cnn = nn.Sequential(*block(1, 32, (2, 2)), *block(32, 64, (2, 2)), *block(64, 128, (2, 1)), *block(128, 128, (4, 1)))
        self.rnn = nn.LSTM(128, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, n_chars + 1)

    def forward(self, x):
        f = self.cnn(x).squeeze(2).permute(0, 2, 1)
        out, _ = self.rnn(f)
        return self.fc(out).log_softmax(-1)


def greedy_decode(log_probs):
    best = log_probs.argmax(-1)
    texts = []
    for seq in best.tolist():
        chars, prev = [], 0
        for s in seq:
            if s != prev and s != 0:
                chars.append(ALPHABET[s - 1])
            prev = s
        texts.append("".join(chars))
    return texts


def dump_previews(dataset, out_dir, n=8):
    out_dir.mkdir(parents=True, exist_ok=True)
    to_pil = transforms.ToPILImage()
    for i in range(min(n, len(dataset))):
        to_pil(dataset.load_image(i)).save(out_dir / f"line_{i:03d}.png")


def run_epoch(model, loader, ctc, device, optimizer=None, clip=5.0):
    total, n = 0.0, 0
    for images, targets, target_lengths in loader:
        log_probs = model(images.to(device))
        input_lengths = torch.full((images.size(0),), log_probs.size(1), dtype=torch.long)
        loss = ctc(log_probs.permute(1, 0, 2), targets, input_lengths, target_lengths)
        if optimizer is not None:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        total += loss.item() * images.size(0)
        n += images.size(0)
    return total / max(n, 1)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/registers")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--previews", default="runs/ocr/previews")
    ap.add_argument("--ckpt", default="runs/ocr/crnn.pt")
    args = ap.parse_args(argv)

    random.seed(1)
    np.random.seed(1)
    torch.manual_seed(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dataset = LineImages(args.root)
    dump_previews(dataset, Path(args.previews))
    n_valid = max(1, len(dataset) // 10)
    train_set, valid_set = random_split(dataset, [len(dataset) - n_valid, n_valid],
                                        generator=torch.Generator().manual_seed(1))
    train_dl = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, collate_fn=line_collate, drop_last=True)
    valid_dl = DataLoader(valid_set, batch_size=args.batch_size, collate_fn=line_collate)

    model = CRNN(len(ALPHABET)).to(device)
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        train_loss = run_epoch(model, train_dl, ctc, device, optimizer)
        model.eval()
        with torch.no_grad():
            valid_loss = run_epoch(model, valid_dl, ctc, device)
            images, _, _ = next(iter(valid_dl))
            sample = greedy_decode(model(images.to(device)).cpu())[0]
        print(f"epoch {epoch}: train {train_loss:.3f} valid {valid_loss:.3f} sample {sample!r}")
    Path(args.ckpt).parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "alphabet": ALPHABET}, args.ckpt)


if __name__ == "__main__":
    main()
