"""PTF274 (dataparallel-state-dict-prefix): a DataParallel/DDP wrapper's state dict saved, or loaded
into the plain model."""

PITFALL = {
    "save_after_wrapping": """
import torch
import torch.nn as nn
import torchvision
def main(loader, epochs, path):
    model = torchvision.models.resnet18(num_classes=10)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
            opt.step()
    torch.save(model.state_dict(), path)
""",
    "checkpoint_dict_with_ddp": """
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)
    def forward(self, x):
        return self.fc(x)
def train(rank, epochs):
    net = Net().to(rank)
    ddp = DDP(net, device_ids=[rank])
    opt = torch.optim.Adam(ddp.parameters())
    for epoch in range(epochs):
        pass
    if rank == 0:
        torch.save({"epoch": epochs, "model": ddp.state_dict(), "optimizer": opt.state_dict()}, "ckpt.pt")
""",
    "state_bound_then_saved": """
import torch
from torch import nn
model = nn.DataParallel(nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))).cuda()
def save(path):
    state = model.state_dict()
    torch.save(state, path)
""",
    "loaded_into_plain_model": """
import torch
from torch import nn
def export(trained):
    parallel = nn.DataParallel(trained)
    weights = parallel.state_dict()
    plain = nn.Linear(3, 2)
    plain.load_state_dict(weights)
    return plain
""",
    "self_attribute_wrapper": """
import torch
import torch.nn as nn
class Trainer:
    def __init__(self, net, gpus):
        self.model = nn.DataParallel(net, device_ids=gpus).cuda()
    def save_checkpoint(self, path, epoch):
        torch.save({"state_dict": self.model.state_dict(), "epoch": epoch}, path)
""",
}

NEAR_MISS = {
    "inner_module_saved": """
import torch
from torch import nn
def save(net, path):
    parallel = nn.DataParallel(net).cuda()
    torch.save(parallel.module.state_dict(), path)
""",
    "prefix_stripped_on_load": """
import torch
from torch import nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
def roundtrip(path):
    parallel = nn.DataParallel(nn.Linear(3, 2))
    torch.save(parallel.state_dict(), path)
    sd = torch.load(path, weights_only=True)
    consume_prefix_in_state_dict_if_present(sd, "module.")
    plain = nn.Linear(3, 2)
    plain.load_state_dict(sd)
    return plain
""",
    "resumed_into_the_same_wrapper": """
import torch
from torch import nn
class Runner:
    def __init__(self, net):
        self.model = nn.DataParallel(net).cuda()
    def save(self, path):
        torch.save(self.model.state_dict(), path)
    def resume(self, path):
        self.model.load_state_dict(torch.load(path, weights_only=True))
""",
    "plain_model_saved": """
import torch
from torch import nn
def save(path):
    model = nn.Linear(3, 2).cuda()
    torch.save(model.state_dict(), path)
""",
    "keys_renamed_by_hand": """
import torch
from torch import nn
def save(net, path):
    model = nn.DataParallel(net)
    state = {k.replace("module.", ""): v for k, v in model.state_dict().items()}
    torch.save(state, path)
""",
    "unknown_model_saved": """
import torch
def save(model, path):
    torch.save(model.state_dict(), path)
""",
}

SEEN = {
    "save_after_wrapping": "https://github.com/dontLoveBugs/DORN_pytorch/issues/4 (DataParallel whenever a GPU is there, model.state_dict() saved; the checkpoint then needs the wrapper to load)",
    "loaded_into_plain_model": "https://github.com/pytorch/pytorch/issues/3805 (model.load_state_dict(checkpoint['state_dict']) of a DataParallel checkpoint: unexpected key \"module.features.conv0.weight\")",
    "checkpoint_dict_with_ddp": "https://github.com/menzelab/implicit-shape-reconstruction/issues/2 (a checkpoint's net_state saved from the parallel model: Mismatch in state_dict keys)",
    "inner_module_saved": "https://github.com/whai362/pan_pp.pytorch/issues/14 (torch.save(model.module.state_dict(), path) instead of model.state_dict())",
    "keys_renamed_by_hand": "https://github.com/meijieru/crnn.pytorch/issues/60 (the keys renamed: k[7:] to remove `module.`)",
}

NEAR_MISS["wrapper_restored_by_a_checkpoint_helper"] = """
import torch
from torch import nn
def restart_from_checkpoint(path, **objects):
    checkpoint = torch.load(path, weights_only=True)
    for key, obj in objects.items():
        obj.load_state_dict(checkpoint[key])
def train(local_rank, epochs):
    classifier = nn.parallel.DistributedDataParallel(nn.Linear(768, 1000).cuda(), device_ids=[local_rank])
    restart_from_checkpoint("checkpoint.pth", state_dict=classifier)
    for epoch in range(epochs):
        torch.save({"epoch": epoch, "state_dict": classifier.state_dict()}, "checkpoint.pth")
"""
SEEN["wrapper_restored_by_a_checkpoint_helper"] = (
    "facebookresearch/dino eval_linear.py (round 5's tuning half): the DDP-wrapped linear classifier is "
    "saved with its prefix and handed to utils.restart_from_checkpoint(..., state_dict=linear_classifier)"
)
