# %% [markdown]
# # Node classification on a citation graph (Cora, public Planetoid split)
# Three-layer GCN with PairNorm between layers against over-smoothing; node embeddings are
# exported afterwards for the nearest-neighbour paper search.

# %%
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
np.random.seed(0)
DATA = "data/cora_planetoid.npz"
HIDDEN, DROPOUT, LR, WEIGHT_DECAY, EPOCHS, PATIENCE = 64, 0.5, 0.01, 5e-4, 400, 50

# %%
raw = np.load(DATA)
features = torch.from_numpy(raw["features"].astype(np.float32))
features = features / features.sum(dim=1, keepdim=True).clamp(min=1.0)
labels = torch.from_numpy(raw["labels"].astype(np.int64))
edges = torch.from_numpy(raw["edges"].astype(np.int64))
masks = {k: torch.from_numpy(raw[f"{k}_mask"].astype(bool)) for k in ("train", "val", "test")}
n_nodes, n_classes = features.shape[0], int(labels.max()) + 1
print(n_nodes, "nodes,", edges.shape[1], "edges,", {k: int(m.sum()) for k, m in masks.items()})


# %%
def normalized_adjacency(edge_index, n):
    loops = torch.arange(n).repeat(2, 1)
    both = torch.cat([edge_index, edge_index.flip(0), loops], dim=1).unique(dim=1)
    values = torch.ones(both.shape[1])
    deg = torch.zeros(n).scatter_add_(0, both[0], values)
    norm = deg[both[0]].rsqrt() * deg[both[1]].rsqrt()
    return torch.sparse_coo_tensor(both, norm, (n, n), check_invariants=True).coalesce()


@torch.no_grad()
def pair_norm(h, scale=1.0, eps=1e-6):
    """Centre the node representations and rescale them to a fixed mean row norm."""
    h = h - h.mean(dim=0, keepdim=True)
    return scale * h / (h.pow(2).sum(dim=1).mean() + eps).sqrt()


adj = normalized_adjacency(edges, n_nodes)


# %%
class GCN(nn.Module):
    def __init__(self, d_in, d_hidden, d_out, layers=3, dropout=DROPOUT, scale=1.0):
        super().__init__()
        dims = [d_in] + [d_hidden] * (layers - 1) + [d_out]
        self.lins = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.dropout, self.scale = dropout, scale

    def embed(self, x, a):
        h = x
        for lin in self.lins[:-1]:
            h = F.dropout(h, self.dropout, self.training)
            h = F.relu(torch.sparse.mm(a, lin(h)))
            h = pair_norm(h, self.scale)
        return h

    def forward(self, x, a):
        h = F.dropout(self.embed(x, a), self.dropout, self.training)
        return torch.sparse.mm(a, self.lins[-1](h))


model = GCN(features.shape[1], HIDDEN, n_classes)
optimizer = torch.optim.Adam([
    {"params": model.lins[0].parameters(), "weight_decay": WEIGHT_DECAY},
    {"params": [p for lin in model.lins[1:] for p in lin.parameters()], "weight_decay": 0.0},
], lr=LR)


# %%
def evaluate(split):
    model.eval()
    with torch.no_grad():
        logits = model(features, adj)
        loss = F.cross_entropy(logits[masks[split]], labels[masks[split]]).item()
        acc = (logits[masks[split]].argmax(1) == labels[masks[split]]).float().mean().item()
    return loss, acc


best_val, best_state, waited = float("inf"), None, 0
for epoch in range(EPOCHS):
    model.train()
    optimizer.zero_grad()
    out = model(features, adj)
    loss = F.cross_entropy(out[masks["train"]], labels[masks["train"]])
    loss.backward()
    optimizer.step()
    val_loss, val_acc = evaluate("val")
    if val_loss < best_val:
        best_val, waited = val_loss, 0
        best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    else:
        waited += 1
        if waited > PATIENCE:
            break
    if epoch % 20 == 0:
        print(f"epoch {epoch:03d} train loss {loss.item():.4f} val loss {val_loss:.4f} val acc {val_acc:.4f}")

# %%
model.load_state_dict(best_state)
test_loss, test_acc = evaluate("test")
print(f"test accuracy {test_acc:.4f} (stopped at epoch {epoch})")

# %%
model.eval()
with torch.no_grad():
    emb = F.normalize(model.embed(features, adj), dim=1)
np.save("cora_node_embeddings.npy", emb.numpy())
query = 0
nearest = (emb @ emb[query]).topk(6).indices[1:].tolist()
print(f"papers closest to {query}: {nearest}")
