"""Customer model: a shared encoder already serves a churn head; add an upsell head without touching it."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest

N_FEATURES = 12
W = torch.randn(N_FEATURES, 3, generator=torch.Generator().manual_seed(21))


def customers(n, g):
    x = torch.randn(n, N_FEATURES, generator=g)
    z = x @ W
    churn = (z[:, 0] + 0.5 * z[:, 1] ** 2 > 1.0).long()
    upsell = (z[:, 2] - z[:, 1] > 0).long()
    return x, churn, upsell


class Encoder(nn.Module):
    def __init__(self, hidden=48):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(N_FEATURES, hidden), nn.ReLU(), nn.Linear(hidden, 24), nn.ReLU())

    def forward(self, x):
        return self.layers(x)


class MultiHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.churn_head = nn.Linear(24, 2)
        self.upsell_head = nn.Linear(24, 2)

    def forward(self, x):
        h = self.encoder(x)
        return self.churn_head(h), self.upsell_head(h)


def accuracy(logits, y):
    return (logits.argmax(1) == y).float().mean().item()


def main():
    g = torch.Generator().manual_seed(1)
    x, churn, upsell = customers(2000, g)
    x_val, churn_val, upsell_val = customers(600, g)
    model = MultiHead()

    # phase 1: encoder + churn head (already in production)
    opt = torch.optim.Adam(list(model.encoder.parameters()) + list(model.churn_head.parameters()), lr=3e-3)
    loader = DataLoader(TensorDataset(x, churn, upsell), batch_size=64, shuffle=True)
    for epoch in range(4):
        for xb, cb, _ in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb)[0], cb)
            loss.backward()
            opt.step()
        print(f"[churn] epoch {epoch}  loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        print(f"churn val acc: {accuracy(model(x_val)[0], churn_val):.3f}")

    # phase 2: new upsell head on the frozen encoder, from a small labelled sample
    for param in model.encoder.parameters():
        param.requires_grad = False
    snapshot = [p.detach().clone() for p in model.encoder.parameters()]
    trainable = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith("churn_head")]
    opt = torch.optim.SGD(trainable, lr=0.05, momentum=0.9)
    small = DataLoader(TensorDataset(x[:300], churn[:300], upsell[:300]), batch_size=16, shuffle=True)
    model.train()
    for epoch in range(6):
        for xb, _, ub in small:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb)[1], ub)
            loss.backward()
            opt.step()
        print(f"[upsell] epoch {epoch}  loss {loss.item():.4f}")

    model.eval()
    with torch.no_grad():
        churn_logits, upsell_logits = model(x_val)
    drift = max((p - s).abs().max().item() for p, s in zip(model.encoder.parameters(), snapshot))
    print(f"upsell val acc: {accuracy(upsell_logits, upsell_val):.3f}")
    print(f"encoder max change in phase 2: {drift:.4f}")
    print(f"churn val acc after phase 2: {accuracy(churn_logits, churn_val):.3f}")


if __name__ == "__main__":
    main()
