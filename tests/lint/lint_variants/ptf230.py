"""PTF230 (training-data-not-shuffled): a DataLoader that feeds a training loop without shuffling."""

PITFALL = {
    "default_shuffle_in_train_loop": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
x = torch.randn(600, 20)
y = torch.arange(600) // 200
train_loader = DataLoader(TensorDataset(x, y), batch_size=32)
model = nn.Linear(20, 3)
optimizer = torch.optim.Adam(model.parameters())
criterion = nn.CrossEntropyLoss()
for epoch in range(5):
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
""",
    "explicit_false_passed_to_train_function": """
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

def train_epoch(model, loader, opt):
    model.train()
    for images, labels in loader:
        opt.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        opt.step()

def main():
    ds = datasets.ImageFolder("data/train", transform=transforms.ToTensor())
    loader = DataLoader(ds, batch_size=64, shuffle=False, num_workers=4)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        train_epoch(model, loader, opt)
""",
    "own_dataset_class_enumerate_tqdm": """
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

class SeriesDataset(Dataset):
    def __init__(self, frames, targets):
        self.frames, self.targets = frames, targets
    def __len__(self):
        return len(self.frames)
    def __getitem__(self, i):
        return self.frames[i], self.targets[i]

def fit(frames, targets):
    loader = DataLoader(SeriesDataset(frames, targets), batch_size=16)
    net = nn.Linear(8, 1)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for step, (f, t) in enumerate(tqdm(loader)):
        loss = nn.functional.mse_loss(net(f), t)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
    "self_attribute_in_trainer_class": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

class Trainer:
    def __init__(self, model, x, y):
        self.model = model
        self.train_loader = DataLoader(TensorDataset(x, y), batch_size=128, num_workers=2)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    def train_one_epoch(self):
        for xb, yb in self.train_loader:
            self.optimizer.zero_grad()
            nn.functional.cross_entropy(self.model(xb), yb).backward()
            self.optimizer.step()
""",
    "lightning_train_dataloader": """
import torch
import pytorch_lightning as pl
from torch import nn
from torch.utils.data import DataLoader
from torchvision.datasets import MNIST
from torchvision.transforms import ToTensor

class LitClassifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)
    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
    def train_dataloader(self):
        return DataLoader(MNIST("data", train=True, download=True, transform=ToTensor()), batch_size=64)
""",
    "shuffle_flag_every_call_false": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

def make_loader(x, y, shuffle=False):
    return DataLoader(TensorDataset(x, y), batch_size=32, shuffle=shuffle)

def run(x, y, shuffle=False):
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=shuffle)
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for xb, yb in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()

run(torch.load("features.pt", weights_only=True), torch.load("labels.pt", weights_only=True))
""",
}

NEAR_MISS = {
    "validation_loader_no_backward": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
x, y = torch.randn(200, 6), torch.randint(0, 3, (200,))
train_loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
val_loader = DataLoader(TensorDataset(x, y), batch_size=64)
model = nn.Linear(6, 3)
opt = torch.optim.Adam(model.parameters())
for xb, yb in train_loader:
    opt.zero_grad()
    nn.functional.cross_entropy(model(xb), yb).backward()
    opt.step()
model.eval()
with torch.no_grad():
    correct = sum((model(xb).argmax(1) == yb).sum().item() for xb, yb in val_loader)
""",
    "distributed_sampler": """
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

def train(model, x, y, epochs):
    ds = TensorDataset(x, y)
    sampler = DistributedSampler(ds, num_replicas=dist.get_world_size(), rank=dist.get_rank())
    loader = DataLoader(ds, batch_size=32, shuffle=False, sampler=sampler)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for xb, yb in loader:
            opt.zero_grad()
            nn.functional.mse_loss(model(xb), yb).backward()
            opt.step()
""",
    "iterable_dataset": """
import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset

class Stream(IterableDataset):
    def __iter__(self):
        for _ in range(1000):
            yield torch.randn(8), torch.randn(1)

loader = DataLoader(Stream(), batch_size=16)
net = nn.Linear(8, 1)
opt = torch.optim.Adam(net.parameters())
for xb, yb in loader:
    opt.zero_grad()
    nn.functional.mse_loss(net(xb), yb).backward()
    opt.step()
""",
    "stateful_rnn_carries_hidden": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 32)
        self.rnn = nn.GRU(32, 64, batch_first=True)
        self.out = nn.Linear(64, 50)
    def forward(self, x, h):
        y, h = self.rnn(self.emb(x), h)
        return self.out(y), h

def train(tokens, targets):
    loader = DataLoader(TensorDataset(tokens, targets), batch_size=20, drop_last=True)
    model = CharRNN()
    opt = torch.optim.Adam(model.parameters())
    hidden = torch.zeros(1, 20, 64)
    for x, y in loader:
        hidden = hidden.detach()
        logits, hidden = model(x, hidden)
        loss = nn.functional.cross_entropy(logits.reshape(-1, 50), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
    "shuffle_variable_not_provably_false": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

def loader_for(x, y, is_train):
    return DataLoader(TensorDataset(x, y), batch_size=32, shuffle=is_train)

def fit(x, y, is_train=True):
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=is_train)
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for xb, yb in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
""",
    "dataset_draws_random_items": """
import random
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

class Patches(Dataset):
    def __init__(self, image):
        self.image = image
    def __len__(self):
        return 1000
    def __getitem__(self, i):
        r, c = random.randint(0, 200), random.randint(0, 200)
        return self.image[:, r:r + 32, c:c + 32]

def train(image, model):
    loader = DataLoader(Patches(image), batch_size=8)
    opt = torch.optim.Adam(model.parameters())
    for patch in loader:
        opt.zero_grad()
        model(patch).pow(2).mean().backward()
        opt.step()
""",
}

PREVIEW = {
    "imported_dataset_unknown_kind": """
import torch
from torch import nn
from torch.utils.data import DataLoader
from mydata import ShardDataset

def train(model):
    loader = DataLoader(ShardDataset("shards/"), batch_size=32)
    opt = torch.optim.Adam(model.parameters())
    for xb, yb in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
""",
}

PITFALL["training_branch_of_a_loader_builder_unshuffled"] = """
import torch
from torch.utils.data import DataLoader, TensorDataset
def make_loader(ds, bs, train):
    if train:
        return DataLoader(ds, batch_size=bs, drop_last=True)
    return DataLoader(ds, batch_size=2 * bs)
def main(model, opt):
    x, y = torch.load("sorted_by_label.pt", weights_only=True)
    ds = TensorDataset(x, y)
    train_loader = make_loader(ds, 16, train=True)
    eval_loader = make_loader(ds, 16, train=False)
    for epoch in range(3):
        for x, y in train_loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        for x, y in eval_loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
"""
NEAR_MISS["evaluation_branch_of_a_loader_builder"] = """
import torch
from torch.utils.data import DataLoader, TensorDataset
def make_loader(ds, bs, train):
    if train:
        return DataLoader(ds, batch_size=bs, shuffle=True)
    return DataLoader(ds, batch_size=2 * bs)
def main(model, opt):
    x, y = torch.load("sorted_by_label.pt", weights_only=True)
    ds = TensorDataset(x, y)
    train_loader = make_loader(ds, 16, train=True)
    eval_loader = make_loader(ds, 16, train=False)
    for epoch in range(3):
        for x, y in train_loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            for x, y in eval_loader:
                model(x)
"""

SEEN = {
    "evaluation_branch_of_a_loader_builder": "benchmarks/fresh/lint15 j02_news_topic_bigru.py (tuning half: make_loader(ds, cfg, train) returns its unshuffled evaluation loader only when train is False; one other finding at its first run)",
    "self_attribute_in_trainer_class": "microsoft/nni#4692 (SinglePathTrainer: self.train_loader = DataLoader(dataset_train, batch_size=..., num_workers=...) without shuffle; fixed in PR #4696)",
    "default_shuffle_in_train_loop": "lucidrains/byol-pytorch#23 (train_loader = DataLoader(ds, batch_size=BATCH_SIZE, num_workers=NUM_WORKERS) in examples/lightning/train.py; fixed to shuffle=True)",
    "explicit_false_passed_to_train_function": "joaoamcarvalho/mpd-public#6 and MarkFzp/act-plus-plus#50 (the training DataLoader without shuffle=True)",
    "distributed_sampler": "NVIDIA/waveglow#145 and zzangjinsun/NLSPN_ECCV20#24 (shuffle=False on purpose: the DistributedSampler shuffles)",
}
NEAR_MISS["one_epoch_function_for_train_and_eval"] = """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

def run_epoch(model, loader, optimizer, mode):
    model.train() if mode == "train" else model.eval()
    total = 0.0
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        if mode == "train":
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total

def main(train_set, x_val, y_val):
    model = nn.Linear(3, 1)
    opt = torch.optim.Adam(model.parameters())
    train_dl = DataLoader(train_set, batch_size=32, shuffle=True)
    valid_dl = DataLoader(TensorDataset(x_val, y_val), batch_size=16, shuffle=False)
    for epoch in range(10):
        run_epoch(model, train_dl, opt, mode="train")
        with torch.no_grad():
            run_epoch(model, valid_dl, None, mode="valid")
"""
SEEN["one_epoch_function_for_train_and_eval"] = (
    "facebookresearch/fairseq examples/emotion_conversion/emotion_models/pitch_predictor.py (run_epoch(model, "
    "valid_dl, None, ..., mode='valid'): a tuning-half finding, the step behind `if mode == 'train'`)"
)
PITFALL["returned_by_a_builder_augmenting_dataset"] = """
import random
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
class Clips(Dataset):
    def __init__(self, waves, labels, augment=False):
        self.waves, self.labels, self.augment = waves, labels, augment
    def __len__(self):
        return len(self.waves)
    def __getitem__(self, idx):
        wav = self.waves[idx]
        if self.augment:
            wav = torch.roll(wav, shifts=random.randint(-1600, 1600))
        return wav, self.labels[idx]
def build_loaders(train, val, batch_size=128):
    train_loader = DataLoader(Clips(*train, augment=True), batch_size=batch_size, pin_memory=True)
    val_loader = DataLoader(Clips(*val), batch_size=256)
    return train_loader, val_loader
def main(train, val):
    model = nn.Linear(16000, 12)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader, val_loader = build_loaders(train, val)
    for x, y in train_loader:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
SEEN["returned_by_a_builder_augmenting_dataset"] = (
    "a data module's build_loaders() returning an unshuffled training loader over an augmenting dataset "
    "(the spelling of fresh set 3's held-out script u03, read after its scoring; microsoft/nni#4692)"
)
NEAR_MISS["returned_after_being_replaced"] = """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
def init_training(engine, x, y):
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data_loader = DataLoader(TensorDataset(x, y), batch_size=64)
    model, optimizer, data_loader = engine.make_private(module=model, optimizer=optimizer, data_loader=data_loader)
    return model, optimizer, data_loader
def main(engine, x, y):
    model, optimizer, loader = init_training(engine, x, y)
    for xb, yb in loader:
        loss = nn.functional.cross_entropy(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
SEEN["returned_after_being_replaced"] = "opacus examples/fsdp_example.py (the loader returned is make_private's Poisson-sampled one; round 2's tuning half)"
NEAR_MISS["one_run_function_steps_only_when_handed_an_optimizer"] = """
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
def run(loader, model, optimizer=None):
    training = optimizer is not None
    model.train(training)
    with torch.set_grad_enabled(training):
        for x, y in loader:
            loss = F.mse_loss(model(x), y)
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
def main(model, x, y, vx, vy):
    train_loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    val_loader = DataLoader(TensorDataset(vx, vy), batch_size=256)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(10):
        run(train_loader, model, optimizer)
        run(val_loader, model)
"""
SEEN["one_run_function_steps_only_when_handed_an_optimizer"] = "benchmarks/fresh/lint2/t10_molecule_mpnn.py (a read script: run() steps only when training = optimizer is not None; a wrong finding met in this round's check of the earlier sets)"

# One loader-building helper for training and evaluation, handed a sampler only when an option asks for one
# (fresh set 8's tuning half, z08: --balanced off by default, so the training loader neither samples nor shuffles).
_HELPER = """
import argparse
import torch
from torch.utils.data import DataLoader, RandomSampler, WeightedRandomSampler
from torchvision import datasets
def make_loader(ds, batch_size, sampler=None):
    return DataLoader(ds, batch_size=batch_size, sampler=sampler, num_workers=4)
def main():
    p = argparse.ArgumentParser()
    p.add_argument("--balanced", action="store_true")
    p.add_argument("--no-random", action="store_true")
    args = p.parse_args()
    train_ds = datasets.ImageFolder("data/train")
    val_ds = datasets.ImageFolder("data/val")
    sampler = {sampler}
    train_dl = make_loader(train_ds, 64, sampler=sampler)
    val_dl = make_loader(val_ds, 256)
    model = torch.nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in train_dl:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
"""
PITFALL["helper_loader_sampler_only_behind_an_option"] = _HELPER.format(
    sampler="WeightedRandomSampler(torch.ones(len(train_ds)), len(train_ds)) if args.balanced else None"
)
NEAR_MISS["helper_loader_random_sampler_by_default"] = _HELPER.format(
    sampler="None if args.no_random else RandomSampler(train_ds)"
)
NEAR_MISS["helper_loader_given_a_sampler"] = _HELPER.format(sampler="RandomSampler(train_ds)")
SEEN["helper_loader_sampler_only_behind_an_option"] = "benchmarks/fresh/lint8 z08_galaxy_morphology_cnn.py (tuning half)"
_SPLIT = """
import torch
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
def fit(features, scores, epochs, seed):
    f_train, f_valid, p_train, p_valid = train_test_split(features, scores, test_size=0.2{shuffle})
    loader = DataLoader(TensorDataset(torch.tensor(f_train), torch.tensor(p_train)), batch_size=64)
    model = nn.Linear(16, 1)
    opt = torch.optim.Adam(model.parameters())
    for _ in range(epochs):
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
"""
NEAR_MISS["rows_already_shuffled_by_train_test_split"] = _SPLIT.format(shuffle=", random_state=seed")
PITFALL["rows_split_in_order"] = _SPLIT.format(shuffle=", shuffle=False")
SEEN["rows_already_shuffled_by_train_test_split"] = (
    "deepod deepod/model_selection/fmms.py:89-98 (round 12's held-out half, read harmless: a TensorDataset of "
    "train_test_split's rows, already a random permutation, in a DataLoader without shuffle)"
)
SEEN["rows_split_in_order"] = "the same split with shuffle=False (a time series kept in order): stored order"
_PER_CLASS = """
from pathlib import Path
import numpy as np
import torch
from torch.utils.data import ConcatDataset, DataLoader, IterableDataset, TensorDataset
class Stream(IterableDataset):
    def __init__(self, parts):
        self.parts = parts
    def __iter__(self):
        for part in self.parts:
            yield from part
def class_folder_dataset(root):
    files = sorted(Path(root).glob("*.npy"))
    parts = []
    for label, f in enumerate(files):
        feats = torch.from_numpy(np.load(f).astype(np.float32))
        parts.append(TensorDataset(feats, torch.full((len(feats),), label, dtype=torch.long)))
    return {made}, [f.stem for f in files]
def main(root, model, optimizer, loss_fn):
    labelled, classes = class_folder_dataset(root)
    loader = DataLoader(labelled, batch_size=256{shuffle})
    for epoch in range(10):
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
"""
PITFALL["per_class_sets_concatenated_by_a_function"] = _PER_CLASS.format(made="ConcatDataset(parts)", shuffle="")
NEAR_MISS["per_class_sets_concatenated_and_shuffled"] = _PER_CLASS.format(made="ConcatDataset(parts)", shuffle=", shuffle=True")
NEAR_MISS["per_class_sets_streamed_by_a_function"] = _PER_CLASS.format(made="Stream(parts)", shuffle="")
SEEN["per_class_sets_concatenated_by_a_function"] = (
    "fresh lint set 17 g14 (a ConcatDataset of one TensorDataset per class file, returned with the class names by "
    "a function of the script and unpacked; its held-out half, missed at its scored first run)"
)
SEEN["per_class_sets_concatenated_and_shuffled"] = "the same loader with shuffle=True"
SEEN["per_class_sets_streamed_by_a_function"] = "the same function returning an IterableDataset, whose order shuffle does not set"

# fresh set 18: the loader's settings spread from a dict the function builds (``**common``); its keys are read
_SPREAD = """
import torch
from torch.utils.data import DataLoader, Dataset
class Clips(Dataset):
    def __init__(self, items):
        self.items = items
    def __len__(self):
        return len(self.items)
    def __getitem__(self, i):
        return self.items[i]
def make_loaders(items, batch_size, workers):
    common = {common}
{extra}    train = DataLoader(Clips(items), drop_last=True, **common)
    return train
def fit(model, items, opt, criterion):
    train = make_loaders(items, 64, 4)
    for epoch in range(10):
        for x, y in train:
            opt.zero_grad()
            criterion(model(x), y).backward()
            opt.step()
"""
PITFALL["settings_spread_from_a_dict"] = _SPREAD.format(
    common="dict(batch_size=batch_size, num_workers=workers, pin_memory=True)", extra=""
)
PITFALL["settings_spread_from_a_dict_literal"] = _SPREAD.format(
    common='{"batch_size": batch_size, "num_workers": workers}', extra=""
)
NEAR_MISS["spread_dict_shuffles"] = _SPREAD.format(common="dict(batch_size=batch_size, shuffle=True)", extra="")
NEAR_MISS["spread_dict_given_shuffle_later"] = _SPREAD.format(
    common="dict(batch_size=batch_size)", extra='    common["shuffle"] = True\n'
)
NEAR_MISS["spread_dict_of_a_parameter"] = """
import torch
from torch.utils.data import DataLoader
def make_loader(dataset, loader_args):
    return DataLoader(dataset, **loader_args)
def fit(model, dataset, opt, criterion, loader_args):
    train = make_loader(dataset, loader_args)
    for x, y in train:
        opt.zero_grad()
        criterion(model(x), y).backward()
        opt.step()
"""

# fresh set 19 (held-out, after its scoring): shuffle given by a command-line flag that is off unless passed
# (store_true, no default); a store_false flag is on unless passed
_FLAG = """
import argparse
import torch
from torch.utils.data import DataLoader, Dataset
class Headlines(Dataset):
    def __init__(self, rows):
        self.rows = rows
    def __len__(self):
        return len(self.rows)
    def __getitem__(self, i):
        return self.rows[i]
def main(rows, model, criterion):
    ap = argparse.ArgumentParser()
    ap.add_argument({flag})
    args = ap.parse_args()
    train_dl = DataLoader(Headlines(rows), batch_size=64, shuffle=args.shuffle)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(6):
        for x, y in train_dl:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
"""
PITFALL["shuffle_flag_off_by_default"] = _FLAG.format(flag='"--shuffle", action="store_true"')
NEAR_MISS["shuffle_flag_on_by_default"] = _FLAG.format(flag='"--no-shuffle", dest="shuffle", action="store_false"')
NEAR_MISS["shuffle_flag_defaulting_to_true"] = _FLAG.format(flag='"--shuffle", type=int, default=1')
