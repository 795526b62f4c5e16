"""Land-cover map from a Sentinel-2 RGB mosaic: cut the scene into tiles, classify each tile
with the EuroSAT CNN, and write a one-byte-per-tile class raster next to the input."""

import sys

import numpy as np
import rasterio
import torch
import torch.nn.functional as F
from torch import nn

CLASSES = ["AnnualCrop", "Forest", "HerbaceousVegetation", "Highway", "Industrial",
           "Pasture", "PermanentCrop", "Residential", "River", "SeaLake"]
TILE = 64
BAND_MEAN = torch.tensor([0.344, 0.380, 0.408]).view(1, 3, 1, 1)
BAND_STD = torch.tensor([0.203, 0.136, 0.115]).view(1, 3, 1, 1)


class EuroSATNet(nn.Module):
    def __init__(self, n_classes=len(CLASSES)):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.conv3 = nn.Conv2d(64, 128, 3, padding=1)
        self.bn1, self.bn2, self.bn3 = nn.BatchNorm2d(32), nn.BatchNorm2d(64), nn.BatchNorm2d(128)
        self.fc1 = nn.Linear(128 * 4 * 4, 256)
        self.fc2 = nn.Linear(256, n_classes)
        self.drop = nn.Dropout(0.4)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = F.max_pool2d(F.relu(self.bn3(self.conv3(x))), 2)
        x = x.view(-1, 128 * 4 * 4)
        return self.fc2(self.drop(F.relu(self.fc1(x))))


def iter_tiles(scene, batch=256):
    _, h, w = scene.shape
    coords = [(r, c) for r in range(0, h - TILE + 1, TILE) for c in range(0, w - TILE + 1, TILE)]
    for start in range(0, len(coords), batch):
        chunk = coords[start:start + batch]
        tiles = np.stack([scene[:, r:r + TILE, c:c + TILE] for r, c in chunk])
        yield chunk, torch.from_numpy(tiles)


def main(scene_path, weights="eurosat_cnn.pt"):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = EuroSATNet()
    model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
    model.to(device).eval()

    with rasterio.open(scene_path) as src:
        scene = src.read([4, 3, 2]).astype(np.float32) / 10000.0
        profile = src.profile

    rows, cols = scene.shape[1] // TILE, scene.shape[2] // TILE
    label_map = np.full((rows, cols), 255, dtype=np.uint8)
    with torch.inference_mode():
        for coords, tiles in iter_tiles(scene):
            x = ((tiles.clamp(0, 1) - BAND_MEAN) / BAND_STD).to(device)
            preds = model(x).argmax(dim=1).cpu()
            for (r, c), cls in zip(coords, preds.tolist()):
                label_map[r // TILE, c // TILE] = cls

    profile.update(count=1, dtype="uint8", width=cols, height=rows, nodata=255,
                   transform=profile["transform"] * profile["transform"].scale(TILE, TILE))
    out_path = scene_path.replace(".tif", "_landcover.tif")
    with rasterio.open(out_path, "w", **profile) as dst:
        dst.write(label_map, 1)
    counts = np.bincount(label_map[label_map != 255], minlength=len(CLASSES))
    for name, n in zip(CLASSES, counts):
        print(f"{name:>22s} {n / counts.sum():6.1%}")


if __name__ == "__main__":
    main(sys.argv[1])
