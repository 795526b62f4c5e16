"""Two-tower retrieval model for a product catalogue, trained with in-batch negatives."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Interactions(Dataset):
    """(user, item, history) triples; history is a variable-length list of earlier items."""

    def __init__(self, path):
        blob = np.load(path, allow_pickle=False)
        self.users, self.items = blob["users"], blob["items"]
        self.hist_flat, self.hist_offsets = blob["hist_flat"], blob["hist_offsets"]

    def __len__(self):
        return len(self.users)

    def __getitem__(self, i):
        start, end = self.hist_offsets[i], self.hist_offsets[i + 1]
        return int(self.users[i]), int(self.items[i]), torch.as_tensor(self.hist_flat[start:end], dtype=torch.long)


def collate(batch):
    users, items, hists = zip(*batch)
    offsets = torch.tensor([0] + [len(h) for h in hists[:-1]]).cumsum(0)
    return torch.tensor(users), torch.tensor(items), torch.cat(hists), offsets


class Tower(nn.Module):
    def __init__(self, in_dim, out_dim=64):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(in_dim, 256), nn.ReLU(), nn.Linear(256, out_dim))

    def forward(self, x):
        z = self.mlp(x)
        return z / z.norm(p=2)


class TwoTower(nn.Module):
    def __init__(self, n_users, n_items, dim=64):
        super().__init__()
        self.user_emb = nn.Embedding(n_users, dim)
        self.item_emb = nn.Embedding(n_items, dim)
        self.history = nn.EmbeddingBag(n_items, dim, mode="mean")
        self.user_tower = Tower(2 * dim)
        self.item_tower = Tower(dim)

    def encode_users(self, users, hist, offsets):
        return self.user_tower(torch.cat([self.user_emb(users), self.history(hist, offsets)], dim=1))

    def encode_items(self, items):
        return self.item_tower(self.item_emb(items))


def in_batch_loss(user_vecs, item_vecs, temperature=0.05):
    logits = user_vecs @ item_vecs.T / temperature
    targets = torch.arange(logits.size(0), device=logits.device)
    return F.cross_entropy(logits, targets)


@torch.no_grad()
def recall_at_k(model, loader, n_items, device, k=50):
    model.eval()
    catalogue = model.encode_items(torch.arange(n_items, device=device))
    hits = total = 0
    for users, items, hist, offsets in loader:
        u = model.encode_users(users.to(device), hist.to(device), offsets.to(device))
        top = (u @ catalogue.T).topk(k, dim=1).indices
        hits += (top == items.to(device).unsqueeze(1)).any(dim=1).sum().item()
        total += users.numel()
    return hits / total


def train(n_users, n_items, epochs=5, device="cuda"):
    train_loader = DataLoader(Interactions("data/train.npz"), batch_size=2048, shuffle=True,
                              collate_fn=collate, num_workers=4, drop_last=True)
    val_loader = DataLoader(Interactions("data/val.npz"), batch_size=4096, collate_fn=collate)
    model = TwoTower(n_users, n_items).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        model.train()
        total, seen = 0.0, 0
        for users, items, hist, offsets in train_loader:
            users, items, hist, offsets = users.to(device), items.to(device), hist.to(device), offsets.to(device)
            loss = in_batch_loss(model.encode_users(users, hist, offsets), model.encode_items(items))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * users.size(0)
            seen += users.size(0)
        print(f"epoch {epoch}: loss {total / seen:.4f} recall@50 {recall_at_k(model, val_loader, n_items, device):.4f}")
    torch.save(model.state_dict(), "two_tower.pt")
    return model


if __name__ == "__main__":
    train(n_users=1_200_000, n_items=350_000)
