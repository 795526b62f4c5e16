import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class GanConfig:
    windows: str = "data/pump_sensors/windows.npy"
    out_dir: str = "runs/pump_wgan"
    latent: int = 64
    channels: int = 4
    length: int = 128
    batch_size: int = 64
    iterations: int = 20000
    critic_steps: int = 5
    lr: float = 5e-5
    clip_value: float = 0.01
    log_every: int = 200
    seed: int = 3


class Generator(nn.Module):
    def __init__(self, latent, channels):
        super().__init__()
        self.project = nn.Linear(latent, 256 * 8, bias=False)
        self.net = nn.Sequential(
            nn.BatchNorm1d(256), nn.ReLU(),
            nn.ConvTranspose1d(256, 128, 4, stride=2, padding=1, bias=False), nn.BatchNorm1d(128), nn.ReLU(),
            nn.ConvTranspose1d(128, 64, 4, stride=2, padding=1, bias=False), nn.BatchNorm1d(64), nn.ReLU(),
            nn.ConvTranspose1d(64, 32, 4, stride=2, padding=1, bias=False), nn.BatchNorm1d(32), nn.ReLU(),
            nn.ConvTranspose1d(32, channels, 4, stride=2, padding=1), nn.Tanh(),
        )

    def forward(self, z):
        return self.net(self.project(z).view(z.size(0), 256, 8))


class Critic(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(channels, 32, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
            nn.Conv1d(32, 64, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
            nn.Conv1d(64, 128, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
            nn.Conv1d(128, 256, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
        )
        self.score = nn.Linear(256 * 8, 1)

    def forward(self, x):
        return self.score(self.net(x).flatten(1))


class Callback:
    def on_critic_step_end(self, trainer):
        pass

    def on_iteration_end(self, trainer, iteration, logs):
        pass


class WeightClipper(Callback):
    def __init__(self, limit):
        self.limit = limit

    def on_critic_step_end(self, trainer):
        for param in trainer.critic.parameters():
            param.clamp_(-self.limit, self.limit)


class HistoryLogger(Callback):
    def __init__(self, every):
        self.every = every
        self.rows = []

    def on_iteration_end(self, trainer, iteration, logs):
        self.rows.append((iteration, logs["wasserstein"], logs["g_loss"]))
        if iteration % self.every == 0:
            print(f"it {iteration:06d} W {logs['wasserstein']:.4f} G {logs['g_loss']:.4f}")


class WganTrainer:
    def __init__(self, cfg, device, callbacks):
        self.cfg, self.device, self.callbacks = cfg, device, callbacks
        self.generator = Generator(cfg.latent, cfg.channels).to(device)
        self.critic = Critic(cfg.channels).to(device)
        self.opt_g = torch.optim.RMSprop(self.generator.parameters(), lr=cfg.lr)
        self.opt_c = torch.optim.RMSprop(self.critic.parameters(), lr=cfg.lr)

    def noise(self, n):
        return torch.randn(n, self.cfg.latent, device=self.device)

    def critic_step(self, real):
        with torch.no_grad():
            fake = self.generator(self.noise(real.size(0)))
        loss = self.critic(fake).mean() - self.critic(real).mean()
        self.opt_c.zero_grad(set_to_none=True)
        loss.backward()
        self.opt_c.step()
        for cb in self.callbacks:
            cb.on_critic_step_end(self)
        return -loss.item()

    def generator_step(self, n):
        loss = -self.critic(self.generator(self.noise(n))).mean()
        self.opt_g.zero_grad(set_to_none=True)
        loss.backward()
        self.opt_g.step()
        return loss.item()

    def fit(self, loader):
        stream = iter(loader)
        for iteration in range(1, self.cfg.iterations + 1):
            for _ in range(self.cfg.critic_steps):
                try:
                    (real,) = next(stream)
                except StopIteration:
                    stream = iter(loader)
                    (real,) = next(stream)
                wasserstein = self.critic_step(real.to(self.device))
            g_loss = self.generator_step(self.cfg.batch_size)
            for cb in self.callbacks:
                cb.on_iteration_end(self, iteration, {"wasserstein": wasserstein, "g_loss": g_loss})


def load_windows(path):
    data = np.load(path).astype(np.float32)
    lo = data.min(axis=(0, 2), keepdims=True)
    hi = data.max(axis=(0, 2), keepdims=True)
    scaled = 2.0 * (data - lo) / (hi - lo + 1e-8) - 1.0
    return torch.from_numpy(scaled), lo.ravel().tolist(), hi.ravel().tolist()


def main(cfg=GanConfig()):
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    windows, lo, hi = load_windows(cfg.windows)
    loader = DataLoader(TensorDataset(windows), batch_size=cfg.batch_size, shuffle=True, drop_last=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    logger = HistoryLogger(cfg.log_every)
    trainer = WganTrainer(cfg, device, [WeightClipper(cfg.clip_value), logger])
    trainer.fit(loader)
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.save({"generator": trainer.generator.state_dict(), "critic": trainer.critic.state_dict(),
                "lo": lo, "hi": hi, "latent": cfg.latent}, out / "wgan.pt")
    np.savetxt(out / "history.csv", np.array(logger.rows), delimiter=",", header="iteration,wasserstein,g_loss")


if __name__ == "__main__":
    main()
