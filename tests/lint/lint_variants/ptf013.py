"""PTF013: a tensor's .to()/.cuda() result thrown away (a module's .to() is in place)."""

PITFALL = {
    "factory": """
import torch
ids = torch.tensor([1, 2, 3])
ids.to("cuda")
""",
    "loader_batch": """
import torch
def train(model, train_loader, device):
    model.to(device)
    for data, target in train_loader:
        data.to(device)
        target.to(device)
        out = model(data)
""",
    "next_iter_batch": """
import torch
from torch.utils.data import DataLoader
def peek(dataset):
    loader = DataLoader(dataset, batch_size=4)
    images, labels = next(iter(loader))
    images.cuda()
    return images
""",
    "annotated_param_in_method": """
import torch
class Runner:
    def prepare(self, x: torch.Tensor, device):
        x.to(device)
        return x
""",
    "model_output": """
import torch
import torch.nn as nn
model = nn.Linear(4, 2)
def predict(x):
    out = model(x)
    out.cpu()
    return out
""",
    "from_numpy_float": """
import numpy as np
import torch
arr = np.zeros(3)
t = torch.from_numpy(arr)
t.float()
""",
}

NEAR_MISS = {
    "module_to": """
import torch.nn as nn
model = nn.Sequential(nn.Linear(4, 2))
model.to("cuda")
""",
    "own_module_and_attribute": """
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
    def place(self, device):
        self.body.cuda()
net = Net()
net.to("cuda")
""",
    "assigned": """
def train(model, loader, device):
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        model(data)
""",
    "unknown_receiver": """
def place(thing, device):
    thing.to(device)
""",
}

SEEN = {
    "loader_batch": "https://github.com/RaoFoundation/bittensor/pull/187",
    "next_iter_batch": "https://github.com/pytorch/pytorch/pull/40746",
    "module_to": "https://github.com/onyx-dot-app/onyx/pull/2134",
    "factory": "https://github.com/meta-pytorch/torchcodec/pull/1347",
}

# round 2: a loader's whole element may be a dict-like batch whose .to() is in place
NEAR_MISS["batch_encoding_to"] = """
import torch
def evaluate(model, eval_dataloader, device):
    for batch in eval_dataloader:
        batch.to(device)
        with torch.no_grad():
            outputs = model(**batch)
"""
SEEN["batch_encoding_to"] = (
    "accelerate/test_utils/scripts/external_deps/test_metrics.py (for batch in dataloader: batch.to(device), in build/realcode/untuned)"
)

# round 13: each of a listed few of a batch's tensors, and each value of a dict batch, is one tensor
PITFALL["batch_fields_listed_in_a_loop"] = """
import torch
from torch.utils.data import DataLoader
def train(model, train_set, optimizer, criterion, device):
    loader = DataLoader(train_set, batch_size=256, shuffle=True)
    for users, items, labels in loader:
        for t in (users, items, labels):
            t.to(device, non_blocking=True)
        loss = criterion(model(users, items), labels)
"""
PITFALL["values_of_a_dict_batch_in_a_helper"] = """
import torch
from torch.utils.data import DataLoader
def move_batch(batch, device):
    for value in batch.values():
        value.to(device, non_blocking=True)
    return batch
def fit(model, dataset, device):
    for batch in DataLoader(dataset, batch_size=32, shuffle=True):
        batch = move_batch(batch, device)
        model(batch["image"])
"""
PITFALL["items_of_a_dict_batch"] = """
import torch
def evaluate(model, val_loader, device):
    for batch in val_loader:
        for key, value in batch.items():
            value.cuda()
        model(batch["x"])
"""
SEEN["batch_fields_listed_in_a_loop"] = (
    "benchmarks/fresh/lint3 u10_ncf_recommender.py (held-out half, missed at its first score)"
)
SEEN["values_of_a_dict_batch_in_a_helper"] = (
    "benchmarks/fresh/lint10 r26_hand_pose_heatmaps.py (held-out half, missed at its first score); "
    "outputs_to_device in public code: for dict_element in outputs: for v in dict_element.values(): v.to(device)"
)
NEAR_MISS["values_of_a_metrics_dict"] = """
import torch
import torch.nn as nn
class Tracker:
    def __init__(self, metrics):
        self.metrics = {"train": metrics, "val": metrics}
    def to(self, device):
        for v in self.metrics.values():
            v.to(device)
"""
NEAR_MISS["models_listed_in_a_loop"] = """
import torch.nn as nn
def place(device):
    encoder, decoder = nn.Linear(4, 4), nn.Linear(4, 4)
    for m in (encoder, decoder):
        m.to(device)
    return encoder, decoder
"""
NEAR_MISS["items_of_a_module_dict"] = """
import torch.nn as nn
class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 3)})
    def place(self, device):
        for name, head in self.heads.items():
            head.to(device)
"""
SEEN["values_of_a_metrics_dict"] = (
    "public code: def to(self, device): for v in self.metrics.values(): v.to(device) (torchmetrics collections, in place)"
)

# A tensor made in the statement and moved for the call's effect (a device probe, a CUDA context made early):
# nothing holds it, so nothing is expected to have moved. The same move of a tensor the code keeps is the pitfall.
_PROBE = """
import torch
def occupy_gpu(gpus):
    for g in gpus:
        with torch.cuda.device(g):
{moved}
"""
NEAR_MISS["throwaway_tensor_moved_to_make_a_context"] = _PROBE.format(moved="            torch.zeros(1).cuda()")
PITFALL["kept_tensor_moved_and_discarded"] = _PROBE.format(
    moved="            marker = torch.zeros(1)\n            marker.cuda()\n            print(marker.device)"
)
SEEN["throwaway_tensor_moved_to_make_a_context"] = (
    "round 18's tuning half, read (st-gcn's torchlight occupy_gpu: torch.zeros(1).cuda() per GPU; hippynn's "
    "torch.ones(0).to(device) probe in a try: 3 findings read harmless)"
)
SEEN["kept_tensor_moved_and_discarded"] = "the same loop keeping the tensor and discarding its move"

# round 20: a loader whose collate_fn of the code makes something else than tensors (DGL's batched graphs,
# whose .to() was in place in DGL 0.4) yields batches of unknown kind; one whose collate_fn is shown to return
# tensors (pad_sequence, torch.stack) still yields tensors
NEAR_MISS["custom_collate_of_graphs"] = """
import dgl
import torch
from torch.utils.data import DataLoader
def batcher():
    def batcher_dev(batch):
        graph_q, graph_k = zip(*batch)
        return dgl.batch(graph_q), dgl.batch(graph_k)
    return batcher_dev
def main(train_dataset, model, device):
    train_loader = DataLoader(dataset=train_dataset, batch_size=32, collate_fn=batcher(), shuffle=True)
    for graph_q, graph_k in train_loader:
        graph_q.to(device)
        graph_k.to(device)
        model(graph_q, graph_k)
"""
NEAR_MISS["collate_fn_returning_lists"] = """
import torch
from torch.utils.data import DataLoader
def collate(samples):
    images = [s[0] for s in samples]
    targets = [s[1] for s in samples]
    return images, targets
def train(model, dataset, device):
    loader = DataLoader(dataset, batch_size=2, collate_fn=collate)
    for images, targets in loader:
        images.to(device)
        model(images, targets)
"""
PITFALL["collate_fn_of_padded_tensors"] = """
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader
def collate(batch):
    tokens, labels = zip(*batch)
    return pad_sequence(tokens, batch_first=True), torch.tensor(labels)
def train(model, dataset, device):
    loader = DataLoader(dataset, batch_size=16, shuffle=True, collate_fn=collate)
    for tokens, labels in loader:
        tokens.to(device)
        labels.to(device)
        model(tokens)
"""
SEEN["custom_collate_of_graphs"] = "GCC (THUDM/GCC) generate.py and train.py, round 20's tuning half"
SEEN["collate_fn_returning_lists"] = "the detection-style collate that keeps a batch's images in a list"

# A batch dataclass whose fields are declared tensors, moved by its own to() that throws the copies away
# (fresh set 20's f25, tuning half, missed at its first run): the class body's annotation says what the field holds.
_FIELDS = """
from dataclasses import dataclass
import torch
@dataclass
class Batch:
    wave: {kind}
    phase: {kind}
    def to(self, device):
        {move}
        return self
"""
PITFALL["dataclass_fields_moved_in_its_to"] = _FIELDS.format(
    kind="torch.Tensor", move="self.wave.to(device, non_blocking=True)\n        self.phase.to(device)"
)
NEAR_MISS["dataclass_fields_reassigned"] = _FIELDS.format(
    kind="torch.Tensor", move="self.wave = self.wave.to(device)\n        self.phase = self.phase.to(device)"
)
NEAR_MISS["dataclass_fields_of_modules"] = _FIELDS.format(
    kind="torch.nn.Module", move="self.wave.to(device)\n        self.phase.to(device)"
)
SEEN["dataclass_fields_moved_in_its_to"] = "benchmarks/fresh/lint20 f25_seismic_phase_picking.py (tuning half)"

# A batch of another library's loader (torch_geometric's DataLoader, imported in the function): its .to()
# moves the object in place and returns it (round 22's held-out half: cell-gears, read wrong there).
NEAR_MISS["a_geometric_loaders_batch_moved_in_place"] = """
import torch
def predict(cg, device, model):
    from torch_geometric.data import DataLoader
    loader = DataLoader(cg, 300, shuffle=False)
    batch = next(iter(loader))
    batch.to(device)
    with torch.no_grad():
        return model(batch)
"""
SEEN["a_geometric_loaders_batch_moved_in_place"] = "round 22 held-out half: cell-gears gears.py (batch.to(self.device) of a PyG Batch)"
