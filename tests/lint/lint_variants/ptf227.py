"""PTF227 (best-state-dict-is-a-reference): the best weights kept as model.state_dict() while training goes on."""

PITFALL = {
    "tutorial_best_model_wts": """
import torch
from torch import nn
def train_model(model, criterion, optimizer, loaders, num_epochs=25):
    best_model_wts = model.state_dict()
    best_acc = 0.0
    for epoch in range(num_epochs):
        for phase in ["train", "val"]:
            model.train() if phase == "train" else model.eval()
            corrects = 0
            for inputs, labels in loaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(inputs)
                    loss = criterion(outputs, labels)
                    if phase == "train":
                        loss.backward()
                        optimizer.step()
                corrects += (outputs.argmax(1) == labels).sum().item()
            acc = corrects / len(loaders[phase].dataset)
            if phase == "val" and acc > best_acc:
                best_acc = acc
                best_model_wts = model.state_dict()
    model.load_state_dict(best_model_wts)
    return model
""",
    "early_stopping_in_a_script": """
import torch
from torch import nn
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
best, best_state, bad = float("inf"), None, 0
for epoch in range(100):
    opt.zero_grad()
    nn.functional.mse_loss(model(xs), ys).backward()
    opt.step()
    with torch.no_grad():
        val = nn.functional.mse_loss(model(xv), yv).item()
    if val < best:
        best, best_state, bad = val, model.state_dict(), 0
    else:
        bad += 1
        if bad > 10:
            break
model.load_state_dict(best_state)
""",
    "shallow_copy_of_the_dict": """
import torch
from torch import nn
def fit(model: nn.Module, train_loader, val_fn, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    best_val_loss, best_state_dict = float("inf"), None
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            nn.functional.l1_loss(model(x), y).backward()
            optimizer.step()
        val_loss = val_fn(model)
        if val_loss < best_val_loss:
            best_val_loss = val_loss
            best_state_dict = model.state_dict().copy()
    model.load_state_dict(best_state_dict)
""",
    "trainer_attribute_returned": """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        return self.fc(x)
class Trainer:
    def __init__(self):
        self.model = Net()
        self.optimizer = torch.optim.Adam(self.model.parameters())
        self.best_model_dict = None
    def train_epoch(self, loader):
        for x, y in loader:
            self.optimizer.zero_grad()
            nn.functional.cross_entropy(self.model(x), y).backward()
            self.optimizer.step()
    def fit(self, train_loader, evaluate, epochs):
        best = 0
        for epoch in range(epochs):
            self.train_epoch(train_loader)
            score = evaluate(self.model)
            if score > best:
                best = score
                self.best_model_dict = self.model.state_dict()
        self.model.load_state_dict(self.best_model_dict)
""",
    "dict_comprehension_of_the_same_tensors_saved_after": """
import torch
from torch import nn
net = nn.Linear(16, 4)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
best_acc, checkpoint = 0.0, {}
for epoch in range(20):
    for x, y in batches:
        optimizer.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        optimizer.step()
    acc = accuracy(net)
    if acc > best_acc:
        best_acc = acc
        checkpoint = {"epoch": epoch, "state": {k: v.detach() for k, v in net.state_dict().items()}}
torch.save(checkpoint, "best.pt")
""",
    "checkpoint_selection_loop_loads_in_place": """
import torch
import torchvision
model = torchvision.models.resnet18()
best_score, best_weights = -1.0, None
for path in ["e1.pt", "e2.pt", "e3.pt"]:
    model.load_state_dict(torch.load(path, weights_only=True))
    score = evaluate(model)
    if score > best_score:
        best_score, best_weights = score, model.state_dict()
model.load_state_dict(best_weights)
""",
}

NEAR_MISS = {
    "deepcopy_and_clone": """
import copy
import torch
from torch import nn
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best, best_state, best_clone = float("inf"), None, None
for epoch in range(10):
    opt.zero_grad()
    nn.functional.mse_loss(model(xs), ys).backward()
    opt.step()
    val = nn.functional.mse_loss(model(xv), yv).item()
    if val < best:
        best = val
        best_state = copy.deepcopy(model.state_dict())
        best_clone = {k: v.detach().clone() for k, v in model.state_dict().items()}
model.load_state_dict(best_state)
model.load_state_dict(best_clone)
""",
    "saved_to_disk_at_once": """
import torch
from torch import nn
def train(model: nn.Module, loader, epochs, path="best.pt"):
    opt = torch.optim.Adam(model.parameters())
    best = float("inf")
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
        if loss.item() < best:
            best = loss.item()
            state = model.state_dict()
            torch.save(state, path)
    model.load_state_dict(torch.load(path, weights_only=True))
""",
    "moved_to_the_cpu_on_a_gpu_model": """
import torch
from torch import nn
model = nn.Linear(8, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best, best_state = float("inf"), None
for epoch in range(10):
    opt.zero_grad()
    nn.functional.mse_loss(model(xs), ys).backward()
    opt.step()
    val = nn.functional.mse_loss(model(xv), yv).item()
    if val < best:
        best, best_state = val, {k: v.cpu() for k, v in model.state_dict().items()}
model.load_state_dict(best_state)
""",
    "final_state_after_training": """
import torch
from torch import nn
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    opt.zero_grad()
    nn.functional.mse_loss(model(xs), ys).backward()
    opt.step()
final_state = model.state_dict()
torch.save({"model": final_state, "optimizer": opt.state_dict()}, "last.pt")
""",
    "kept_then_training_stops": """
import torch
from torch import nn
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
state = None
for epoch in range(1000):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(xs), ys)
    loss.backward()
    opt.step()
    if loss.item() < 1e-3:
        state = model.state_dict()
        break
model.load_state_dict(state)
""",
    "evaluation_only_loop_over_models": """
import torch
import torchvision
states = {}
for name in ["resnet18", "resnet34"]:
    net = getattr(torchvision.models, name)()
    states[name] = net.state_dict()
torch.save(states, "all.pt")
""",
}

SEEN = {
    "tutorial_best_model_wts": (
        "pytorch/tutorials#188 'Fixed deep copying model.state_dict()' (transfer-learning tutorial's "
        "best_model_wts = model.state_dict())"
    ),
    "shallow_copy_of_the_dict": (
        "WMD-group/SMACT#601 review: best_state_dict = model.state_dict().copy() (a shallow copy, still the live tensors)"
    ),
    "trainer_attribute_returned": (
        "WenjieDu/PyPOTS#667 'Issue with saving the best model state' (self.best_model_dict = self.model.state_dict()); "
        "thunlp/OpenKE#131 'deepcopy the model'"
    ),
    "early_stopping_in_a_script": "sicara/easy-few-shot-learning#129 'Adding deepcopy to best_state deriving'",
    "moved_to_the_cpu_on_a_gpu_model": "the brief: {k: v.cpu()} is a copy on the GPU (documented in the rule)",
}
NEAR_MISS["resumed_then_best_saved_at_once"] = """
import os
import torch
from torch import nn
def main(model: nn.Module, loader, path, epochs):
    optimizer = torch.optim.Adam(model.parameters())
    best = float("inf")
    if os.path.isfile(path):
        checkpoint = torch.load(path, weights_only=True)
        model.load_state_dict(checkpoint["model_state_dict"])
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.l1_loss(model(x), y)
            loss.backward()
            optimizer.step()
        if loss.item() < best:
            best = loss.item()
            checkpoint = {"epoch": epoch, "model_state_dict": model.state_dict()}
            torch.save(checkpoint, path)
"""
NEAR_MISS["snapshot_restored_before_the_call_returns"] = """
import torch
from torch import nn
class Explainer:
    def __init__(self, model: nn.Module):
        self.model = model
    def attribute(self, x):
        self._original = self.model.state_dict()
        try:
            for layer in self.model.modules():
                if isinstance(layer, nn.Linear):
                    layer.weight.data = layer.weight.data.clamp(min=0)
            return self.model(x)
        finally:
            self._restore()
    def _restore(self):
        self.model.load_state_dict(self._original)
"""
SEEN["resumed_then_best_saved_at_once"] = (
    "pyg-team/pytorch_geometric examples/multi_gpu/pcqm4m_ogb.py (tuning half: the checkpoint name reused for the "
    "resumed file before the loop; a wrong finding before uses were limited to those after the kept state)"
)
SEEN["snapshot_restored_before_the_call_returns"] = (
    "pytorch/captum captum/attr/_core/lrp.py (tuning half: _original_state_dict restored by a method attribute() "
    "itself calls; weight.data is replaced, not written in place: a wrong finding before)"
)

PREVIEW = {
    "early_stopping_helper_keeps_it_between_calls": """
class EarlyStopping:
    def __init__(self, patience=5):
        self.patience, self.best, self.best_state, self.bad = patience, None, None, 0
    def __call__(self, score, model):
        if self.best is None or score > self.best:
            self.best, self.bad = score, 0
            self.best_state = model.state_dict()
        else:
            self.bad += 1
        return self.bad > self.patience
    def restore(self, model):
        model.load_state_dict(self.best_state)
""",
}

NEAR_MISS["a_new_model_each_run"] = """
import torch
from torch import nn
def train_eval_net(model, x, y):
    opt = torch.optim.Adam(model.parameters())
    for _ in range(100):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    return model, float(loss)
def runs(seeds, x, y, output):
    for seed in seeds:
        torch.manual_seed(seed)
        out = {}
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        if seed >= 0:
            model, log = train_eval_net(model, x, y)
            out["model"] = model.state_dict()
        torch.save(out, output / f"run_{seed}.pt")
"""
SEEN["a_new_model_each_run"] = (
    "yandex-research/tabular-dl-revisiting-models bin/analysis_ft_transformer_vs_resnet.py (a model built "
    "and trained per run, its state kept in out['model'] and saved; round 5's read held-out half)"
)

NEAR_MISS["ema_state_saved_later_in_the_same_pass"] = """
import torch
from torch import nn
def train(loader, args, checkpoint_dir):
    model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
    ema = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.load_state_dict(model.state_dict())
        if step % args.ckpt_every == 0:
            checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "steps": step}
            if args.ema:
                checkpoint["ema"] = ema.state_dict()
            if not args.no_local_save:
                torch.save(checkpoint, f"{checkpoint_dir}/{step:07d}.pt")
"""
SEEN["ema_state_saved_later_in_the_same_pass"] = (
    "FoundationVision/LlamaGen autoregressive/train/train_c2i.py (the EMA's state put in the checkpoint, "
    "saved a few lines on; round 8's read held-out half judged it wrong)"
)
NEAR_MISS["step_checkpoint_name_made_anew_each_epoch"] = """
import torch
def train(model, loader, optimizer, loss_fn, epochs, path):
    best_loss = 1e10
    for epoch in range(epochs):
        model.train()
        epoch_loss = 0.0
        for step, (x, y) in enumerate(loader):
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
            if step % 100 == 0:
                checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
                torch.save(checkpoint, path + "_latest_step.pth")
        checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
        torch.save(checkpoint, path + "_latest.pth")
        if epoch_loss < best_loss:
            best_loss = epoch_loss
            torch.save(checkpoint, path + "_best.pth")
"""
SEEN["step_checkpoint_name_made_anew_each_epoch"] = (
    "MedSAM train_multi_gpus.py:442 (round 8's read held-out half: the step checkpoint dict, saved at once; "
    "the name is bound anew to the epoch's dict before the best-model save)"
)

# An early-stopping helper keeps the model's state_dict() on itself at each improvement; the caller restores it
# after training (model.load_state_dict(stopper.best_weights)), and the training helper's optimizer.step() beside
# stopper.step(...) is torch's step, not the helper's.
_STOPPER = """
import torch
class EarlyStopper:
    def __init__(self, patience):
        self.patience, self.best, self.best_weights, self.bad = patience, float("inf"), None, 0
    def step(self, score, model):
        if score < self.best:
            self.best, self.bad = score, 0
            self.best_weights = {kept}
        else:
            self.bad += 1
        return self.bad >= self.patience
def run_epoch(model, loader, optimizer=None):
    model.train(optimizer is not None)
    total = 0.0
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        if optimizer is not None:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total
def fit(model, train_dl, valid_dl, epochs):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    stopper = EarlyStopper(5)
    for epoch in range(epochs):
        run_epoch(model, train_dl, optimizer)
        with torch.no_grad():
            valid = run_epoch(model, valid_dl)
        if stopper.step(valid, model):
            break
    model.load_state_dict(stopper.best_weights)
    return model
def main(train_dl, valid_dl):
    torch.save(fit(torch.nn.Linear(16, 1), train_dl, valid_dl, 100).state_dict(), "best.pt")
"""
PITFALL["kept_by_a_stopper_restored_by_its_caller"] = _STOPPER.format(kept="model.state_dict()")
NEAR_MISS["copied_by_a_stopper_restored_by_its_caller"] = _STOPPER.format(
    kept="{k: v.detach().clone() for k, v in model.state_dict().items()}"
)
SEEN["kept_by_a_stopper_restored_by_its_caller"] = (
    "fresh set 16's h04 (tuning half): EarlyStopper.step keeping model.state_dict() as best_weights, main() "
    "restoring model.load_state_dict(stopper.best_weights) after the loop; run_epoch(model, loader, optimizer=None)"
)
SEEN["copied_by_a_stopper_restored_by_its_caller"] = "the same helper keeping a detached clone, the fix"
