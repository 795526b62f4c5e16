"""Few-shot plankton classification: Prototypical Networks on a Conv-4 encoder, episodic
training on the base classes, 5-way K-shot evaluation on the novel classes with
CL2N features (centred on the base-class mean, then L2-normalised).

Folder layout: data/plankton_fewshot/{base,novel}/<class>/<image>.png (grayscale)
"""
import argparse
import random
from itertools import islice
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--root", type=Path, default=Path("data/plankton_fewshot"))
    p.add_argument("--way", type=int, default=5)
    p.add_argument("--query", type=int, default=15)
    p.add_argument("--shot", type=int, default=5)
    p.add_argument("--episodes", type=int, default=40000)
    p.add_argument("--test-episodes", type=int, default=2000)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=3)
    return p.parse_args()


class ImagePool:
    def __init__(self, folder, size=84):
        self.classes = {d.name: sorted(d.glob("*.png")) for d in sorted(folder.iterdir()) if d.is_dir()}
        self.classes = {c: f for c, f in self.classes.items() if len(f) >= 40}
        self.size = size

    def load(self, path):
        img = Image.open(path).convert("L").resize((self.size, self.size), Image.BILINEAR)
        x = torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0)
        return ((x - 0.5) / 0.25).unsqueeze(0)

    def episodes(self, way, shot, query, augment=False):
        while True:
            picked = random.sample(list(self.classes), way)
            support, queries = [], []
            for c in picked:
                files = random.sample(self.classes[c], shot + query)
                imgs = [self.load(f) for f in files]
                if augment:
                    imgs = [torch.rot90(x, random.randint(0, 3), dims=(1, 2)) for x in imgs]
                support += imgs[:shot]
                queries += imgs[shot:]
            yield torch.stack(support), torch.stack(queries)


def conv4(width=64):
    def block(cin):
        return nn.Sequential(nn.Conv2d(cin, width, 3, padding=1, bias=False), nn.BatchNorm2d(width),
                             nn.ReLU(True), nn.MaxPool2d(2))
    return nn.Sequential(block(1), block(width), block(width), block(width), nn.Flatten())


def proto_logits(support, query, way, shot):
    prototypes = support.view(way, shot, -1).mean(1)
    return -torch.cdist(query, prototypes).pow(2)


def episode_labels(way, n, device):
    return torch.arange(way, device=device).repeat_interleave(n)


@torch.no_grad()
def base_mean(encoder, pool, args, device, n_episodes=300):
    encoder.eval()
    feats = []
    for support, query in islice(pool.episodes(args.way, args.shot, args.query), n_episodes):
        feats.append(encoder(torch.cat([support, query]).to(device)))
    return torch.stack(feats).mean(dim=0)


@torch.no_grad()
def evaluate(encoder, pool, mean, args, device):
    shot = args.shot
    encoder.eval()
    accs = []
    for support, query in islice(pool.episodes(args.way, shot, args.query), args.test_episodes):
        z = encoder(torch.cat([support, query]).to(device))
        z = F.normalize(z - mean, dim=1)
        logits = proto_logits(z[: len(support)], z[len(support):], args.way, shot)
        accs.append((logits.argmax(1) == episode_labels(args.way, args.query, device)).float().mean().item())
    accs = np.array(accs)
    return accs.mean(), 1.96 * accs.std() / np.sqrt(len(accs))


def main():
    args = parse()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    base, novel = ImagePool(args.root / "base"), ImagePool(args.root / "novel")

    encoder = conv4().to(device)
    optimizer = torch.optim.Adam(encoder.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10000, gamma=0.5)
    labels = episode_labels(args.way, args.query, device)
    running = []
    episodes = base.episodes(args.way, args.shot, args.query, augment=True)
    for step, (support, query) in enumerate(islice(episodes, args.episodes)):
        encoder.train()
        z = encoder(torch.cat([support, query]).to(device))
        logits = proto_logits(z[: len(support)], z[len(support):], args.way, args.shot)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        running.append(loss.item())
        if step % 1000 == 999:
            print(f"episode {step + 1}: loss {np.mean(running):.4f}")
            running.clear()

    mean = base_mean(encoder, base, args, device)
    acc, ci = evaluate(encoder, novel, mean, args, device)
    print(f"{args.way}-way {args.shot}-shot: {100 * acc:.2f} +- {100 * ci:.2f} %")
    torch.save({"encoder": encoder.state_dict(), "base_mean": mean.cpu()}, "protonet_plankton.pt")


if __name__ == "__main__":
    main()
