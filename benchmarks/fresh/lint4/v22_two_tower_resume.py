"""Two-tower retrieval model for the video catalogue, trained with in-batch negatives.

Jobs run on preemptible machines: the script writes a checkpoint every epoch and, when one
exists, continues from it.
"""

import os

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

CKPT = "checkpoints/two_tower/latest.pt"
EPOCHS, BATCH, LR, DIM, TEMP = 20, 4096, 1e-3, 128, 0.05


class Interactions(Dataset):
    def __init__(self, path):
        df = pd.read_parquet(path, columns=["user_idx", "item_idx", "hour", "device"])
        self.user = torch.as_tensor(df["user_idx"].to_numpy(), dtype=torch.long)
        self.item = torch.as_tensor(df["item_idx"].to_numpy(), dtype=torch.long)
        self.ctx = torch.as_tensor(df[["hour", "device"]].to_numpy(), dtype=torch.long)

    def __len__(self):
        return len(self.user)

    def __getitem__(self, i):
        return self.user[i], self.ctx[i], self.item[i]


class Tower(nn.Module):
    def __init__(self, n_ids, n_ctx=(24, 4)):
        super().__init__()
        self.ids = nn.Embedding(n_ids, DIM)
        self.ctx = nn.ModuleList(nn.Embedding(n, 16) for n in n_ctx)
        self.mlp = nn.Sequential(nn.Linear(DIM + 16 * len(n_ctx), 256), nn.ReLU(), nn.Linear(256, DIM))

    def forward(self, ids, ctx=None):
        parts = [self.ids(ids)]
        if ctx is not None:
            parts += [emb(ctx[:, j]) for j, emb in enumerate(self.ctx)]
        else:
            parts += [torch.zeros(ids.shape[0], 16, device=ids.device)] * len(self.ctx)
        return F.normalize(self.mlp(torch.cat(parts, dim=1)), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, n_users, n_items):
        super().__init__()
        self.user_tower, self.item_tower = Tower(n_users), Tower(n_items)

    def forward(self, user, ctx, item):
        return self.user_tower(user, ctx), self.item_tower(item)


def main(n_users=2_400_000, n_items=180_000):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(Interactions("data/watch_events.parquet"), batch_size=BATCH, shuffle=True,
                        num_workers=8, drop_last=True, pin_memory=True)
    model = TwoTower(n_users, n_items).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)

    start_epoch = 0
    if os.path.exists(CKPT):
        ckpt = torch.load(CKPT, map_location=device, weights_only=True)
        model.load_state_dict(ckpt["model"])
        start_epoch = ckpt["epoch"] + 1
        print(f"resuming from epoch {start_epoch}")

    labels = torch.arange(BATCH, device=device)
    for epoch in range(start_epoch, EPOCHS):
        model.train()
        total, steps = 0.0, 0
        for user, ctx, item in loader:
            user, ctx, item = user.to(device), ctx.to(device), item.to(device)
            u, v = model(user, ctx, item)
            logits = u @ v.T / TEMP
            loss = F.cross_entropy(logits, labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.item()
            steps += 1
        print(f"epoch {epoch}: in-batch softmax loss {total / steps:.4f}")
        os.makedirs(os.path.dirname(CKPT), exist_ok=True)
        torch.save({"model": model.state_dict(), "epoch": epoch}, CKPT)

    model.eval()
    with torch.no_grad():
        items = torch.arange(n_items, device=device)
        item_vecs = torch.cat([model.item_tower(chunk) for chunk in items.split(65536)])
    torch.save(item_vecs.cpu(), "checkpoints/two_tower/item_index.pt")


if __name__ == "__main__":
    main()
