"""PTF018: ``.next()`` on a DataLoader iterator (Python 2 spelling)."""

PITFALL = {
    "dataiter_next": """
import torch
trainloader = torch.utils.data.DataLoader(range(10), batch_size=2)
dataiter = iter(trainloader)
images, labels = dataiter.next()
""",
    "inline_iter_next": """
from torch.utils.data import DataLoader
def peek(ds):
    val_loader = DataLoader(ds, batch_size=8)
    return iter(val_loader).next()
""",
    "param_loader_in_loop": """
def train(train_loader, steps):
    it = iter(train_loader)
    for _ in range(steps):
        batch = it.next()
""",
    "self_iterator_in_method": """
from torch.utils.data import DataLoader
class Batches:
    def __init__(self, ds):
        self.loader = DataLoader(ds, batch_size=4)
        self.it = iter(self.loader)
    def get_batch(self):
        return self.it.next()
""",
    "tqdm_wrapped": """
from tqdm import tqdm
from torch.utils.data import DataLoader
def first(ds):
    loader = DataLoader(ds)
    it = iter(tqdm(loader))
    return it.next()
""",
}

NEAR_MISS = {
    "builtin_next": """
from torch.utils.data import DataLoader
loader = DataLoader(range(4), batch_size=2)
x = next(iter(loader))
""",
    "dunder_next": """
from torch.utils.data import DataLoader
loader = DataLoader(range(4))
it = iter(loader)
x = it.__next__()
""",
    "own_reader_next": """
class Reader:
    def next(self):
        return 1
r = Reader()
r.next()
""",
}

SEEN = {
    "dataiter_next": "https://github.com/CompVis/metric-learning-divide-and-conquer/issues/13",
    "inline_iter_next": "https://github.com/dvgodoy/PyTorchStepByStep/pull/29",
    "self_iterator_in_method": "https://github.com/clovaai/deep-text-recognition-benchmark/issues/355",
    "param_loader_in_loop": "https://github.com/yonghanzhang94/A-Single-View-3D-Object-Point-Cloud-Reconstruction/issues/1",
    "builtin_next": "https://github.com/deepspeedai/DeepSpeedExamples/issues/222",
}

# round 3: the iterator made by ``loader.__iter__()``
PITFALL["dunder_iter_then_next_method"] = """
def warmup_batch(train_loader):
    it = train_loader.__iter__()
    images, labels = it.next()
    return images, labels
"""
PITFALL["self_loader_dunder_iter"] = """
from torch.utils.data import DataLoader
class Sampler:
    def __init__(self, dataset):
        self.loader = DataLoader(dataset, batch_size=8, shuffle=True)
    def get_batch(self):
        return self.loader.__iter__().next()
"""
NEAR_MISS["dunder_iter_builtin_next"] = """
def warmup_batch(train_loader):
    it = train_loader.__iter__()
    return next(it)
"""
SEEN["dunder_iter_then_next_method"] = "https://github.com/clovaai/deep-text-recognition-benchmark/issues/355 (data_loader_iter.next() on a DataLoader iterator)"
SEEN["dunder_iter_builtin_next"] = "https://github.com/deepspeedai/DeepSpeedExamples/issues/257 (the fix: next(dataiter))"
