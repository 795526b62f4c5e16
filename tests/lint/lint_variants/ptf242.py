"""PTF242 (running-loss-averaged-wrong): an epoch's loss divided by a count that does not match what was summed."""

PITFALL = {
    "mean_losses_over_dataset_len": """
import torch
from torch import nn
def train_epoch(model, train_loader, optimizer):
    criterion = nn.CrossEntropyLoss()
    running_loss = 0.0
    for inputs, labels in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    return running_loss / len(train_loader.dataset)
""",
    "functional_loss_over_sample_counter": """
import torch.nn.functional as F
def evaluate(net, val_dl):
    total, seen = 0.0, 0
    for xb, yb in val_dl:
        total += F.mse_loss(net(xb), yb).item()
        seen += xb.size(0)
    return total / seen
""",
    "weighted_sum_over_batches": """
import torch
from torch import nn
def validate(model, loader, device):
    loss_fn = nn.L1Loss()
    epoch_loss = 0.0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = loss_fn(model(x), y)
            epoch_loss += loss.item() * x.shape[0]
    return epoch_loss / len(loader)
""",
    "weighted_by_batch_size_name_over_step_counter": """
import torch.nn.functional as F
def run(model, data_loader):
    total_loss, n_batches = 0.0, 0
    for batch, target in data_loader:
        batch_size = batch.size(0)
        loss = F.cross_entropy(model(batch), target)
        total_loss += loss.item() * batch_size
        n_batches += 1
    return total_loss / n_batches
""",
    "dataset_name_passed_to_loader": """
import torch
from torch.utils.data import DataLoader
def fit(model, train_set, opt):
    loader = DataLoader(train_set, batch_size=64, shuffle=True)
    crit = torch.nn.MSELoss(reduction="mean")
    train_loss = 0
    for x, y in loader:
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        train_loss += float(loss)
    train_loss /= len(train_set)
    return train_loss
""",
    "mean_of_means_with_small_last_batch": """
import torch
from torch.utils.data import DataLoader, TensorDataset
X = torch.randn(1000, 8)
Y = torch.randn(1000, 1)
loader = DataLoader(TensorDataset(X, Y), batch_size=64)
model = torch.nn.Linear(8, 1)
def val_loss():
    s = 0.0
    for x, y in loader:
        s += torch.nn.functional.mse_loss(model(x), y).item()
    return s / len(loader)
""",
}

NEAR_MISS = {
    "weighted_sum_over_dataset_len": """
import torch
from torch import nn
def train_epoch(model, train_loader, optimizer):
    criterion = nn.CrossEntropyLoss()
    running_loss = 0.0
    for inputs, labels in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item() * inputs.size(0)
    return running_loss / len(train_loader.dataset)
""",
    "sum_reduction_over_dataset_len": """
import torch.nn.functional as F
def test(model, test_loader):
    test_loss = 0
    for data, target in test_loader:
        output = model(data)
        test_loss += F.nll_loss(output, target, reduction="sum").item()
    test_loss /= len(test_loader.dataset)
    return test_loss
""",
    "mean_of_means_over_batches": """
import torch
import torch.nn.functional as F
@torch.no_grad()
def evaluate(net, val_loader):
    total = 0.0
    for xb, yb in val_loader:
        total += F.mse_loss(net(xb), yb).item()
    return total / len(val_loader)
""",
    "mean_of_means_even_batches": """
import torch
from torch.utils.data import DataLoader, TensorDataset
X = torch.randn(1024, 8)
loader = DataLoader(TensorDataset(X, X), batch_size=64)
model = torch.nn.Linear(8, 8)
def val_loss():
    s = 0.0
    for x, y in loader:
        s += torch.nn.functional.mse_loss(model(x), y).item()
    return s / len(loader)
""",
    "vae_loss_summed_by_hand": """
import torch
import torch.nn.functional as F
def loss_function(recon, x, mu, logvar):
    bce = F.binary_cross_entropy(recon, x, reduction="sum")
    return bce - 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
def train(model, train_loader, optimizer):
    train_loss = 0
    for data, _ in train_loader:
        optimizer.zero_grad()
        recon, mu, logvar = model(data)
        loss = loss_function(recon, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    return train_loss / len(train_loader.dataset)
""",
    "running_figure_inside_the_loop": """
import torch.nn.functional as F
def train(model, loader, opt):
    running = 0.0
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        running += loss.item()
        if i % 100 == 99:
            print(running / len(loader.dataset))
            running = 0.0
""",
    "correct_count_over_samples": """
def accuracy(model, loader):
    correct, total = 0, 0
    for x, y in loader:
        pred = model(x).argmax(1)
        correct += (pred == y).sum().item()
        total += y.size(0)
    return correct / total
""",
}

PREVIEW = {
    "criterion_of_unknown_reduction_over_dataset_len": """
def train_epoch(model, loader, criterion, optimizer):
    epoch_loss = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
    return epoch_loss / len(loader.dataset)
""",
}

SEEN = {
    "mean_losses_over_dataset_len": "https://github.com/udacity/deep-learning-v2-pytorch/issues/2 and https://github.com/pytorch/tutorials/issues/179 (mean batch losses summed, divided by the dataset size); https://github.com/mahmoodlab/PathomicFusion/pull/3 (divides by len(train_loader.dataset), fixed to len(train_loader))",
    "functional_loss_over_sample_counter": "https://github.com/kazuto1011/svm-pytorch/issues/4 (sum_loss of batch means divided by the dataset size N)",
    "weighted_sum_over_batches": "https://github.com/sotte/pytorch_tutorial/issues/10 (running_loss += loss.item() * X.shape[0], then divided by the number of batches)",
    "mean_of_means_with_small_last_batch": "this corpus's case (the mean of batch means with a smaller last batch); Data Science Stack Exchange 60613",
    "vae_loss_summed_by_hand": "https://github.com/unnir/cVAE/issues/2 (a VAE loss summed over the batch, divided by len(train_loader.dataset): correct)",
    "sum_reduction_over_dataset_len": "pytorch/examples mnist/main.py test(): F.nll_loss(..., reduction='sum') summed, divided by len(test_loader.dataset)",
}

# A sum over each pass divided by the number of passes, where a pass is one sample (a loop over the dataset's
# indices): the per-sample mean (torchcp examples/classification_splitcp_cifar100_online.py:84, round 15's tuning
# half, read wrong). Over a loader's batches, the same spelling is too large by the batch size.
_PASSES = """
import torch
def set_sizes(model, predictor, {source}):
    size_sum, total = 0, 0
    for {item}:
        pred_set = predictor(model({x}))
        size_sum += pred_set.sum()
        total += 1
    return size_sum / total
"""
NEAR_MISS["sum_per_sample_over_the_samples"] = _PASSES.format(
    source="dataset", item="i in range(len(dataset))", x="dataset[i][0].unsqueeze(0)"
)
PITFALL["sum_per_batch_over_the_batches"] = _PASSES.format(source="loader", item="x, y in loader", x="x")
SEEN["sum_per_sample_over_the_samples"] = (
    "ml-stat-Sustech/TorchCP examples/classification_splitcp_cifar100_online.py:84 (round 15's tuning half, read wrong)"
)
