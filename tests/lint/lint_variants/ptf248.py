"""PTF248 (split-after-augmentation-leaks): a dataset augmented (copies, or a random transform) before its split."""

PITFALL = {
    "jittered_copies_then_random_split": """
import torch
from torch.utils.data import TensorDataset, random_split
x, y = torch.randn(400, 8), torch.randint(0, 2, (400,))
x_all = torch.cat([x, x + 0.01 * torch.randn_like(x)])
y_all = torch.cat([y, y])
train, test = random_split(TensorDataset(x_all, y_all), [600, 200])
""",
    "augment_function_returns_doubled_set": """
import torch
from torch.utils.data import TensorDataset, random_split
def augment(images, labels):
    flipped = images.flip(-1)
    return torch.cat((images, flipped)), torch.cat((labels, labels))
def make_splits(images, labels):
    xa, ya = augment(images, labels)
    full = TensorDataset(xa, ya)
    n_val = len(full) // 5
    return random_split(full, [len(full) - n_val, n_val])
""",
    "dihedral_variants_cached_then_split": """
import torch
from torch.utils.data import DataLoader, TensorDataset, random_split
def dihedral(x, y):
    xs, ys = [], []
    for k in range(4):
        for flip in (False, True):
            xr, yr = torch.rot90(x, k, dims=(-2, -1)), torch.rot90(y, k, dims=(-2, -1))
            if flip:
                xr, yr = xr.flip(-1), yr.flip(-1)
            xs.append(xr)
            ys.append(yr)
    return torch.cat(xs), torch.cat(ys)
def dataset(x, y):
    xa, ya = dihedral(x, y)
    return TensorDataset(xa, ya)
def loaders(x, y):
    full = dataset(x, y)
    n_val = int(0.2 * len(full))
    train, val = random_split(full, [len(full) - n_val, n_val])
    return DataLoader(train, batch_size=16, shuffle=True), DataLoader(val, batch_size=16)
""",
    "concat_plain_and_augmented_folders": """
from torch.utils.data import ConcatDataset, DataLoader, random_split
from torchvision import datasets, transforms
plain = transforms.Compose([transforms.Resize(64), transforms.ToTensor()])
flipped = transforms.Compose([transforms.Resize(64), transforms.RandomHorizontalFlip(1.0), transforms.ToTensor()])
data = ConcatDataset([datasets.ImageFolder("data/train", plain), datasets.ImageFolder("data/train", flipped)])
train_set, val_set = random_split(data, [0.8, 0.2])
val_loader = DataLoader(val_set, batch_size=64)
""",
    "random_transform_dataset_split_for_validation": """
import torch
from torch.utils.data import DataLoader, random_split
from torchvision import datasets, transforms
tf = transforms.Compose([
    transforms.RandomResizedCrop(224),
    transforms.RandomHorizontalFlip(),
    transforms.ColorJitter(0.3, 0.3, 0.3),
    transforms.ToTensor(),
])
full = datasets.ImageFolder("data/flowers", transform=tf)
train_ds, val_ds = random_split(full, [0.9, 0.1], generator=torch.Generator().manual_seed(0))
train_dl = DataLoader(train_ds, batch_size=32, shuffle=True)
val_dl = DataLoader(val_ds, batch_size=64)
""",
    "cifar_with_random_crop_split_in_function": """
from torch.utils.data import random_split
from torchvision import datasets
from torchvision.transforms import v2 as T
def get_data(root):
    aug = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor()])
    cifar = datasets.CIFAR10(root, train=True, download=True, transform=aug)
    train, valid = random_split(cifar, [45000, 5000])
    return train, valid
""",
}

NEAR_MISS = {
    "split_first_then_augment": """
import torch
from torch.utils.data import TensorDataset, random_split
def augment(x, y):
    return torch.cat([x, x + 0.01 * torch.randn_like(x)]), torch.cat([y, y])
def tensors(subset):
    xs, ys = zip(*[subset[i] for i in range(len(subset))])
    return torch.stack(xs), torch.stack(ys)
x, y = torch.randn(400, 8), torch.randint(0, 2, (400,))
train, test = random_split(TensorDataset(x, y), [300, 100])
train_x, train_y = augment(*tensors(train))
""",
    "separate_datasets_with_their_transforms": """
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
train_tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor()])
val_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()])
train_set = datasets.ImageFolder("data/train", transform=train_tf)
val_set = datasets.ImageFolder("data/val", transform=val_tf)
train_dl = DataLoader(train_set, batch_size=64, shuffle=True)
val_dl = DataLoader(val_set, batch_size=128)
""",
    "indices_of_the_split_index_an_eval_copy": """
from torch.utils.data import Subset, random_split
from torchvision import datasets, transforms
aug = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.ToTensor()])
plain = transforms.ToTensor()
train_full = datasets.CIFAR10("data", train=True, transform=aug)
eval_full = datasets.CIFAR10("data", train=True, transform=plain)
train_part, val_part = random_split(train_full, [45000, 5000])
val_set = Subset(eval_full, val_part.indices)
train_set = Subset(train_full, train_part.indices)
""",
    "deterministic_transform_split": """
from torch.utils.data import random_split
from torchvision import datasets, transforms
tf = transforms.Compose([transforms.Resize(64), transforms.CenterCrop(64), transforms.ToTensor()])
full = datasets.ImageFolder("data/all", transform=tf)
train_ds, val_ds = random_split(full, [0.8, 0.2])
""",
    "feature_concat_along_columns": """
import torch
from torch.utils.data import TensorDataset, random_split
x = torch.randn(100, 4)
features = torch.cat([x, x ** 2], dim=1)
train, val = random_split(TensorDataset(features, torch.randn(100)), [80, 20])
""",
    "two_sources_concatenated": """
import torch
from torch.utils.data import TensorDataset, random_split
site_a, site_b = torch.randn(50, 3), torch.randn(70, 3)
x = torch.cat([site_a, site_b])
train, val = random_split(TensorDataset(x, torch.randn(120)), [100, 20])
""",
}

SEEN = {
    "jittered_copies_then_random_split": (
        "cases/data/split_after_augmentation_leaks.py's source: Humbatova et al. (ICSE 2020), incorrect "
        "train/test split; stats.stackexchange 549061 (split first, then augment the training part)"
    ),
    "dihedral_variants_cached_then_split": (
        "benchmarks/fresh/lint4/v17_cell_seg_data.py (a tuning-half script: eight dihedral variants of every "
        "crop concatenated and cached, then random_split into train and validation)"
    ),
    "random_transform_dataset_split_for_validation": (
        "discuss.pytorch.org 'Data Transformation for Training and Validation Data' (random transforms belong to "
        "training only) and codegenes.net 'PyTorch datasets have no validation set' (random_split of one "
        "dataset with one transform)"
    ),
    "separate_datasets_with_their_transforms": (
        "benchmarks/fresh/lint4/v01_leaf_disease_finetune.py (a tuning-half script: train and val folders, each "
        "with its own transform)"
    ),
}

# fresh set 7's tuning half (a miss): minority rows oversampled (copied, jittered) into the arrays before
# scikit-learn's train_test_split
PITFALL["oversampled_before_train_test_split"] = """
import numpy as np
from sklearn.model_selection import train_test_split

def oversample(X, y, rng):
    pos = np.flatnonzero(y == 1)
    picks = rng.choice(pos, size=(y == 0).sum() - len(pos), replace=True)
    extra = X[picks].copy()
    extra += 0.01 * rng.standard_normal(extra.shape)
    return np.vstack([X, extra]), np.concatenate([y, np.ones(len(picks), dtype=y.dtype)])

def prepare(X, y, rng):
    X_bal, y_bal = oversample(X, y, rng)
    return train_test_split(X_bal, y_bal, test_size=0.2, stratify=y_bal)
"""
NEAR_MISS["class_partitions_joined_then_split"] = """
import numpy as np
from sklearn.model_selection import train_test_split

def prepare(X, y):
    pos = X[y == 1]
    neg = X[y == 0]
    X_sorted = np.vstack([pos, neg])
    y_sorted = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
    return train_test_split(X_sorted, y_sorted, test_size=0.2, stratify=y_sorted)
"""
NEAR_MISS["oversampled_after_train_test_split"] = """
import numpy as np
from sklearn.model_selection import train_test_split

def oversample(X, y, rng):
    pos = np.flatnonzero(y == 1)
    picks = rng.choice(pos, size=(y == 0).sum() - len(pos), replace=True)
    return np.vstack([X, X[picks]]), np.concatenate([y, np.ones(len(picks), dtype=y.dtype)])

def prepare(X, y, rng):
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, stratify=y)
    X_tr, y_tr = oversample(X_tr, y_tr, rng)
    return X_tr, X_te, y_tr, y_te
"""
SEEN["oversampled_before_train_test_split"] = (
    "benchmarks/fresh/lint7 y15_churn_tabular_oversample.py (a missed planted pitfall); "
    "https://imbalanced-learn.org/stable/common_pitfalls.html (resampling before the split leaks: the "
    "duplicated minority samples end up on both sides)"
)

# Perturbed copies concatenated in a helper, the whole then rescaled by an elementwise function before the
# split (fresh set 8's held-out half, z12: missed at its first score).
_RESCALED = """
import numpy as np
from sklearn.model_selection import train_test_split
def minmax(x):
    lo, hi = x.min(axis=1, keepdims=True), x.max(axis=1, keepdims=True)
    return (x - lo) / (hi - lo)
def expand(spectra, labels, copies, rng):
    out, out_y = [spectra], [labels]
    for _ in range(copies):
        out.append(spectra * rng.uniform(0.9, 1.1, (len(spectra), 1)) + rng.normal(0, 0.01, spectra.shape))
        out_y.append(labels)
    return np.concatenate(out), np.concatenate(out_y)
rng = np.random.default_rng(0)
X, y = np.load("spectra.npy"), np.load("labels.npy")
{made}
X_all = minmax(X_all)
X_train, X_test, y_train, y_test = train_test_split(X_all, y_all, test_size=0.2, stratify=y_all)
"""
PITFALL["copies_rescaled_before_the_split"] = _RESCALED.format(made="X_all, y_all = expand(minmax(X), y, 5, rng)")
NEAR_MISS["rescaled_without_copies"] = _RESCALED.format(made="X_all, y_all = X, y")
SEEN["copies_rescaled_before_the_split"] = "benchmarks/fresh/lint8 z12_raman_spectra_classifier.py (held-out half, after its first score)"
