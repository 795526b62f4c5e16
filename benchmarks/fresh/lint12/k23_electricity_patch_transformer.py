"""Channel-independent patch Transformer for the UCI electricity load data (321 clients, hourly).

Look-back 336 h cut into 16-h patches, horizon 96 h. Attention carries a learned relative
position bias that is passed to scaled_dot_product_attention as an additive mask. Mixed
precision (fp16 autocast + GradScaler) on the GPU.
"""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CFG = {
    "csv": "data/electricity/electricity.csv",
    "lookback": 336, "horizon": 96, "patch": 16, "stride": 8,
    "d_model": 128, "heads": 8, "layers": 3, "dropout": 0.2,
    "batch_size": 32, "epochs": 30, "lr": 1e-4,
    "split": (0.7, 0.1, 0.2),
}


class LoadWindows(Dataset):
    def __init__(self, values, lookback, horizon):
        self.v, self.L, self.H = values, lookback, horizon

    def __len__(self):
        return len(self.v) - self.L - self.H + 1

    def __getitem__(self, t):
        x = self.v[t:t + self.L]
        y = self.v[t + self.L:t + self.L + self.H]
        return torch.from_numpy(x.T.copy()), torch.from_numpy(y.T.copy())


class BiasedSelfAttention(nn.Module):
    def __init__(self, d, heads, n_patches, dropout):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.rel = nn.Parameter(torch.zeros(heads, 2 * n_patches - 1))
        idx = torch.arange(n_patches)
        self.register_buffer("rel_index", idx[None, :] - idx[:, None] + n_patches - 1, persistent=False)

    def attention_bias(self):
        bias = self.rel[:, self.rel_index]
        if torch.is_autocast_enabled():
            bias = bias.to(torch.get_autocast_gpu_dtype())
        return bias

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=self.attention_bias(),
                                             dropout_p=self.dropout if self.training else 0.0)
        return self.proj(out.transpose(1, 2).reshape(b, n, d))


class Block(nn.Module):
    def __init__(self, d, heads, n_patches, dropout):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = BiasedSelfAttention(d, heads, n_patches, dropout)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Dropout(dropout), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PatchForecaster(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.patch, self.stride = c["patch"], c["stride"]
        n = (c["lookback"] - c["patch"]) // c["stride"] + 1
        self.embed = nn.Linear(c["patch"], c["d_model"])
        self.pos = nn.Parameter(torch.randn(n, c["d_model"]) * 0.02)
        self.blocks = nn.ModuleList(Block(c["d_model"], c["heads"], n, c["dropout"]) for _ in range(c["layers"]))
        self.head = nn.Linear(n * c["d_model"], c["horizon"])

    def forward(self, x):
        b, ch, t = x.shape
        mu, sd = x.mean(-1, keepdim=True), x.std(-1, keepdim=True) + 1e-5
        z = ((x - mu) / sd).reshape(b * ch, t).unfold(-1, self.patch, self.stride)
        h = self.embed(z) + self.pos
        for blk in self.blocks:
            h = blk(h)
        y = self.head(h.flatten(1)).view(b, ch, -1)
        return y * sd + mu


def run_epoch(model, loader, device, optimizer=None, scaler=None):
    model.train(optimizer is not None)
    sse, n = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        with torch.set_grad_enabled(optimizer is not None), \
                torch.autocast("cuda", dtype=torch.float16, enabled=device.type == "cuda"):
            loss = F.mse_loss(model(x).float(), y)
        if optimizer is not None:
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
        sse += loss.item() * y.numel()
        n += y.numel()
    return sse / n


def main(c=CFG):
    torch.manual_seed(2021)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    values = pd.read_csv(c["csv"], index_col=0).to_numpy(np.float32)
    n_train, n_valid = int(len(values) * c["split"][0]), int(len(values) * c["split"][1])
    mean, std = values[:n_train].mean(0), values[:n_train].std(0) + 1e-6
    values = (values - mean) / std
    parts = [values[:n_train], values[n_train - c["lookback"]:n_train + n_valid],
             values[n_train + n_valid - c["lookback"]:]]
    train_dl, valid_dl, test_dl = (DataLoader(LoadWindows(p, c["lookback"], c["horizon"]), batch_size=c["batch_size"],
                                              shuffle=i == 0, drop_last=i == 0, num_workers=4)
                                   for i, p in enumerate(parts))

    model = PatchForecaster(c).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=c["lr"])
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=c["epochs"])
    scaler = torch.amp.GradScaler("cuda", enabled=device.type == "cuda")
    best = float("inf")
    for epoch in range(c["epochs"]):
        train_mse = run_epoch(model, train_dl, device, optimizer, scaler)
        valid_mse = run_epoch(model, valid_dl, device)
        scheduler.step()
        print(f"epoch {epoch:2d} train MSE {train_mse:.4f} valid MSE {valid_mse:.4f}")
        if valid_mse < best:
            best = valid_mse
            torch.save(model.state_dict(), "electricity_patchtf.pt")
    model.load_state_dict(torch.load("electricity_patchtf.pt", weights_only=True))
    print(f"test MSE (normalised) {run_epoch(model, test_dl, device):.4f}")


if __name__ == "__main__":
    main()
