"""PTF207 (distributed-sampler-without-set-epoch): a shuffling DistributedSampler whose epoch never changes."""

PITFALL = {
    "issue_repro": """
import torch
from torch.utils.data import DataLoader
def main(dataset):
    torch.distributed.init_process_group(backend="nccl")
    sampler = torch.utils.data.distributed.DistributedSampler(dataset, shuffle=True)
    dataloader = DataLoader(dataset, batch_size=5, pin_memory=True, drop_last=True, sampler=sampler)
    for epoch in range(3):
        for i, data in enumerate(dataloader, 0):
            names, _ = data
""",
    "train_one_epoch_helper": """
from torch.utils.data import DataLoader, DistributedSampler
def train_one_epoch(model, loader, opt):
    for x, y in loader:
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
def main(model, dataset, opt, epochs):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(epochs):
        train_one_epoch(model, loader, opt)
""",
    "only_when_distributed": """
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
def run(dataset, is_distributed, n_epochs, train):
    sampler = DistributedSampler(dataset) if is_distributed else None
    loader = DataLoader(dataset, shuffle=(sampler is None), sampler=sampler)
    for epoch in range(n_epochs):
        train(loader)
""",
    "inline_sampler": """
from torch.utils.data import DataLoader, DistributedSampler
def fit(model, ds, rank, world, epochs):
    loader = DataLoader(ds, batch_size=64, sampler=DistributedSampler(ds, num_replicas=world, rank=rank))
    for epoch in range(epochs):
        for batch in loader:
            model(batch)
""",
    "while_loop_epochs": """
import torch.utils.data as tud
def train(model, dataset, max_epochs):
    sampler = tud.DistributedSampler(dataset, shuffle=True, seed=42)
    loader = tud.DataLoader(dataset, batch_size=8, sampler=sampler, num_workers=4)
    epoch = 0
    while epoch < max_epochs:
        for batch in loader:
            model(batch)
        epoch += 1
""",
}

NEAR_MISS = {
    "set_epoch_called": """
from torch.utils.data import DataLoader, DistributedSampler
def main(dataset, epochs, train):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        train(loader)
""",
    "set_epoch_through_loader": """
from torch.utils.data import DataLoader, DistributedSampler
def main(dataset, epochs, train):
    loader = DataLoader(dataset, sampler=DistributedSampler(dataset))
    for epoch in range(epochs):
        if hasattr(loader.sampler, "set_epoch"):
            loader.sampler.set_epoch(epoch)
        train(loader)
""",
    "shuffle_off": """
from torch.utils.data import DataLoader, DistributedSampler
def extract_features(model, dataset, epochs):
    sampler = DistributedSampler(dataset, shuffle=False)
    loader = DataLoader(dataset, sampler=sampler)
    for epoch in range(epochs):
        for batch in loader:
            model(batch)
""",
    "builder_returns_loader": """
from torch.utils.data import DataLoader, DistributedSampler
def build_loader(dataset, batch_size):
    sampler = DistributedSampler(dataset)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)
""",
    "lightning_sets_it": """
import pytorch_lightning as pl
from torch.utils.data import DataLoader, DistributedSampler
def main(model, dataset, epochs):
    loader = DataLoader(dataset, sampler=DistributedSampler(dataset))
    for stage in range(2):
        pl.Trainer(max_epochs=epochs).fit(model, loader)
""",
    "one_pass_only": """
from torch.utils.data import DataLoader, DistributedSampler
def extract(model, dataset):
    loader = DataLoader(dataset, sampler=DistributedSampler(dataset))
    for batch in loader:
        model(batch)
""",
}

PITFALL["loaders_returned_in_a_tuple_to_the_script"] = """
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
def make_loaders(train_set, val_set, bs):
    return (DataLoader(train_set, batch_size=bs, sampler=DistributedSampler(train_set, shuffle=True)),
            DataLoader(val_set, batch_size=bs, sampler=DistributedSampler(val_set, shuffle=False)))
class Runner:
    def __init__(self, model, loaders):
        self.model = model
        self.train_dl, self.val_dl = loaders
    def fit(self, epochs):
        for epoch in range(epochs):
            for x, y in self.train_dl:
                self.model(x)
def main(model, train_set, val_set):
    dist.init_process_group("nccl")
    Runner(model, make_loaders(train_set, val_set, 32)).fit(10)
"""

NEAR_MISS["library_builder_called_nowhere_here"] = """
from torch.utils.data import DataLoader, DistributedSampler
def distributed_loader(dataset, batch_size):
    return (DataLoader(dataset, batch_size=batch_size, sampler=DistributedSampler(dataset, shuffle=True)), len(dataset))
"""

SEEN = {
    "loaders_returned_in_a_tuple_to_the_script": "benchmarks/fresh/lint14 n12_ddp_contract_topics.py (tuning half, missed at its first run: the loaders returned in a tuple, the epochs run by a trainer class)",
    "issue_repro": "https://github.com/pytorch/pytorch/issues/31771 (DistributedSampler(dataset, shuffle=True): the same order every epoch)",
    "only_when_distributed": "https://github.com/kan-bayashi/ParallelWaveGAN/issues/177 (sampler = DistributedSampler(dataset) if is_distributed else None; set_epoch missing)",
    "train_one_epoch_helper": "https://github.com/lucidrains/DALLE-pytorch/pull/230 (data_sampler.set_epoch added to avoid the same order each epoch)",
    "set_epoch_called": "https://github.com/yangkky/distributed_tutorial/issues/5 (the fix: call set_epoch on the sampler)",
    "inline_sampler": "https://github.com/Spijkervet/SimCLR/pull/26 (set_epoch added for the distributed sampler)",
}

# round 2: set_epoch behind a flag the module does not decide, or in a helper with its own names
NEAR_MISS["flag_reset_in_branch"] = """
from torch.utils.data import DataLoader, DistributedSampler
def main(dataset, epochs, train, shuffle):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, sampler=sampler)
    reshuffle = True
    if not shuffle:
        reshuffle = False
    for epoch in range(epochs):
        if reshuffle:
            sampler.set_epoch(epoch)
        train(loader)
"""
NEAR_MISS["set_epoch_in_helper"] = """
from torch.utils.data import DataLoader, DistributedSampler
def run_epochs(sampler, loader, epochs, distributed, step):
    for epoch in range(epochs):
        if distributed:
            sampler.set_epoch(epoch)
        step(loader)
def main(dataset, step):
    distributed = False
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, sampler=sampler)
    for stage in range(2):
        run_epochs(sampler, loader, 3, True, step)
"""
PITFALL["set_epoch_never_reached"] = """
from torch.utils.data import DataLoader, DistributedSampler
def run_epochs(sampler, loader, epochs, distributed, step):
    for epoch in range(epochs):
        if distributed:
            sampler.set_epoch(epoch)
        step(loader)
def main(dataset, step):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, sampler=sampler)
    for stage in range(2):
        run_epochs(sampler, loader, 3, False, step)
"""
SEEN["flag_reset_in_branch"] = (
    "https://github.com/Snowdar/asv-subtools/issues/8 (set_epoch guarded by 'if data.train_sampler is not None')"
)

# fresh set 7's tuning half (a miss): the loader is built in a helper and handed back, and the caller
# draws from it every epoch
PITFALL["loader_built_in_a_helper_returned_to_the_epoch_loop"] = """
import torch
from torch.utils.data import DataLoader, DistributedSampler

def make_loader(ds, batch, world, rank):
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True)
    loader = DataLoader(ds, batch_size=batch, sampler=sampler)
    return loader, len(ds)

def main(ds, model, opt, epochs, world, rank):
    loader, n = make_loader(ds, 64, world, rank)
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
"""
NEAR_MISS["loader_built_in_a_helper_read_once"] = """
import torch
from torch.utils.data import DataLoader, DistributedSampler

def make_loader(ds, batch, world, rank):
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True)
    loader = DataLoader(ds, batch_size=batch, sampler=sampler)
    return loader, len(ds)

@torch.no_grad()
def evaluate(ds, model, world, rank):
    loader, n = make_loader(ds, 256, world, rank)
    correct = sum((model(x).argmax(1) == y).sum().item() for x, y in loader)
    return correct / n
"""
SEEN["loader_built_in_a_helper_returned_to_the_epoch_loop"] = (
    "benchmarks/fresh/lint7 y16_ddp_product_image_pretrain.py (a missed planted pitfall); the spelling of "
    "pytorch/examples distributed/ddp-tutorial-series multigpu.py (prepare_dataloader builds the loader with "
    "a DistributedSampler and returns it; its Trainer calls sampler.set_epoch(epoch) in _run_epoch)"
)
