"""PTF246 (saved-view-keeps-whole-storage): torch.save of a view of a larger tensor."""

PITFALL = {
    "first_rows": """
import torch
data = torch.ones((100000, 300), dtype=torch.int64)
small = data[:30000, :]
torch.save(small, "small.pt")
""",
    "one_sample_of_a_batch": """
import torch
def dump(model, images):
    feats = torch.relu(torch.randn(images.shape[0], 512, 7, 7))
    for i in range(images.shape[0]):
        torch.save(feats[i], f"feat_{i}.pt")
""",
    "chunks": """
import torch
d = torch.rand(10000)
pieces = torch.chunk(d, 10)
torch.save(pieces, "chunked.pt")
for i, e in enumerate(pieces):
    torch.save(e, f"chunk_{i}.pt")
""",
    "dict_of_slices": """
import torch
def save_split(x: torch.Tensor, n: int, path):
    torch.save({"train": x[:n], "val": x[n:]}, path)
""",
    "contiguous_is_no_copy": """
import torch
emb = torch.randn(50000, 128)
torch.save(emb[:1000].contiguous(), "head.pt")
""",
    "narrowed": """
import torch
def keep(table: torch.Tensor, k: int, path: str):
    head = table.narrow(0, 0, k)
    torch.save(head, path)
""",
    "helper_called_with_a_slice": """
import torch
def write(t, path):
    torch.save(t, path)
def main():
    big = torch.zeros(1_000_000)
    write(big[:10], "ten.pt")
""",
}

NEAR_MISS = {
    "cloned": """
import torch
data = torch.ones((100000, 300))
torch.save(data[:30000].clone(), "small.pt")
""",
    "whole_tensor": """
import torch
def save_all(x: torch.Tensor, path):
    torch.save(x, path)
    torch.save(x.view(-1), path + ".flat")
""",
    "mask_index_copies": """
import torch
def save_kept(x: torch.Tensor, keep: torch.Tensor, path):
    torch.save(x[keep], path)
""",
    "strided_contiguous_copies": """
import torch
def save_cols(x: torch.Tensor, path):
    torch.save(x[:, :4].contiguous(), path)
""",
    "state_dict": """
import torch
from torch import nn
model = nn.Linear(3, 3)
torch.save(model.state_dict(), "m.pt")
""",
    "list_item": """
import torch
def save_first(results, path):
    torch.save(results[0], path)
""",
}

NEAR_MISS["pickled_list_split"] = """
import pickle
import torch
def split(path, n_val):
    with open(path, "rb") as f:
        dataset = pickle.load(f)
    torch.save(dataset[:-n_val], "train.pt")
    torch.save(dataset[-n_val:], "val.pt")
"""

SEEN = {
    "first_rows": "https://github.com/pytorch/pytorch/issues/53419 (data[:30000,:] saved: 2.4GB instead of 72MB)",
    "one_sample_of_a_batch": "https://github.com/pytorch/pytorch/issues/33101 (activation per image saved from a batch tensor) and https://github.com/pytorch/pytorch/issues/8109 (origin[0] saved)",
    "chunks": "https://github.com/pytorch/pytorch/issues/95278 (torch.chunk pieces saved at the whole tensor's size)",
    "pickled_list_split": "benchmarking-gnns data/cycles/build_cycles.py (slices of a pickled list of graphs saved: no tensor view)",
    "cloned": "https://github.com/pytorch/pytorch/issues/40157 (clone before saving: 4.3KB instead of 3.9MB)",
}
