"""Two-tower retrieval model for a podcast app: a user tower (user id + recent listens) and an
episode tower (episode id + show id + category), trained with in-batch negatives on
(user, episode) play events longer than 5 minutes."""

import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

DIM, HISTORY, TEMPERATURE = 64, 20, 0.05


class PlayEvents(Dataset):
    def __init__(self, frame):
        self.user = torch.tensor(frame["user_idx"].to_numpy())
        self.history = torch.tensor(np_history(frame["history"]))
        self.episode = torch.tensor(frame["episode_idx"].to_numpy())
        self.show = torch.tensor(frame["show_idx"].to_numpy())
        self.category = torch.tensor(frame["category_idx"].to_numpy())

    def __len__(self):
        return len(self.user)

    def __getitem__(self, i):
        return self.user[i], self.history[i], self.episode[i], self.show[i], self.category[i]


def np_history(column):
    """Space-separated episode indices (most recent first), padded with 0 to HISTORY entries."""
    rows = [[int(t) for t in s.split()[:HISTORY]] for s in column]
    return [r + [0] * (HISTORY - len(r)) for r in rows]


class UserTower(nn.Module):
    def __init__(self, n_users, n_episodes):
        super().__init__()
        self.user = nn.Embedding(n_users, DIM)
        self.history = nn.EmbeddingBag(n_episodes, DIM, mode="mean", padding_idx=0)
        self.mlp = nn.Sequential(nn.Linear(2 * DIM, 128), nn.ReLU(), nn.Linear(128, DIM))

    def forward(self, user, history):
        return F.normalize(self.mlp(torch.cat([self.user(user), self.history(history)], dim=1)), dim=1)


class EpisodeTower(nn.Module):
    def __init__(self, n_episodes, n_shows, n_categories):
        super().__init__()
        self.episode = nn.Embedding(n_episodes, DIM)
        self.show = nn.Embedding(n_shows, DIM)
        self.category = nn.Embedding(n_categories, 16)
        self.mlp = nn.Sequential(nn.Linear(2 * DIM + 16, 128), nn.ReLU(), nn.Linear(128, DIM))

    def forward(self, episode, show, category):
        feats = torch.cat([self.episode(episode), self.show(show), self.category(category)], dim=1)
        return F.normalize(self.mlp(feats), dim=1)


@torch.no_grad()
def recall_at_k(users, episodes, loader, device, k=50):
    users.eval()
    episodes.eval()
    hits = total = 0
    for u, h, e, s, c in loader:
        q = users(u.to(device), h.to(device))
        cands = episodes(e.to(device), s.to(device), c.to(device))
        topk = (q @ cands.T).topk(min(k, cands.size(0)), dim=1).indices
        hits += (topk == torch.arange(q.size(0), device=device)[:, None]).any(dim=1).sum().item()
        total += q.size(0)
    return hits / total


def main():
    train = pd.read_parquet("data/plays_train.parquet")
    valid = pd.read_parquet("data/plays_valid.parquet")
    sizes = pd.read_json("data/vocab_sizes.json", typ="series")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    users = UserTower(sizes["users"], sizes["episodes"]).to(device)
    episodes = EpisodeTower(sizes["episodes"], sizes["shows"], sizes["categories"]).to(device)
    optimizer = torch.optim.Adam(list(users.parameters()) + list(episodes.parameters()), lr=1e-3)
    train_dl = DataLoader(PlayEvents(train), batch_size=2048, shuffle=True, drop_last=True, num_workers=4)
    valid_dl = DataLoader(PlayEvents(valid), batch_size=1024, num_workers=4)

    for epoch in range(10):
        users.train()
        episodes.train()
        running = 0.0
        for step, (u, h, e, s, c) in enumerate(train_dl, start=1):
            q = users(u.to(device), h.to(device))
            d = episodes(e.to(device), s.to(device), c.to(device))
            logits = q @ d.T / TEMPERATURE               # (B, B): the diagonal holds the positives
            loss = F.cross_entropy(logits, torch.arange(q.size(0), device=device))
            loss.backward()
            optimizer.step()
            running += loss.item()
            if step % 200 == 0:
                print(f"epoch {epoch} step {step}: loss {running / 200:.4f}")
                running = 0.0
        print(f"epoch {epoch}: recall@50 (in-batch) {recall_at_k(users, episodes, valid_dl, device):.4f}")

    torch.save({"users": users.state_dict(), "episodes": episodes.state_dict()}, "two_tower.pt")


if __name__ == "__main__":
    main()
