"""PTF277 (ddp-model-not-wrapped): a process group is started and a model trained with nothing in the file that
keeps the ranks' gradients in step."""

PITFALL = {
    "torchrun_script_plain_model": """
import os
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler
def main(dataset, epochs):
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2)).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""",
    "ddp_imported_never_used": """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
import torchvision
def train(rank, world_size, loader):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    net = torchvision.models.resnet18(num_classes=10).to(rank)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    crit = torch.nn.CrossEntropyLoss()
    for images, labels in loader:
        opt.zero_grad()
        crit(net(images.to(rank)), labels.to(rank)).backward()
        opt.step()
    dist.destroy_process_group()
""",
    "own_module_class": """
import torch
from torch import distributed
from torch import nn
class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 1)
    def forward(self, x):
        return self.body(x)
def worker(loader, steps):
    distributed.init_process_group(backend="gloo", init_method="env://")
    model = Regressor()
    optim = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=3e-4)
    for step, (x, y) in zip(range(steps), loader):
        loss = ((model(x) - y) ** 2).mean()
        optim.zero_grad()
        loss.backward()
        optim.step()
""",
    "spawned_workers": """
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
def run(rank, world, data):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    model = torch.nn.Linear(10, 1)
    sgd = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in data[rank::world]:
        sgd.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        sgd.step()
    if rank == 0:
        torch.save(model.state_dict(), "model.pt")
if __name__ == "__main__":
    mp.spawn(run, args=(2, []), nprocs=2)
""",
    "qualified_init": """
import torch
import torch.nn as nn
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 32)
        self.out = nn.Linear(32, 5)
    def forward(self, t):
        return self.out(self.emb(t))
def main(batches):
    torch.distributed.init_process_group(backend="nccl")
    device = torch.device("cuda", torch.distributed.get_rank() % torch.cuda.device_count())
    tagger = Tagger().to(device)
    optimizer = torch.optim.Adam(tagger.parameters())
    for tokens, tags in batches:
        logits = tagger(tokens.to(device))
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), tags.to(device).flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
}

NEAR_MISS = {
    "wrapped_in_ddp": """
import os
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
def main(loader):
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = nn.Linear(32, 2).cuda(local_rank)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
        optimizer.step()
""",
    "gradients_averaged_by_hand": """
import torch
import torch.distributed as dist
def average_gradients(model):
    size = float(dist.get_world_size())
    for param in model.parameters():
        dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
        param.grad.data /= size
def run(rank, size, loader):
    dist.init_process_group("gloo", rank=rank, world_size=size)
    model = torch.nn.Linear(784, 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    for data, target in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(data), target)
        loss.backward()
        average_gradients(model)
        optimizer.step()
""",
    "evaluation_only": """
import torch
import torch.distributed as dist
import torchvision
@torch.no_grad()
def evaluate(loader, path):
    dist.init_process_group("nccl")
    model = torchvision.models.resnet50()
    model.load_state_dict(torch.load(path, weights_only=True))
    model.eval().cuda()
    correct = torch.zeros(1, device="cuda")
    for x, y in loader:
        correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()
    dist.all_reduce(correct)
    return correct.item()
""",
    "fsdp_wrapped": """
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch import nn
def main(loader):
    dist.init_process_group("nccl")
    net = nn.Transformer(d_model=64, nhead=4).cuda()
    net = FSDP(net)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
    for src, tgt in loader:
        opt.zero_grad()
        net(src.cuda(), tgt.cuda()).sum().backward()
        opt.step()
""",
    "accelerate_prepares": """
import torch
import torch.distributed as dist
from accelerate import Accelerator
from torch import nn
def main(loader):
    dist.init_process_group("nccl")
    accelerator = Accelerator()
    model = nn.Linear(16, 4)
    optimizer = torch.optim.Adam(model.parameters())
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for x, y in loader:
        optimizer.zero_grad()
        accelerator.backward(nn.functional.cross_entropy(model(x), y))
        optimizer.step()
""",
    "optimizer_state_only_converted": """
import torch
import torch.distributed as dist
from torch import nn
def convert(path, out):
    dist.init_process_group("gloo")
    model = nn.Linear(16, 4)
    optimizer = torch.optim.Adam(model.parameters())
    state = torch.load(path, weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, out)
""",
    "model_from_another_module": """
import torch
import torch.distributed as dist
from mypkg.models import build_model
def main(cfg, loader):
    dist.init_process_group("nccl")
    model = build_model(cfg)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
""",
    "single_process": """
import torch
from torch import nn
def main(loader):
    model = nn.Linear(16, 4)
    optimizer = torch.optim.Adam(model.parameters())
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
""",
}

SEEN = {
    "gradients_averaged_by_hand": "https://pytorch.org/tutorials/intermediate/dist_tuto.html (the tutorial's "
    "average_gradients: an all_reduce of every parameter's grad after backward, no DDP)",
    "torchrun_script_plain_model": "benchmarks/fresh/lint7 y17 (written outside the project: a torchrun script "
    "with a DistributedSampler and a model never wrapped)",
    "ddp_imported_never_used": "cases/devices/ddp_model_not_wrapped.py (its train.py imports DDP and never calls it)",
}
PITFALL["all_reduce_of_the_loss_totals_only"] = """
import os
import torch
import torch.distributed as dist
from torch import nn
def init_distributed():
    dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return dist.get_rank(), int(os.environ.get("LOCAL_RANK", 0))
def global_mean(total, count, device):
    t = torch.tensor([total, count], dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return (t[0] / t[1]).item()
def main(loader, device):
    rank, local_rank = init_distributed()
    model = nn.Linear(64, 4).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    total, n = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total, n = total + loss.item(), n + 1
    print(global_mean(total, n, device))
"""
SEEN["all_reduce_of_the_loss_totals_only"] = (
    "fresh set 9's q10 (tuning half, read): a torchrun script whose only all_reduce averages the logged loss; "
    "the PyTorch DDP tutorial's reduce of a metric (https://pytorch.org/tutorials/intermediate/dist_tuto.html, "
    "'All-Reduce' example on a plain tensor)"
)
