import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

PHASES = ("loading", "midstance", "terminal_stance", "swing")


class ImuWindows(Dataset):
    def __init__(self, signals, phases, window=64, stride=16):
        self.signals = torch.as_tensor(signals, dtype=torch.float32)
        self.phases = torch.as_tensor(phases, dtype=torch.long)
        self.starts = list(range(0, len(self.signals) - window + 1, stride))
        self.window = window

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, i):
        s = self.starts[i]
        return {"imu": self.signals[s : s + self.window], "phase": self.phases[s : s + self.window]}


class PhaseTagger(nn.Module):
    def __init__(self, n_channels, hidden=64, n_phases=len(PHASES)):
        super().__init__()
        self.rnn = nn.GRU(n_channels, hidden, num_layers=2, batch_first=True, bidirectional=True, dropout=0.1)
        self.out = nn.Linear(2 * hidden, n_phases)

    def forward(self, imu):
        seq, _ = self.rnn(imu)
        return self.out(seq)


class GaitTrainer:
    def __init__(self, model, lr=1e-3, device=None):
        self.device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.history = []

    def _move(self, batch):
        return {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}

    def _loss(self, logits, phase):
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), phase.reshape(-1))

    def fit(self, train_loader, val_loader, epochs):
        for epoch in range(epochs):
            self.model.train()
            agree, total = 0, 0
            for batch in train_loader:
                batch = self._move(batch)
                logits = self.model(batch["imu"])
                loss = self._loss(logits, batch["phase"])
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                self.optimizer.step()
                pred = logits.detach().argmax(dim=-1).cpu().numpy()
                agree += int((pred == batch["phase"].cpu().numpy()).sum())
                total += pred.size
            val = self.evaluate(val_loader)
            self.history.append({"epoch": epoch, "train_acc": agree / total, **val})

    @torch.no_grad()
    def evaluate(self, loader):
        was_training = self.model.training
        self.model.eval()
        loss_sum, agree, n = 0.0, 0, 0
        for batch in loader:
            batch = self._move(batch)
            logits = self.model(batch["imu"])
            loss_sum += self._loss(logits, batch["phase"]).item() * batch["phase"].numel()
            agree += (logits.argmax(dim=-1) == batch["phase"]).sum().item()
            n += batch["phase"].numel()
        self.model.train(was_training)
        return {"val_loss": loss_sum / n, "val_acc": agree / n}

    @torch.no_grad()
    def predict(self, signals):
        self.model.eval()
        imu = torch.as_tensor(signals, dtype=torch.float32, device=self.device).unsqueeze(0)
        probs = F.softmax(self.model(imu), dim=-1)[0]
        return probs.cpu().numpy()


def make_loaders(signals, phases, split=0.8, batch_size=32):
    cut = int(split * len(signals))
    train = ImuWindows(signals[:cut], phases[:cut])
    val = ImuWindows(signals[cut:], phases[cut:], stride=64)
    return DataLoader(train, batch_size=batch_size, shuffle=True), DataLoader(val, batch_size=256)


def standardize(signals, reference):
    mean, std = reference.mean(axis=0), reference.std(axis=0) + 1e-6
    return ((signals - mean) / std).astype(np.float32)
