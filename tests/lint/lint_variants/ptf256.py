"""PTF256 (batch-sampler-exclusive): a DataLoader given batch_sampler= and batch_size, shuffle, sampler or drop_last."""

PITFALL = {
    "shuffle_with_batch_sampler": """
import torch
from torch.utils.data import BatchSampler, DataLoader, SequentialSampler
data = torch.arange(10.0)
batches = BatchSampler(SequentialSampler(data), batch_size=2, drop_last=False)
loader = DataLoader(data, batch_sampler=batches, shuffle=True)
""",
    "batch_size_from_args": """
from torch.utils import data as tud
from myproject.samplers import BucketBatchSampler
def make_loader(dataset, lengths, args):
    sampler = BucketBatchSampler(lengths, args.batch_size)
    return tud.DataLoader(dataset, batch_size=args.batch_size, batch_sampler=sampler, num_workers=4)
""",
    "rebuilt_with_drop_last": """
import torch
from torch.utils.data import DataLoader
class UniformBatches(torch.utils.data.Sampler):
    def __init__(self, n, bs):
        self.n, self.bs = n, bs
    def __iter__(self):
        order = torch.randperm(self.n).tolist()
        return iter([order[i:i + self.bs] for i in range(0, self.n, self.bs)])
def private_loader(dataset, bs):
    return DataLoader(dataset, batch_sampler=UniformBatches(len(dataset), bs), drop_last=True)
""",
    "sampler_and_batch_sampler": """
import torch.utils.data as data
def loaders(train_set, group_ids):
    sampler = data.RandomSampler(train_set)
    batch_sampler = data.BatchSampler(sampler, 16, drop_last=True)
    return data.DataLoader(train_set, sampler=sampler, batch_sampler=batch_sampler, collate_fn=None)
""",
    "batch_size_literal_in_method": """
import torch
class DataModule:
    def __init__(self, dataset, sampler):
        self.dataset, self.sampler = dataset, sampler
    def train_dataloader(self):
        bs = torch.utils.data.BatchSampler(self.sampler, batch_size=32, drop_last=False)
        return torch.utils.data.DataLoader(self.dataset, batch_size=32, batch_sampler=bs, pin_memory=True)
""",
    "shuffle_constant_name": """
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
SHUFFLE = True
def build(ds, per_gpu_batches):
    return DataLoader(ds, batch_sampler=per_gpu_batches(ds), shuffle=SHUFFLE)
""",
}

NEAR_MISS = {
    "batch_sampler_alone": """
import torch
from torch.utils.data import BatchSampler, DataLoader, RandomSampler
data = torch.arange(10.0)
order = RandomSampler(data, generator=torch.Generator().manual_seed(0))
loader = DataLoader(data, batch_sampler=BatchSampler(order, batch_size=2, drop_last=True), num_workers=2)
""",
    "batch_size_one_and_defaults": """
from torch.utils.data import BatchSampler, DataLoader, SequentialSampler
def make(ds):
    bs = BatchSampler(SequentialSampler(ds), 4, False)
    return DataLoader(ds, batch_size=1, shuffle=False, sampler=None, batch_sampler=bs, drop_last=False)
""",
    "either_or_by_condition": """
from torch.utils.data import DataLoader
def make(ds, batch_sampler=None, batch_size=8):
    if batch_sampler is not None:
        return DataLoader(ds, batch_sampler=batch_sampler)
    return DataLoader(ds, batch_size=batch_size, shuffle=True, drop_last=True)
""",
    "sampler_none_when_batched": """
from torch.utils.data import DataLoader
def make(ds, bucket_sampler, distributed):
    batch_sampler = bucket_sampler if distributed else None
    return DataLoader(
        ds,
        batch_size=1 if batch_sampler is not None else 16,
        shuffle=False,
        batch_sampler=batch_sampler,
    )
""",
    "plain_sampler_with_batch_size": """
import torch
from torch.utils.data import DataLoader, WeightedRandomSampler
weights = torch.ones(100)
loader = DataLoader(torch.arange(100), sampler=WeightedRandomSampler(weights, 100), batch_size=10, drop_last=True)
""",
    "other_librarys_loader": """
from torch_geometric.loader import DataLoader
def make(ds, sampler):
    return DataLoader(ds, batch_size=32, batch_sampler=sampler, shuffle=True)
""",
}

PREVIEW = {
    "batch_sampler_of_unknown_origin": """
from torch.utils.data import DataLoader
def make(ds, batch_sampler):
    return DataLoader(ds, batch_sampler=batch_sampler, shuffle=True)
""",
}

PITFALL["shuffle_from_a_config_dict"] = """
from torch.utils.data import DataLoader, BatchSampler, RandomSampler
SETTINGS = {"shuffle": True, "batch": 32}
def loader(ds, settings):
    batches = BatchSampler(RandomSampler(ds), settings["batch"], drop_last=False)
    return DataLoader(ds, batch_sampler=batches, shuffle=settings["shuffle"])
def main(settings=SETTINGS):
    return loader(range(100), settings)
main()
"""
NEAR_MISS["shuffle_off_in_the_config_dict"] = """
from torch.utils.data import DataLoader, BatchSampler, RandomSampler
SETTINGS = {"shuffle": False, "batch": 32}
def loader(ds, settings):
    batches = BatchSampler(RandomSampler(ds), settings["batch"], drop_last=False)
    return DataLoader(ds, batch_sampler=batches, shuffle=settings["shuffle"])
def main(settings=SETTINGS):
    return loader(range(100), settings)
main()
"""

SEEN = {
    "shuffle_from_a_config_dict": "benchmarks/fresh/lint15 j02_news_topic_bigru.py (tuning half, missed at its first run: shuffle=cfg[\"shuffle\"] beside a batch_sampler, True in CONFIG)",
    "rebuilt_with_drop_last": "https://github.com/meta-pytorch/opacus/issues/352 (DPDataLoader rebuilds a loader with its own batch_sampler and passes drop_last=True on: ValueError mutually exclusive)",
    "batch_size_from_args": "https://github.com/catalyst-team/catalyst/pull/271 (a loader rebuilt with batch_sampler= keeping batch_size=: the ValueError) and https://github.com/pyg-team/pytorch_geometric/pull/8868 (drop batch_size when a batch_sampler is used)",
    "shuffle_with_batch_sampler": "the S1 notes' data section (with a custom BatchSampler, shuffle must be False); this corpus's case",
    "sampler_and_batch_sampler": "https://github.com/pytorch/pytorch/pull/1867 review (raise when batch_sampler and one of the options it replaces are both given)",
}
