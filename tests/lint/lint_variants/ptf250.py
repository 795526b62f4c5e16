"""PTF250 (resume-without-optimizer-state): a resume that restores the model and the epoch, not the optimizer."""

PITFALL = {
    "script_resumes_epoch_not_adam": """
import os
import torch
from torch import nn
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
start_epoch = 0
if os.path.exists("last.pt"):
    ckpt = torch.load("last.pt", map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["model"])
    start_epoch = ckpt["epoch"] + 1
for epoch in range(start_epoch, 100):
    optimizer.zero_grad()
    model(torch.randn(8, 32)).sum().backward()
    optimizer.step()
    torch.save({"model": model.state_dict(), "epoch": epoch}, "last.pt")
""",
    "main_function_with_get_epoch": """
import torch
import torch.nn.functional as F
from torchvision.models import resnet18
def main(resume=None, epochs=90):
    net = resnet18(num_classes=100)
    opt = torch.optim.AdamW(net.parameters(), lr=3e-4, weight_decay=0.05)
    first = 0
    if resume:
        state = torch.load(resume, weights_only=True)
        net.load_state_dict(state["state_dict"])
        first = state.get("epoch", 0)
    for epoch in range(first, epochs):
        opt.zero_grad()
        F.cross_entropy(net(torch.randn(4, 3, 32, 32)), torch.zeros(4, dtype=torch.long)).backward()
        opt.step()
""",
    "sgd_momentum_step_counter": """
import torch
from torch import nn
def train(path, steps=10_000):
    model = nn.Linear(128, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    checkpoint = torch.load(path, weights_only=True)
    model.load_state_dict(checkpoint["weights"])
    global_step = checkpoint["global_step"]
    while global_step < steps:
        optimizer.zero_grad()
        model(torch.randn(16, 128)).pow(2).mean().backward()
        optimizer.step()
        global_step += 1
""",
    "trainer_method_restores_epoch": """
import torch
from torch import nn
class Trainer:
    def __init__(self, model: nn.Module, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.epoch = 0
    def load_checkpoint(self, path):
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
        self.model.load_state_dict(ckpt["model"])
        self.epoch = ckpt["epoch"]
    def save_checkpoint(self, path):
        torch.save({"model": self.model.state_dict(), "epoch": self.epoch}, path)
""",
    "restore_helper_ignores_the_optimizer": """
import torch
from torch import nn
def build():
    model = nn.Linear(3, 1)
    return model, torch.optim.Adam(model.parameters(), lr=0.01)
def restore(model, optimizer, path):
    model.load_state_dict(torch.load(path, weights_only=True))
def run(path):
    model, optimizer = build()
    restore(model, optimizer, path)
    for _ in range(100):
        optimizer.zero_grad()
        model(torch.randn(4, 3)).sum().backward()
        optimizer.step()
""",
}

NEAR_MISS = {
    "optimizer_restored_too": """
import torch
from torch import nn
model = nn.Linear(32, 10)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
ckpt = torch.load("last.pt", weights_only=True)
model.load_state_dict(ckpt["model"])
optimizer.load_state_dict(ckpt["optimizer"])
start_epoch = ckpt["epoch"] + 1
""",
    "fine_tuning_from_pretrained_weights": """
import torch
from torch import nn
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
model.load_state_dict(torch.load("pretrained.pt", weights_only=True))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for epoch in range(10):
    optimizer.zero_grad()
    model(torch.randn(8, 32)).sum().backward()
    optimizer.step()
""",
    "early_stopping_restores_best_weights": """
import copy
import torch
from torch import nn
def fit(model: nn.Module, epochs=20):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    best, best_state = float("inf"), None
    for epoch in range(epochs):
        optimizer.zero_grad()
        loss = model(torch.randn(8, 4)).pow(2).mean()
        loss.backward()
        optimizer.step()
        if loss.item() < best:
            best, best_state = loss.item(), copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
""",
    "plain_sgd_has_no_state": """
import torch
from torch import nn
model = nn.Linear(16, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
ckpt = torch.load("ckpt.pt", weights_only=True)
model.load_state_dict(ckpt["model"])
start_epoch = ckpt["epoch"]
""",
    "restored_by_a_helper": """
import torch
from torch import nn
def load_checkpoint(path, model, optimizer):
    ckpt = torch.load(path, weights_only=True)
    optimizer.load_state_dict(ckpt["optim"])
    return ckpt
model = nn.Linear(16, 1)
optimizer = torch.optim.AdamW(model.parameters())
ckpt = load_checkpoint("a.pt", model, optimizer)
model.load_state_dict(ckpt["model"])
start_epoch = ckpt["epoch"]
""",
    "evaluation_reports_the_epoch": """
import torch
from torch import nn
def evaluate(path):
    model = nn.Linear(16, 2)
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"])
    print("trained for", ckpt["epoch"], "epochs")
    with torch.no_grad():
        return model(torch.randn(4, 16)).argmax(1)
""",
}

SEEN = {
    "script_resumes_epoch_not_adam": (
        "benchmarks/fresh/lint4/v22_two_tower_resume.py (a tuning-half script: model and epoch restored, Adam "
        "built fresh) and NM512/dreamerv3-torch#38 ('Resuming training resets optimizer parameters')"
    ),
    "trainer_method_restores_epoch": (
        "AntreasAntoniou/HowToTrainYourMAMLPytorch#31 (load_model restores the model, not self.optimizer)"
    ),
    "main_function_with_get_epoch": (
        "lorenlugosch/end-to-end-SLU#2 (the optimizer state is not saved for retraining from a checkpoint)"
    ),
    "restore_helper_ignores_the_optimizer": (
        "OpenDriveLab/Openpilot-Deepdive#7 ('In training code, there seem only load state dict of model')"
    ),
}

# A frozen teacher's weights loaded from a path held in the config whose "epochs" the loop reads: the
# config is where the file is, not a checkpoint that carries an epoch (fresh set 8's tuning half, z26).
NEAR_MISS["teacher_loaded_from_a_config_path"] = """
import torch
from torch import nn
CFG = {"teacher_ckpt": "teacher.pt", "epochs": 5, "lr": 1e-3}
def main(loader, cfg=CFG):
    teacher = nn.Linear(16, 4)
    teacher.load_state_dict(torch.load(cfg["teacher_ckpt"], map_location="cpu", weights_only=True))
    teacher.eval().requires_grad_(False)
    student = nn.Linear(16, 4)
    opt = torch.optim.Adam(student.parameters(), lr=cfg["lr"])
    for epoch in range(cfg["epochs"]):
        for x, y in loader:
            with torch.no_grad():
                t = teacher(x)
            loss = nn.functional.kl_div(student(x).log_softmax(-1), t.softmax(-1), reduction="batchmean")
            opt.zero_grad()
            loss.backward()
            opt.step()
"""
SEEN["teacher_loaded_from_a_config_path"] = "benchmarks/fresh/lint8 z26_intent_distill_transformer.py (tuning half)"

# fresh set 18 (tuning half): the function that resumes also saves the checkpoint, whose dict names the
# optimizer's entry; writing that key is no read of it
PITFALL["resume_beside_a_save_that_names_the_optimizer"] = """
import torch
def main(args, loader, criterion):
    model = torch.nn.Linear(8, 2)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.ckpt, weights_only=True)
        model.load_state_dict(ckpt["model"])
        start_epoch = ckpt["epoch"] + 1
    for epoch in range(start_epoch, args.epochs):
        for x, y in loader:
            opt.zero_grad()
            criterion(model(x), y).backward()
            opt.step()
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": epoch}, args.ckpt)
"""
NEAR_MISS["resume_reading_the_optimizer_entry_with_get"] = """
import torch
def main(args, loader, criterion):
    model = torch.nn.Linear(8, 2)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.ckpt, weights_only=True)
        model.load_state_dict(ckpt["model"])
        if ckpt.get("optimizer") is not None:
            opt.load_state_dict(ckpt.get("optimizer"))
        start_epoch = ckpt["epoch"] + 1
    for epoch in range(start_epoch, args.epochs):
        for x, y in loader:
            opt.zero_grad()
            criterion(model(x), y).backward()
            opt.step()
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": epoch}, args.ckpt)
"""

# fresh set 19 (tuning half): a helper that loads a pretrained encoder and only prints the pretraining step is no
# resume (fine-tuning starts afresh); one that hands the step back to its caller is
_PRETRAINED = """
import torch
import torch.nn.functional as F
def load_pretrained_encoder(model, path):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.encoder.load_state_dict(ckpt["state_dict"])
    {counter}
class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.EmbeddingBag(1000, 64)
        self.head = torch.nn.Linear(64, 10)
    def forward(self, x):
        return self.head(self.encoder(x))
def main(args, train_dl):
    model = Tagger()
    {call}
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(args.epochs):
        for x, y in train_dl:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""
NEAR_MISS["pretraining_step_only_printed"] = _PRETRAINED.format(
    counter="""print(f"encoder restored from {path}, pretraining step {ckpt['step']}")""",
    call="load_pretrained_encoder(model, args.pretrained)",
)
