# %% [markdown]
# # Traffic speed forecasting on a road sensor graph (METR-LA style)
# 207 loop detectors, 5-minute speeds; predict the next 12 steps (1 hour) from the last 12.
# A graph convolution mixes neighbouring sensors, a GRU runs over time per sensor.

# %%
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
np.random.seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
IN_STEPS, OUT_STEPS, EPOCHS = 12, 12, 60

# %%
speed = np.load("data/metr_la/speed.npy").astype(np.float32)  # (T, N), 0 = missing reading
adj = np.load("data/metr_la/adj_mx.npy").astype(np.float32)  # (N, N) Gaussian-kernel weights
T, N = speed.shape
n_train, n_val = int(0.7 * T), int(0.1 * T)
observed = speed[:n_train][speed[:n_train] > 0]
mu, sigma = float(observed.mean()), float(observed.std())


def windows(series, start, stop):
    idx = np.arange(start, stop - IN_STEPS - OUT_STEPS + 1)
    x = np.stack([series[i:i + IN_STEPS] for i in idx])
    y = np.stack([series[i + IN_STEPS:i + IN_STEPS + OUT_STEPS] for i in idx])
    return torch.from_numpy((x - mu) / sigma), torch.from_numpy(y)


train_dl = DataLoader(TensorDataset(*windows(speed, 0, n_train)), batch_size=64, shuffle=True, drop_last=True)
val_dl = DataLoader(TensorDataset(*windows(speed, n_train, n_train + n_val)), batch_size=128)
test_dl = DataLoader(TensorDataset(*windows(speed, n_train + n_val, T)), batch_size=128)


# %%
def normalized_adjacency(a):
    a = a + np.eye(len(a), dtype=np.float32)
    d = 1.0 / np.sqrt(a.sum(axis=1))
    return torch.from_numpy(d[:, None] * a * d[None, :])


class GraphGRU(nn.Module):
    def __init__(self, adj_norm, hidden=64, layers=2, dropout=0.3):
        super().__init__()
        self.register_buffer("adj", adj_norm)
        self.gconvs = nn.ModuleList([nn.Linear(1 if k == 0 else hidden, hidden) for k in range(layers)])
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, OUT_STEPS)
        self.dropout = dropout

    def forward(self, x):  # x: (B, IN_STEPS, N)
        h = x.unsqueeze(-1)
        for gconv in self.gconvs:
            h = F.relu(torch.einsum("nm,btmf->btnf", self.adj, gconv(h)))
            h = F.dropout(h, p=self.dropout, training=self.training)
        b, t, n, f = h.shape
        _, last = self.gru(h.permute(0, 2, 1, 3).reshape(b * n, t, f))
        return self.out(last[-1]).view(b, n, OUT_STEPS).permute(0, 2, 1)  # (B, OUT_STEPS, N)


def masked_mae(pred_norm, target):
    mask = (target > 0).float()
    err = (pred_norm * sigma + mu - target).abs() * mask
    return err.sum() / mask.sum().clamp_min(1.0)


model = GraphGRU(normalized_adjacency(adj)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=20, gamma=0.3)


# %%
@torch.no_grad()
def evaluate(loader):
    model.eval()
    err, count = 0.0, 0.0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        mask = (y > 0).float()
        err += ((model(x) * sigma + mu - y).abs() * mask).sum().item()
        count += mask.sum().item()
    return err / count


best_mae, best_state = float("inf"), None
for epoch in range(EPOCHS):
    model.train()
    for x, y in train_dl:
        x, y = x.to(device), y.to(device)
        opt.zero_grad()
        loss = masked_mae(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
    sched.step()
    val_mae = evaluate(val_dl)
    if val_mae < best_mae:
        best_mae, best_state = val_mae, copy.deepcopy(model.state_dict())
    if epoch % 5 == 0:
        print(f"epoch {epoch:2d}  val MAE {val_mae:.3f} mph  lr {sched.get_last_lr()[0]:.1e}")

# %%
model.load_state_dict(best_state)
print(f"best val MAE {best_mae:.3f}  test MAE {evaluate(test_dl):.3f} mph")
torch.save(model.state_dict(), "graph_gru_metr_la.pt")
