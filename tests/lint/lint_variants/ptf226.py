"""PTF226 (loss-append-keeps-graph): the differentiated loss kept across iterations as a tensor."""

PITFALL = {
    "faq_total_loss_plus_equals": """
import torch
from torch import nn
model = nn.Linear(10, 1)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
total_loss = 0
for i in range(10000):
    optimizer.zero_grad()
    output = model(torch.randn(4, 10))
    loss = criterion(output, torch.randn(4, 1))
    loss.backward()
    optimizer.step()
    total_loss += loss
""",
    "losses_list_for_the_plot": """
import torch
import torch.nn.functional as F
def fit(model, loader, epochs=5):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    history = []
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            history.append(loss)
    return history
""",
    "running_loss_times_batch_size_amp": """
import torch
from torch import nn
def train_epoch(model, loader, optimizer, scaler):
    criterion = nn.CrossEntropyLoss()
    running_loss = 0.0
    for images, labels in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = criterion(model(images), labels)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        running_loss = running_loss + loss * images.size(0)
    return running_loss / len(loader.dataset)
""",
    "accelerate_loss_sum_tensor_init": """
import torch
def training_function(model, optimizer, train_dataloader, accelerator, num_epochs):
    for epoch in range(num_epochs):
        model.train()
        loss_sum = torch.tensor(0.0)
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            loss = outputs.loss
            loss_sum += loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        print(epoch, loss_sum / (step + 1))
""",
    "dict_of_lists_in_a_trainer_method": """
import collections
import torch
from torch import nn
class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.01)
        self.logs = collections.defaultdict(list)
    def run(self, batches):
        for x, y in batches:
            self.opt.zero_grad()
            loss = nn.functional.mse_loss(self.model(x), y)
            (loss / 4).backward()
            self.opt.step()
            self.logs["train"].append({"step": len(self.logs["train"]), "loss": loss})
""",
    "self_losses_list_in_a_loop": """
import torch
from torch import nn
class Fitter:
    def __init__(self):
        self.net = nn.Linear(3, 1)
        self.optimizer = torch.optim.Adam(self.net.parameters())
        self.losses = []
    def fit(self, xs, ys):
        for x, y in zip(xs, ys):
            self.optimizer.zero_grad()
            loss = ((self.net(x) - y) ** 2).mean()
            loss.backward()
            self.optimizer.step()
            self.losses.append(loss)
""",
}

NEAR_MISS = {
    "item_and_float_and_detach": """
import torch
from torch import nn
model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses, total, on_device = [], 0.0, torch.zeros(())
for x, y in zip(torch.randn(8, 4, 10), torch.randn(8, 4, 1)):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    total += float(loss)
    on_device += loss.detach()
""",
    "gradient_accumulation_sum_reset_each_window": """
import torch
import torch.nn.functional as F
def train(model, loader, opt, accum=4):
    acc = 0.0
    for step, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        acc = acc + loss
        if (step + 1) % accum == 0:
            (acc / accum).backward()
            opt.step()
            opt.zero_grad()
            acc = 0.0
""",
    "meta_loss_summed_then_differentiated": """
import torch
import torch.nn.functional as F
def outer_step(model, tasks, meta_opt):
    meta_loss = 0.0
    for x, y in tasks:
        task_loss = F.mse_loss(model(x), y)
        meta_loss += task_loss
    meta_opt.zero_grad()
    meta_loss.backward()
    meta_opt.step()
""",
    "validation_loop_under_no_grad": """
import torch
import torch.nn.functional as F
def evaluate(model, loader):
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            total += loss
    return total / len(loader)
""",
    "list_reset_every_iteration": """
import torch
from torch import nn
model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in zip(torch.randn(8, 4, 10), torch.randn(8, 4, 1)):
    parts = []
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    parts.append(loss)
    loss.backward()
    optimizer.step()
    print(sum(p.item() for p in parts))
""",
    "loss_rebound_to_its_number_first": """
import torch
import torch.nn.functional as F
def fit(model, loader, opt):
    history = []
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        loss = loss.item()
        history.append(loss)
    return history
""",
    "predictions_kept_detached": """
import torch
import torch.nn.functional as F
def fit(model, loader, opt):
    outputs = []
    for x, y in loader:
        opt.zero_grad()
        out = model(x)
        F.mse_loss(out, y).backward()
        opt.step()
        outputs.append(out.detach())
    return outputs
""",
}

PITFALL["kept_by_a_step_method_on_its_object"] = """
import torch.nn.functional as F
class Learner:
    def __init__(self, net, opt):
        self.net, self.opt = net, opt
        self.train_losses = []
    def training_step(self, x, y):
        loss = F.mse_loss(self.net(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.train_losses.append(loss)
        return loss.item()
"""
NEAR_MISS["step_method_keeps_a_number"] = """
import torch.nn.functional as F
class Learner:
    def __init__(self, net, opt):
        self.net, self.opt = net, opt
        self.train_losses = []
    def training_step(self, x, y):
        loss = F.mse_loss(self.net(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.train_losses.append(loss.item())
"""
NEAR_MISS["method_without_an_optimizer_step"] = """
import torch
class Probe:
    def __init__(self, net):
        self.net = net
        self.norms = []
    def gradient_norm(self, x):
        out = self.net(x).sum()
        out.backward()
        self.norms.append(out)
        return torch.stack([p.grad.norm() for p in self.net.parameters()]).sum()
"""

SEEN = {
    "kept_by_a_step_method_on_its_object": "benchmarks/fresh/lint14 n28_lyrics_decoder_lm.py (tuning half, missed at its first run: LMTrainer.step appends the loss to self.history[...], a defaultdict(list))",
    "faq_total_loss_plus_equals": (
        "PyTorch FAQ 'My model reports cuda runtime error(2): out of memory' (total_loss += loss), quoted in "
        "google/brax#152 'Remove memory leak in PyTorch training example'"
    ),
    "running_loss_times_batch_size_amp": (
        "BatsResearch/labelmodels#4 'Memory leak in training loop' (running_loss summed from non-detached tensors)"
    ),
    "accelerate_loss_sum_tensor_init": (
        "ray-project/ray#40940 'Make sure that loss can be freed after every iteration' (loss_sum += loss in the "
        "DeepSpeed/accelerate fine-tuning template)"
    ),
    "dict_of_lists_in_a_trainer_method": (
        "TRI-ML/packnet-sfm#47 / #51 (output['loss'] appended to the epoch's outputs without detach)"
    ),
    "gradient_accumulation_sum_reset_each_window": "the brief's near miss: an accumulated sum differentiated and reset",
}
NEAR_MISS["one_steps_losses_summed_in_a_helper"] = """
def compute_aux_loss(aux_list, backward=False):
    aux_loss_sum = 0
    for aux_loss in aux_list:
        aux_loss_sum += aux_loss
        if backward is True:
            aux_loss.backward()
    return aux_loss_sum
"""
SEEN["one_steps_losses_summed_in_a_helper"] = (
    "InterDigitalInc/CompressAI examples/train_video.py compute_aux_loss (round 12's held-out half, read wrong: "
    "the entropy bottlenecks' aux losses of one step, each backwarded, summed and returned; the caller rebinds "
    "its aux_loss every step)"
)

# fresh set 18 (tuning half): the loss handed to a method of a class of the file that keeps what it is given in
# its object; by keyword into **values, or by position
_KEEPER = """
import torch
from collections import defaultdict
class History:
    def __init__(self):
        self.rows = defaultdict(list)
        self.seen = []
    def log(self, **values):
        for key, value in values.items():
            self.rows[key].append({kept})
    def add(self, value):
        self.seen.append({kept})
def train(model, loader, optimizer, criterion):
    history = History()
    for epoch in range(10):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            history.{call}
"""
PITFALL["loss_logged_into_an_object_by_keyword"] = _KEEPER.format(kept="value", call="log(loss=loss)")
PITFALL["loss_added_to_an_object_by_position"] = _KEEPER.format(kept="value", call="add(loss)")
NEAR_MISS["keeper_stores_a_number"] = _KEEPER.format(kept="float(value)", call="log(loss=loss)")
NEAR_MISS["number_handed_to_the_keeper"] = _KEEPER.format(kept="value", call="log(loss=loss.item())")
