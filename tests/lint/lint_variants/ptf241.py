"""PTF241 (target-shape-broadcast): an elementwise regression loss between (N, 1) predictions and (N,) targets."""

PITFALL = {
    "csv_column_through_tensor_dataset": """
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

def fit(path):
    frame = pd.read_csv(path).dropna()
    y = frame.pop("price").to_numpy(dtype="float32")
    x = frame.to_numpy(dtype="float32")
    loader = DataLoader(TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), batch_size=32, shuffle=True)
    net = nn.Sequential(nn.Linear(x.shape[1], 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.Adam(net.parameters())
    loss_fn = nn.MSELoss()
    for xb, yb in loader:
        opt.zero_grad()
        loss = loss_fn(net(xb), yb)
        loss.backward()
        opt.step()
""",
    "hand_written_mean_square": """
import torch
from torch import nn

x = torch.tensor([[1.0, 2.0], [1.0, 3.0], [1.0, 7.0], [1.0, 9.0]])
y = torch.tensor([2.0, 3.0, 7.0, 9.0])
model = nn.Linear(2, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for i in range(1000):
    out = model(x)
    loss = torch.mean((out - y) ** 2)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
    "model_class_with_a_scalar_head": """
import torch
import torch.nn.functional as F
from torch import nn

class Regressor(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.hidden = nn.Linear(d, 32)
        self.out = nn.Linear(32, 1)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))

def step(net, opt):
    x = torch.randn(64, 8)
    y = torch.randn(64)
    loss = F.l1_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

net = Regressor(8)
step(net, torch.optim.SGD(net.parameters(), lr=0.1))
""",
    "sigmoid_head_smooth_l1": """
import torch
import torch.nn as nn

head = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
criterion = nn.SmoothL1Loss()

def train_step(features, optimizer):
    scores = torch.rand(features.size(0))
    pred = head(features)
    loss = criterion(pred, scores)
    loss.backward()
    optimizer.step()
""",
    "arguments_the_other_way_round": """
import torch
from torch import nn

model = nn.Linear(3, 1)
targets = torch.tensor([0.5, 1.5, 2.5, 3.5])
inputs = torch.randn(4, 3)
loss = nn.L1Loss()(targets, model(inputs))
loss.backward()
""",
    "enumerate_loader_huber": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

features, labels = torch.randn(256, 5), torch.randn(256)
train_loader = DataLoader(TensorDataset(features, labels), batch_size=16)
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1)).to("cpu")
opt = torch.optim.SGD(model.parameters(), lr=0.01)
crit = nn.HuberLoss(delta=1.0)
for step, (xb, yb) in enumerate(train_loader):
    pred = model(xb).float()
    loss = crit(pred, yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
}

NEAR_MISS = {
    "prediction_squeezed": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64)), batch_size=8)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
loss_fn = nn.MSELoss()
for xb, yb in loader:
    loss = loss_fn(model(xb).squeeze(1), yb)
    loss.backward()
""",
    "target_unsqueezed": """
import torch
import torch.nn.functional as F
from torch import nn

model = nn.Linear(2, 1)
x = torch.randn(16, 2)
y = torch.randn(16)
loss = F.mse_loss(model(x), y.unsqueeze(1))
loss.backward()
""",
    "target_viewed_as_a_column": """
import torch
from torch import nn

model = nn.Linear(2, 1)
x = torch.randn(16, 2)
y = torch.tensor([float(i) for i in range(16)])
pred = model(x)
loss = ((pred - y.view(-1, 1)) ** 2).mean() + nn.L1Loss()(pred, y.view_as(pred))
loss.backward()
""",
    "several_outputs_several_targets": """
import torch
from torch import nn

model = nn.Linear(5, 3)
x, y = torch.randn(8, 5), torch.randn(8, 3)
loss = nn.MSELoss()(model(x), y)
loss.backward()
""",
    "column_targets_from_a_literal": """
import torch
from torch import nn

model = nn.Linear(1, 1)
X = torch.tensor([[1.0], [2.0], [3.0], [4.0]])
Y = torch.tensor([[2.0], [4.0], [6.0], [8.0]])
loss = nn.MSELoss()(model(X), Y)
loss.backward()
""",
    "flattened_prediction_by_hand": """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
x = torch.randn(10, 3)
y = torch.randn(10)
loss = (net(x).view(-1) - y).abs().mean()
loss.backward()
""",
}

PREVIEW = {
    "target_of_an_unknown_loader": """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(13, 32), nn.ReLU(), nn.Linear(32, 1))
criterion = nn.MSELoss()

def train(loader, opt):
    for x, y in loader:
        loss = criterion(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
}

SEEN = {
    "target_of_an_unknown_loader": "https://github.com/Photon-AI-Research/NeuralSolvers/issues/20 (nn.MSELoss of a model's [batch_size, 1] output against a [batch_size] target from the dataset; fixed with model(x).reshape(-1))",
    "hand_written_mean_square": "PyTorch forum thread 'Simple linear regression in PyTorch' (out = x.mm(weights).add_(bias) is (4, 1), y = Tensor([2., 3., 7., 9.]) is (4,): torch.mean((out - y)**2) averages a (4, 4) table; fixed with out.view(-1))",
    "csv_column_through_tensor_dataset": "https://github.com/deepset-ai/FARM/issues/229 (a regression head RegressionHead([768, 1]) against one label per example: 'Using a target size ... different to the input size', squeezed logits as the fix); the CSV column spelling of benchmarks/fresh/lint/s15",
    "target_unsqueezed": "duoke360.com 'PyTorch ValueError: target size (torch.Size([16])) must be the same as input size (torch.Size([16, 1]))' (nn.MSELoss()(outputs, labels.unsqueeze(1)) or outputs.squeeze(): the fixes)",
}

# fresh set 6's tuning half (a miss): the targets come from a Dataset class of the same file, one
# number per sample, which the DataLoader batches to (N,) against the model's (N, 1)
PITFALL["dataset_class_yields_one_number_per_sample"] = """
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

class Houses(Dataset):
    def __init__(self, df):
        self.x = df[["rooms", "area", "age"]].to_numpy("float32")
        self.y = df["price"].values
    def __len__(self):
        return len(self.y)
    def __getitem__(self, idx):
        return torch.tensor(self.x[idx]), torch.tensor(self.y[idx], dtype=torch.float32)

def train(df):
    model = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 1))
    loss_fn = nn.MSELoss()
    opt = torch.optim.Adam(model.parameters())
    for xb, yb in DataLoader(Houses(df), batch_size=64, shuffle=True):
        loss = loss_fn(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
PITFALL["dataset_class_target_is_a_column_of_a_table"] = """
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
FEATURES = ["load", "temp", "humidity"]
WINDOW = 24

class Windows(Dataset):
    def __init__(self, frame, stats):
        values = frame[FEATURES].to_numpy(np.float32)
        self.x = (values - stats["mean"]) / stats["std"]
        self.y = self.x[:, 0]
    def __len__(self):
        return len(self.x) - WINDOW
    def __getitem__(self, i):
        return torch.from_numpy(self.x[i : i + WINDOW].reshape(-1)), torch.tensor(self.y[i + WINDOW])

def train(frame, stats):
    model = nn.Linear(WINDOW * len(FEATURES), 1)
    criterion = nn.L1Loss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for window, target in DataLoader(Windows(frame, stats), batch_size=256):
        loss = criterion(model(window), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
NEAR_MISS["dataset_class_yields_a_one_element_row"] = """
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

class Houses(Dataset):
    def __init__(self, df):
        self.x = df[["rooms", "area", "age"]].to_numpy("float32")
        self.y = df["price"].values
    def __len__(self):
        return len(self.y)
    def __getitem__(self, idx):
        return torch.tensor(self.x[idx]), torch.tensor([self.y[idx]], dtype=torch.float32)

def train(df):
    model = nn.Linear(3, 1)
    for xb, yb in DataLoader(Houses(df), batch_size=64, shuffle=True):
        loss = nn.functional.mse_loss(model(xb), yb)
        loss.backward()
"""
NEAR_MISS["dataset_class_read_unbatched"] = """
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

class Houses(Dataset):
    def __init__(self, df):
        self.x = df[["rooms", "area", "age"]].to_numpy("float32")
        self.y = df["price"].values
    def __len__(self):
        return len(self.y)
    def __getitem__(self, idx):
        return torch.tensor(self.x[idx]), torch.tensor(self.y[idx], dtype=torch.float32)

def train(df):
    model = nn.Linear(3, 1)
    for x, y in DataLoader(Houses(df), batch_size=None, shuffle=True):
        loss = (model(x) - y).pow(2).mean()  # one sample: (1,) against a number
        loss.backward()
"""
SEEN["dataset_class_yields_one_number_per_sample"] = (
    "https://github.com/ZhaoZhibin/UDTL/issues/3 (a custom dataset's targets (128,) against (128, 1) "
    "predictions) and https://github.com/timeseriesAI/tsai/issues/22 (the same warning in a regression: "
    "'my model is not training')"
)
SEEN["dataset_class_target_is_a_column_of_a_table"] = (
    "benchmarks/fresh/lint6 x07_energy_load_forecast.py (a missed planted pitfall: the normalised load column "
    "of the feature table as the per-window target)"
)

# fresh set 7's held-out half (a miss at its first score): the loss is a helper of the file, handed the
# model's (B, 1) output and the (B,) targets of a Dataset that reads one column of a feature table
PITFALL["loss_helper_given_a_datasets_column_targets"] = """
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset
FEATURES = ["wind_speed", "direction", "power"]

class Windows(Dataset):
    def __init__(self, frame, history=48):
        values = frame[FEATURES].to_numpy(np.float32)
        self.x = torch.from_numpy(values)
        self.y = torch.from_numpy(values[:, FEATURES.index("power")].copy())
        self.history = history
    def __len__(self):
        return len(self.x) - self.history
    def __getitem__(self, i):
        return self.x[i : i + self.history], self.y[i + self.history - 1]

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(len(FEATURES), 64, batch_first=True)
        self.out = nn.Linear(64, 1)
    def forward(self, x):
        _, h = self.gru(x)
        return self.out(h[-1])

def forecast_loss(pred, target):
    return F.mse_loss(pred, target)

def train(frame):
    model = Net()
    opt = torch.optim.Adam(model.parameters())
    for xb, yb in DataLoader(Windows(frame), batch_size=64, shuffle=True):
        loss = forecast_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
NEAR_MISS["loss_helper_given_matching_shapes"] = """
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset
FEATURES = ["wind_speed", "direction", "power"]

class Windows(Dataset):
    def __init__(self, frame, history=48):
        values = frame[FEATURES].to_numpy(np.float32)
        self.x = torch.from_numpy(values)
        self.y = torch.from_numpy(values[:, FEATURES.index("power")].copy())
        self.history = history
    def __len__(self):
        return len(self.x) - self.history
    def __getitem__(self, i):
        return self.x[i : i + self.history], self.y[i + self.history - 1]

def forecast_loss(pred, target):
    return F.mse_loss(pred, target)

def train(frame, model, opt):
    for xb, yb in DataLoader(Windows(frame), batch_size=64, shuffle=True):
        loss = forecast_loss(model(xb).squeeze(1), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
SEEN["loss_helper_given_a_datasets_column_targets"] = (
    "benchmarks/fresh/lint7 y04_wind_power_forecast.py (missed at the held-out half's first score, 8 of 14: "
    "tuning material since); the helper-loss spelling of https://github.com/timeseriesAI/tsai/issues/22"
)

# The loader handed to an epoch function, its targets one number per window of a Dataset class fed from a
# column of a normalised table (fresh set 8's held-out half, z09: missed at its first score).
_WINDOWS = """
import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
FEATURES = ["load", "temp", "hour"]
class Windows(Dataset):
    def __init__(self, values, target, history):
        self.x = torch.as_tensor(values, dtype=torch.float32)
        self.y = torch.as_tensor(target, dtype=torch.float32)
        self.history = history
    def __len__(self):
        return len(self.x) - self.history
    def __getitem__(self, i):
        end = i + self.history
        return self.x[i:end], self.y[end]
class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(len(FEATURES), 32, batch_first=True)
        self.proj = nn.Linear(32, 1)
    def forward(self, x):
        out, _ = self.lstm(x)
        return self.proj(out[:, -1]){squeeze}
def run_epoch(model, loader, criterion, opt):
    for x, y in loader:
        loss = criterion(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
def main(path):
    values = pd.read_csv(path)[FEATURES].to_numpy(dtype=np.float32)
    values = (values - values.mean(axis=0)) / values.std(axis=0)
    target = values[:, 0]
    loader = DataLoader(Windows(values, target, 24), batch_size=64, shuffle=True)
    model = Forecaster()
    run_epoch(model, loader, nn.HuberLoss(), torch.optim.Adam(model.parameters()))
"""
PITFALL["loader_handed_to_an_epoch_function"] = _WINDOWS.format(squeeze="")
NEAR_MISS["epoch_function_prediction_squeezed"] = _WINDOWS.format(squeeze=".squeeze(-1)")
SEEN["loader_handed_to_an_epoch_function"] = "benchmarks/fresh/lint8 z09_electricity_load_forecast.py (held-out half, after its first score)"

# Per-store arrays kept in a list the Dataset fills with appends, one number cut from one of them per window
# (fresh set 5's w08, missed since its first score).
_SERIES = """
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
FEATURES = ["units", "price", "promo"]
class Windows(Dataset):
    def __init__(self, df):
        self.series = []
        for _, g in df.groupby("store_id"):
            self.series.append(g[FEATURES].to_numpy(dtype=np.float32))
        self.index = [(s, t) for s, arr in enumerate(self.series) for t in range(len(arr) - 28)]
    def __len__(self):
        return len(self.index)
    def __getitem__(self, i):
        s, t = self.index[i]
        arr = self.series[s]
        return torch.from_numpy(arr[t : t + 28]), torch.tensor(arr[t + 28, 0])
class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(len(FEATURES), 64, batch_first=True)
        self.head = nn.Linear(64, 1)
    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1]){squeeze}
def fit(df):
    model = Forecaster()
    opt = torch.optim.Adam(model.parameters())
    for x, y in DataLoader(Windows(df), batch_size=256, shuffle=True):
        loss = (model(x) - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
PITFALL["target_from_a_list_of_appended_arrays"] = _SERIES.format(squeeze="")
NEAR_MISS["list_of_appended_arrays_prediction_squeezed"] = _SERIES.format(squeeze=".squeeze(-1)")
SEEN["target_from_a_list_of_appended_arrays"] = "benchmarks/fresh/lint5 w08_sales_lstm_forecast.py (tuning material)"

PITFALL["a_field_of_a_collated_dataclass_batch"] = """
import torch
from dataclasses import dataclass
from torch import nn
from torch.utils.data import DataLoader, Dataset

@dataclass
class Batch:
    x: torch.Tensor
    y: torch.Tensor

    def to(self, device):
        return Batch(self.x.to(device), self.y.to(device))

class Molecules(Dataset):
    def __init__(self, feats, gaps):
        self.feats, self.gaps = feats, gaps
    def __len__(self):
        return len(self.gaps)
    def __getitem__(self, i):
        return self.feats[i], float(self.gaps[i])

def collate(items):
    xs, ys = [], []
    for x, y in items:
        xs.append(x)
        ys.append(y)
    return Batch(torch.stack(xs), torch.tensor(ys))

def train(feats, gaps, device):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
    opt = torch.optim.Adam(model.parameters())
    loader = DataLoader(Molecules(feats, gaps), batch_size=64, shuffle=True, collate_fn=collate)
    for b in loader:
        b = b.to(device)
        loss = nn.functional.mse_loss(model(b.x), b.y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
PITFALL["a_key_of_a_default_collated_dict_batch"] = """
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

class Houses(Dataset):
    def __init__(self, frame):
        self.x = torch.tensor(frame.drop(columns="price").values, dtype=torch.float32)
        self.y = frame["price"].values
    def __len__(self):
        return len(self.y)
    def __getitem__(self, i):
        return {"features": self.x[i], "price": torch.tensor(self.y[i], dtype=torch.float32)}

def train(frame):
    model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.Adam(model.parameters())
    criterion = nn.MSELoss()
    for batch in DataLoader(Houses(frame), batch_size=32, shuffle=True):
        loss = criterion(model(batch["features"]), batch["price"])
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
NEAR_MISS["a_field_of_a_collated_dataclass_batch_squeezed"] = """
import torch
from dataclasses import dataclass
from torch import nn
from torch.utils.data import DataLoader, Dataset

@dataclass
class Batch:
    x: torch.Tensor
    y: torch.Tensor

    def to(self, device):
        return Batch(self.x.to(device), self.y.to(device))

class Molecules(Dataset):
    def __init__(self, feats, gaps):
        self.feats, self.gaps = feats, gaps
    def __len__(self):
        return len(self.gaps)
    def __getitem__(self, i):
        return self.feats[i], float(self.gaps[i])

def collate(items):
    xs, ys = [], []
    for x, y in items:
        xs.append(x)
        ys.append(y)
    return Batch(torch.stack(xs), torch.tensor(ys))

def train(feats, gaps, device):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
    opt = torch.optim.Adam(model.parameters())
    loader = DataLoader(Molecules(feats, gaps), batch_size=64, shuffle=True, collate_fn=collate)
    for b in loader:
        b = b.to(device)
        loss = nn.functional.mse_loss(model(b.x).squeeze(-1), b.y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
NEAR_MISS["a_key_of_a_default_collated_dict_batch_one_column"] = """
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

class Houses(Dataset):
    def __init__(self, frame):
        self.x = torch.tensor(frame.drop(columns="price").values, dtype=torch.float32)
        self.y = frame["price"].values
    def __len__(self):
        return len(self.y)
    def __getitem__(self, i):
        return {"features": self.x[i], "price": torch.tensor([self.y[i]], dtype=torch.float32)}

def train(frame):
    model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.Adam(model.parameters())
    criterion = nn.MSELoss()
    for batch in DataLoader(Houses(frame), batch_size=32, shuffle=True):
        loss = criterion(model(batch["features"]), batch["price"])
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
SEEN["a_field_of_a_collated_dataclass_batch"] = (
    "fresh set 9's q16 (tuning half, read): a graph batch dataclass filled by a collate function, its y stacked from "
    "one number per molecule, under nn.MSELoss against a Linear(_, 1) readout; the Batch.to(device) dataclass as "
    "PyG-style code writes it"
)
SEEN["a_key_of_a_default_collated_dict_batch"] = (
    "the dict-sample Dataset of the PyTorch data tutorial (https://pytorch.org/tutorials/beginner/data_loading_tutorial.html: "
    "__getitem__ returns {'image': ..., 'landmarks': ...}, batched by the default collate) with a one-number target"
)
SEEN["a_field_of_a_collated_dataclass_batch_squeezed"] = SEEN["a_field_of_a_collated_dataclass_batch"]
SEEN["a_key_of_a_default_collated_dict_batch_one_column"] = SEEN["a_key_of_a_default_collated_dict_batch"]

# The model built by a helper of the file that fills a list of layers and unpacks it into nn.Sequential, its
# last layer a Linear(_, 1) added after the loop (fresh set 19's e27, missed at its held-out scoring: there
# the targets' shape is not shown, so it is reported only with --preview; here a named column shows it).
_BUILT = """
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
def build_mlp(n_in, hidden, dropout):
    layers = []
    for width in hidden:
        layers += [nn.Linear(n_in, width), nn.ReLU(), nn.Dropout(dropout)]
        n_in = width
    {head}
    return nn.Sequential(*layers)
def fit(path):
    frame = pd.read_csv(path)
    y = torch.tensor(frame["depth"].values, dtype=torch.float32)
    x = torch.tensor(frame.drop(columns=["depth"]).values, dtype=torch.float32)
    model = build_mlp(x.shape[1], [64, 32], 0.1)
    opt = torch.optim.Adam(model.parameters())
    for xb, yb in DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True):
        opt.zero_grad()
        nn.functional.l1_loss(model(xb), yb).backward()
        opt.step()
"""
PITFALL["scalar_head_appended_by_a_builder"] = _BUILT.format(head="layers.append(nn.Linear(n_in, 1))")
PITFALL["scalar_head_then_an_activation"] = _BUILT.format(head="layers += [nn.Linear(n_in, 1), nn.Softplus()]")
NEAR_MISS["builder_with_several_outputs"] = _BUILT.format(head="layers.append(nn.Linear(n_in, 3))")
NEAR_MISS["builder_whose_head_an_option_picks"] = _BUILT.format(
    head="if dropout:\n        layers.append(nn.Linear(n_in, 1))\n    else:\n        layers.append(nn.Linear(n_in, 2))"
)
NEAR_MISS["builder_whose_loop_adds_the_head"] = """
import torch
from torch import nn
def build_mlp(sizes):
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        layers.append(nn.Linear(a, b))
    return nn.Sequential(*layers)
def fit(x, y_col):
    y = torch.tensor(y_col, dtype=torch.float32).unsqueeze(1)
    model = build_mlp([8, 16, 1])
    loss = nn.MSELoss()(model(x), y)
    return loss
"""
SEEN["scalar_head_appended_by_a_builder"] = (
    "benchmarks/fresh/lint19 e27_snow_depth_regression.py (held-out half, missed at its first score)"
)
NEAR_MISS["builder_targets_given_their_column_axis"] = """
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
def build_mlp(n_in, widths):
    layers = []
    for w in widths:
        layers += [nn.Linear(n_in, w), nn.SiLU()]
        n_in = w
    layers.append(nn.Linear(n_in, 1))
    return nn.Sequential(*layers)
def load(path, name):
    npz = np.load(path)
    x, y = npz[f"x_{name}"].astype(np.float32), npz[f"y_{name}"].astype(np.float32)
    return TensorDataset(torch.from_numpy(x), torch.from_numpy(y).unsqueeze(1)), x.shape[1]
def fit(path):
    train_set, n_in = load(path, "train")
    model = build_mlp(n_in, [64, 64])
    opt = torch.optim.Adam(model.parameters())
    for x, y in DataLoader(train_set, batch_size=128, shuffle=True):
        opt.zero_grad()
        nn.MSELoss()(model(x), y).backward()
        opt.step()
"""
SEEN["builder_targets_given_their_column_axis"] = "benchmarks/fresh/lint11 s11_formation_energy_mlp.py (a correct loss, reported with --preview before the unsqueeze was read)"
