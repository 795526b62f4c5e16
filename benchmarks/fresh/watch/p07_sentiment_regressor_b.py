"""Sentiment regressor: train everything for two epochs, then freeze the word embeddings."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest

VOCAB, LENGTH = 300, 10
FREEZE_AT, EPOCHS = 2, 6


class Reviews(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        polarity = torch.randn(VOCAB, generator=torch.Generator().manual_seed(3))
        self.tokens = torch.randint(0, VOCAB, (n, LENGTH), generator=g)
        self.score = torch.tanh(polarity[self.tokens].mean(1, keepdim=True) * 2)

    def __len__(self):
        return len(self.score)

    def __getitem__(self, i):
        return self.tokens[i], self.score[i]


class Regressor(nn.Module):
    def __init__(self, dim=24):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, tokens):
        return self.mlp(self.embedding(tokens).mean(dim=1))


def main():
    loader = DataLoader(Reviews(1000, seed=1), batch_size=50, shuffle=True)
    model = Regressor()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05)

    frozen_copy = None
    for epoch in range(EPOCHS):
        if epoch == FREEZE_AT:
            model.embedding.weight.requires_grad_(False)
            frozen_copy = model.embedding.weight.detach().clone()
        model.train()
        total = 0.0
        for tokens, score in loader:
            optimizer.zero_grad(set_to_none=False)
            loss = F.mse_loss(model(tokens), score)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(score)
        msg = f"epoch {epoch}  mse {total / len(loader.dataset):.4f}"
        if frozen_copy is not None:
            drift = (model.embedding.weight - frozen_copy).abs().max().item()
            msg += f"  embedding drift since freeze {drift:.5f}"
        print(msg)


if __name__ == "__main__":
    main()
