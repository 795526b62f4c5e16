import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)[:, None, None]
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)[:, None, None]


def parse_args():
    p = argparse.ArgumentParser(description="Embed catalogue photos for visual search")
    p.add_argument("--photos", default="data/catalogue/photos")
    p.add_argument("--checkpoint", default="runs/photo_encoder/best.pt")
    p.add_argument("--out", default="serving/photo_vectors")
    p.add_argument("--size", type=int, default=192)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--workers", type=int, default=4)
    return p.parse_args()


class Photos(Dataset):
    def __init__(self, folder, size):
        self.paths = sorted(Path(folder).glob("*.jpg"))
        self.size = size

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        path = self.paths[index]
        with Image.open(path) as img:
            img = img.convert("RGB").resize((self.size, self.size), Image.BICUBIC)
            chw = np.asarray(img, dtype=np.float32).transpose(2, 0, 1) / 255.0
        return torch.from_numpy((chw - MEAN) / STD), path.stem


def stage(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class PhotoEncoder(nn.Module):
    def __init__(self, dim=256, width=48):
        super().__init__()
        self.stem = stage(3, width, 2)
        self.body = nn.Sequential(stage(width, width * 2, 2), stage(width * 2, width * 4, 2),
                                  stage(width * 4, width * 8, 2))
        self.proj = nn.Linear(width * 8, dim)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.body(self.stem(x)).mean(dim=(2, 3))
        return F.normalize(self.proj(x), dim=1)


def load_encoder(path, device):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    encoder = PhotoEncoder(**ckpt["hparams"])
    missing, unexpected = encoder.load_state_dict(ckpt["encoder"], strict=True)
    return encoder.to(device).eval(), ckpt


def embed(encoder, loader, device):
    vectors, names = [], []
    with torch.inference_mode():
        for images, stems in loader:
            vectors.append(encoder(images.to(device, non_blocking=True)).float().cpu())
            names.extend(stems)
    return torch.cat(vectors), names


def write_shards(vectors, names, folder, per_shard=50000):
    folder.mkdir(parents=True, exist_ok=True)
    shards = []
    for k, start in enumerate(range(0, len(names), per_shard)):
        block = vectors[start:start + per_shard].clone()
        torch.save({"vectors": block, "names": names[start:start + per_shard]}, folder / f"shard_{k:03d}.pt")
        shards.append({"file": f"shard_{k:03d}.pt", "rows": block.size(0)})
    return shards


def write_single(vectors, names, folder, wanted):
    folder.mkdir(parents=True, exist_ok=True)
    position = {n: i for i, n in enumerate(names)}
    for name in wanted:
        if name in position:
            torch.save(vectors[position[name]].clone(), folder / f"{name}.pt")


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    encoder, ckpt = load_encoder(args.checkpoint, device)
    loader = DataLoader(Photos(args.photos, args.size), batch_size=args.batch_size, num_workers=args.workers)
    vectors, names = embed(encoder, loader, device)
    out = Path(args.out)
    shards = write_shards(vectors, names, out / "shards")
    write_single(vectors, names, out / "featured", ckpt.get("featured", [])[:500])
    manifest = {"count": len(names), "dim": int(vectors.size(1)), "shards": shards, "step": int(ckpt.get("step", 0))}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    sims = vectors[:1000] @ vectors[:1000].T
    off_diag = sims[~torch.eye(sims.size(0), dtype=torch.bool)]
    print(f"{len(names)} photos; mean pairwise cosine {off_diag.mean():.3f}")


if __name__ == "__main__":
    main()
