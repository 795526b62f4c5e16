"""CenterNet-style wheat head detector (Global Wheat Head Detection, 1024x1024 field images).

Trainer with hooks; heatmap focal loss plus box-size regression at object centres.
"""
import ast
import math
import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import models
from torchvision.transforms import functional as TF


@dataclass
class Cfg:
    root: str = "data/global-wheat"
    size: int = 512
    stride: int = 4
    batch_size: int = 8
    epochs: int = 20
    lr: float = 2.5e-4
    prior: float = 0.01
    device: str = "cuda" if torch.cuda.is_available() else "cpu"


class WheatDataset(Dataset):
    def __init__(self, cfg, train=True):
        df = pd.read_csv(os.path.join(cfg.root, "train.csv"))
        self.boxes = df.groupby("image_id")["bbox"].apply(lambda s: [ast.literal_eval(b) for b in s])
        self.ids, self.cfg, self.train = list(self.boxes.index), cfg, train

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        img = Image.open(os.path.join(self.cfg.root, "train", self.ids[i] + ".jpg")).convert("RGB")
        scale = self.cfg.size / img.width
        img = TF.resize(img, [self.cfg.size, self.cfg.size])
        boxes = np.array(self.boxes.iloc[i], dtype=np.float32).reshape(-1, 4) * scale
        if self.train and torch.rand(1).item() < 0.5:
            img = TF.hflip(img)
            boxes[:, 0] = self.cfg.size - boxes[:, 0] - boxes[:, 2]
        x = TF.normalize(TF.to_tensor(img), [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
        return x, self.targets(boxes)

    def targets(self, boxes):
        out = self.cfg.size // self.cfg.stride
        heat = np.zeros((out, out), np.float32)
        wh = np.zeros((2, out, out), np.float32)
        ys, xs = np.mgrid[0:out, 0:out]
        for x0, y0, w, h in boxes / self.cfg.stride:
            cx, cy = int(x0 + w / 2), int(y0 + h / 2)
            if not (0 <= cx < out and 0 <= cy < out):
                continue
            sigma = max(w, h) / 6 + 0.5
            heat = np.maximum(heat, np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * sigma ** 2)))
            wh[:, cy, cx] = (w, h)
        return torch.from_numpy(heat)[None], torch.from_numpy(wh)


class CenterNet(nn.Module):
    def __init__(self):
        super().__init__()
        r = models.resnet18(weights=models.ResNet18_Weights.IMAGENET1K_V1)
        self.backbone = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1, r.layer2, r.layer3)
        up = []
        for c_in, c_out in [(256, 128), (128, 64)]:
            up += [nn.ConvTranspose2d(c_in, c_out, 4, 2, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(True)]
        self.neck = nn.Sequential(*up)
        self.hm_head = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(True), nn.Conv2d(64, 1, 1))
        self.wh_head = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(True), nn.Conv2d(64, 2, 1))

    def forward(self, x):
        f = self.neck(self.backbone(x))
        return self.hm_head(f), self.wh_head(f)


def focal_loss(logits, heat, alpha=2, beta=4):
    pos = heat.eq(1).float()
    pos_term = pos * (1 - logits.sigmoid()) ** alpha * F.logsigmoid(logits)
    neg_term = (1 - pos) * (1 - heat) ** beta * logits.sigmoid() ** alpha * F.logsigmoid(-logits)
    return -(pos_term + neg_term).sum() / pos.sum().clamp(min=1)


class PriorBiasInit:
    """Start the heatmap at the background prior so early focal-loss gradients are sane."""

    def __init__(self, prior):
        self.bias = -math.log((1 - prior) / prior)

    def on_fit_start(self, trainer):
        last = trainer.model.hm_head[-1]
        last.bias = nn.Parameter(torch.full_like(last.bias, self.bias))


class LogLoss:
    def on_epoch_end(self, trainer, epoch, stats):
        print(f"epoch {epoch:02d} " + " ".join(f"{k}={v:.4f}" for k, v in stats.items()))


class Trainer:
    def __init__(self, model, cfg, hooks=()):
        self.cfg, self.hooks = cfg, list(hooks)
        self.model = model.to(cfg.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.lr)
        self.scheduler = torch.optim.lr_scheduler.MultiStepLR(self.optimizer, [12, 17], 0.1)

    def _call(self, name, *args):
        for hook in self.hooks:
            if hasattr(hook, name):
                getattr(hook, name)(self, *args)

    def fit(self, loader):
        self._call("on_fit_start")
        for epoch in range(self.cfg.epochs):
            self.model.train()
            sums = {"hm": 0.0, "wh": 0.0}
            for x, (heat, wh) in loader:
                x, heat, wh = x.to(self.cfg.device), heat.to(self.cfg.device), wh.to(self.cfg.device)
                hm_logits, wh_pred = self.model(x)
                mask = (heat == 1).float()
                l_hm = focal_loss(hm_logits, heat)
                l_wh = (F.l1_loss(wh_pred, wh, reduction="none") * mask).sum() / mask.sum().clamp(min=1)
                self.optimizer.zero_grad()
                (l_hm + 0.1 * l_wh).backward()
                self.optimizer.step()
                sums["hm"] += l_hm.item() / len(loader)
                sums["wh"] += l_wh.item() / len(loader)
            self.scheduler.step()
            self._call("on_epoch_end", epoch, sums)
        torch.save(self.model.state_dict(), "centernet_wheat.pt")


if __name__ == "__main__":
    cfg = Cfg()
    torch.manual_seed(0)
    loader = DataLoader(WheatDataset(cfg), batch_size=cfg.batch_size, shuffle=True, num_workers=4, drop_last=True)
    Trainer(CenterNet(), cfg, hooks=[PriorBiasInit(cfg.prior), LogLoss()]).fit(loader)
