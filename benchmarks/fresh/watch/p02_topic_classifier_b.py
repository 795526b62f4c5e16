"""Topic classifier over bags of token ids, with a normalised sentence embedding."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest

VOCAB, SEQ_LEN, N_TOPICS = 200, 12, 3


def make_corpus(n, seed):
    """Each topic owns 20 keyword ids; a document mixes 4 keywords of its topic with filler ids."""
    g = torch.Generator().manual_seed(seed)
    topics = torch.randint(0, N_TOPICS, (n,), generator=g)
    filler = torch.randint(60, VOCAB, (n, SEQ_LEN), generator=g)
    keywords = topics.unsqueeze(1) * 20 + torch.randint(0, 20, (n, 4), generator=g)
    docs = torch.cat([keywords, filler[:, 4:]], dim=1)
    perm = torch.argsort(torch.rand(n, SEQ_LEN, generator=g), dim=1)
    return torch.gather(docs, 1, perm), topics


class TopicNet(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.Tanh(), nn.Linear(dim, dim))
        self.scale = 8.0
        self.head = nn.Linear(dim, N_TOPICS)
        self.feature_norm = torch.tensor(0.0)

    def forward(self, tokens):
        h = self.encoder(self.embed(tokens).mean(dim=1))
        with torch.no_grad():
            self.feature_norm = h.norm(dim=1).mean()  # logged by the training loop
            h = F.normalize(h, dim=1) * self.scale
        return self.head(h)


def main():
    x_train, y_train = make_corpus(600, seed=1)
    x_val, y_val = make_corpus(300, seed=2)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=32, shuffle=True)

    model = TopicNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    embed_before = model.embed.weight.detach().clone()

    for epoch in range(6):
        model.train()
        running = 0.0
        for tokens, topic in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(tokens), topic)
            loss.backward()
            optimizer.step()
            running += loss.item() * len(topic)
        model.eval()
        with torch.no_grad():
            val_acc = (model(x_val).argmax(1) == y_val).float().mean().item()
        print(
            f"epoch {epoch}  loss {running / len(x_train):.4f}  val acc {val_acc:.3f}"
            f"  |h| {model.feature_norm.item():.2f}"
        )

    print(f"embedding max change: {(model.embed.weight - embed_before).abs().max().item():.4f}")


if __name__ == "__main__":
    main()
