"""PTF265 (stack-vs-cat): torch.stack of per-batch tensors where torch.cat was meant."""

PITFALL = {
    "predictions_appended_per_batch": """
import torch
from torch.utils.data import DataLoader
def predict(model: torch.nn.Module, dataset):
    loader = DataLoader(dataset, batch_size=64)
    preds = []
    model.eval()
    with torch.no_grad():
        for x, _ in loader:
            preds.append(model(x).argmax(dim=1))
    return torch.stack(preds)
""",
    "batches_comprehension_for_feature_stats": """
import torch
def feature_stats(loader):
    chunks = [past for past, _ in loader]
    stacked = torch.stack(chunks)
    return stacked.mean(dim=(0, 1)), stacked.std(dim=(0, 1))
""",
    "embeddings_of_a_named_model": """
import torch
from torch import nn
from tqdm import tqdm
encoder = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 16))
def embed_all(train_loader):
    outs = []
    for i, (xb, yb) in enumerate(tqdm(train_loader)):
        z = encoder(xb)
        outs.append(z.detach().cpu())
    return torch.stack(outs).mean(0)
""",
    "labels_collected_per_batch": """
import torch
def gather_labels(val_loader):
    ys = []
    for batch in val_loader:
        ys.append(batch["labels"])
    return torch.stack(ys)
""",
    "row_chunks_averaged": """
import torch
def dataset_mean(x, batch=32):
    parts = [x[b * batch:(b + 1) * batch] for b in range(len(x) // batch)]
    return torch.stack(parts).mean(dim=0)
""",
    "probabilities_inline_comprehension": """
import torch
import torch.nn.functional as F
class Net(torch.nn.Module):
    pass
def scores(test_dl):
    net = Net()
    return torch.stack([F.softmax(net(x), dim=1) for x, y in test_dl])
""",
}

NEAR_MISS = {
    "cat_of_batches": """
import torch
@torch.no_grad()
def predict(model, loader):
    preds = [model(x).argmax(dim=1) for x, _ in loader]
    return torch.cat(preds, dim=0)
""",
    "per_batch_losses": """
import torch
from torch import nn
def evaluate(net: nn.Module, val_loader):
    crit = nn.CrossEntropyLoss()
    losses = []
    with torch.no_grad():
        for x, y in val_loader:
            losses.append(crit(net(x), y))
            losses.append(net(x).mean())
    return torch.stack(losses).mean()
""",
    "ensemble_over_models_on_one_batch": """
import torch
from torch import nn
models = [nn.Linear(8, 3) for _ in range(5)]
def predict(loader):
    out = []
    for x, _ in loader:
        probs = torch.stack([m(x).softmax(dim=1) for m in models]).mean(0)
        out.append(probs)
    return torch.cat(out)
""",
    "time_steps_stacked": """
import torch
from torch import nn
cell = nn.GRUCell(4, 8)
def unroll(xs, h):
    outputs = []
    for t in range(xs.size(1)):
        h = cell(xs[:, t], h)
        outputs.append(h)
    return torch.stack(outputs, dim=1)
""",
    "single_samples_from_an_unbatched_loader": """
import torch
from torch.utils.data import DataLoader
def collect(ds, model: torch.nn.Module):
    loader = DataLoader(ds, batch_size=None)
    feats = []
    for x in loader:
        feats.append(model(x))
    return torch.stack(feats)
""",
    "sliding_windows_as_samples": """
import torch
def windows(series, w=24):
    return torch.stack([series[i:i + w] for i in range(len(series) - w)])
""",
    "chunks_stacked_then_iterated": """
import torch
def make_batches(x, batch=32):
    parts = [x[b * batch:(b + 1) * batch] for b in range(len(x) // batch)]
    return torch.stack(parts)
""",
}

SEEN = {
    "predictions_appended_per_batch": "keitakurita/practical-torchtext#9 (per-batch predictions collected in a "
    "loop and joined with np.hstack where np.vstack was meant; the last batch is smaller)",
    "batches_comprehension_for_feature_stats": "benchmarks/fresh/lint4/v08_load_forecast_tcn.py (chunks = [past for "
    "past, _ in loader]; torch.stack(chunks).mean(dim=(0, 1)); tuning material)",
    "labels_collected_per_batch": "sktime/pytorch-forecasting#1808 (targets of 2 batches of 64 come back as (64, 2): "
    "batches joined as if they were time steps, fixed by torch.cat(y_batches, dim=0))",
    "row_chunks_averaged": "the corpus's source S1 (stack makes a new dimension, cat does not) and this corpus's "
    "case (cases/shapes/stack_vs_cat.py)",
    "time_steps_stacked": "WenjieDu/BenchPOTS#22 (the other way round: samples must be stacked into a new axis, "
    "torch.cat there was the bug)",
}
