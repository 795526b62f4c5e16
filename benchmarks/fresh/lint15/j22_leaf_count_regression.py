import csv
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torch.utils.tensorboard import SummaryWriter

OPTIONS = {"root": "data/cvppp_a1", "size": 192, "batch": 16, "epochs": 60, "lr": 5e-4, "log_dir": "runs/leafcount",
           "hook_every": 20}


class RosetteImages(Dataset):
    def __init__(self, root, split, size, train):
        self.root, self.size, self.train = Path(root), size, train
        with open(self.root / f"{split}.csv", newline="") as fh:
            self.rows = [(r["image"], float(r["leaves"])) for r in csv.DictReader(fh)]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        name, count = self.rows[i]
        image = Image.open(self.root / "images" / name).convert("RGB").resize((self.size, self.size))
        x = torch.from_numpy(np.asarray(image, dtype=np.float32) / 255.0).permute(2, 0, 1)
        if self.train:
            if torch.rand(()) < 0.5:
                x = x.flip(2)
            x = torch.rot90(x, int(torch.randint(0, 4, ())), dims=(1, 2))
        x = (x - torch.tensor([0.45, 0.5, 0.35])[:, None, None]) / 0.25
        return x, torch.tensor(count)


class CountNet(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        chans = [3, width, 2 * width, 4 * width, 8 * width]
        self.stages = nn.Sequential(*[
            nn.Sequential(nn.Conv2d(a, b, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU())
            for a, b in zip(chans[:-1], chans[1:])
        ])
        self.density = nn.Conv2d(chans[-1], 1, 1)

    def forward(self, x):
        return F.softplus(self.density(self.stages(x))).sum(dim=(1, 2, 3))


class GradientFlowMonitor:
    def __init__(self, writer, every):
        self.writer, self.every = writer, every
        self.step, self.handles, self.norms = 0, [], {}

    def on_fit_start(self, model):
        for name, module in model.named_modules():
            if isinstance(module, (nn.Conv2d, nn.Linear)):
                self.handles.append(module.register_full_backward_hook(self._hook(name)))

    def _hook(self, name):
        def record(module, grad_input, grad_output):
            if self.step % self.every == 0:
                self.norms[name] = grad_output[0].norm().item()
        return record

    def on_batch_end(self, loss):
        if self.step % self.every == 0:
            for name, value in self.norms.items():
                self.writer.add_scalar(f"grad_out/{name}", value, self.step)
            self.writer.add_scalar("train/loss", loss, self.step)
        self.step += 1

    def on_fit_end(self):
        for h in self.handles:
            h.remove()


class Trainer:
    def __init__(self, model, callbacks, lr, epochs):
        self.model, self.callbacks, self.epochs = model, callbacks, epochs
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=epochs)

    def fit(self, train_loader, val_loader):
        for cb in self.callbacks:
            cb.on_fit_start(self.model)
        for epoch in range(self.epochs):
            self.model.train()
            for x, y in train_loader:
                loss = F.smooth_l1_loss(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                for cb in self.callbacks:
                    cb.on_batch_end(loss.item())
            self.scheduler.step()
            print(f"epoch {epoch}: val |DiC| {self.validate(val_loader):.3f}")
        for cb in self.callbacks:
            cb.on_fit_end()

    @torch.no_grad()
    def validate(self, loader):
        self.model.eval()
        errors = [(self.model(x).round() - y).abs() for x, y in loader]
        return torch.cat(errors).mean().item()


def main(opts=OPTIONS):
    torch.manual_seed(0)
    train_set = RosetteImages(opts["root"], "train", opts["size"], train=True)
    val_set = RosetteImages(opts["root"], "val", opts["size"], train=False)
    train_loader = DataLoader(train_set, batch_size=opts["batch"], shuffle=True, num_workers=4, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=opts["batch"], num_workers=4)
    writer = SummaryWriter(opts["log_dir"])
    model = CountNet()
    Trainer(model, [GradientFlowMonitor(writer, opts["hook_every"])], opts["lr"], opts["epochs"]).fit(
        train_loader, val_loader)
    writer.close()
    torch.save(model.state_dict(), Path(opts["log_dir"], "countnet.pt"))


if __name__ == "__main__":
    main()
