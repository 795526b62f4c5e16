"""PTF025: the wrapped model's own method called on a DataParallel/DDP wrapper."""

PITFALL = {
    "freeze_helper": """
import torch.nn as nn
class Net(nn.Module):
    def freeze_backbone(self):
        pass
model = nn.DataParallel(Net())
model.freeze_backbone()
""",
    "train_model_method": """
import torch
class MaskRCNN(torch.nn.Module):
    def train_model(self, data):
        pass
model = torch.nn.DataParallel(MaskRCNN(), device_ids=[0, 1])
model.train_model(None)
""",
    "self_model_in_method": """
import torch.nn as nn
class Net(nn.Module):
    def log_weights(self, step):
        pass
class Runner:
    def __init__(self):
        self.model = nn.DataParallel(Net())
    def log(self, step):
        self.model.log_weights(step)
""",
    "ddp_encode": """
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
class Encoder(nn.Module):
    def encode(self, x):
        return x
def run(x, rank):
    model = DDP(Encoder(), device_ids=[rank])
    return model.encode(x)
""",
    "after_to_device": """
import torch
import torch.nn as nn
class Net(nn.Module):
    def compute_center_loss(self, x):
        return x
def step(x):
    net = nn.DataParallel(Net()).to("cuda")
    return net.compute_center_loss(x)
""",
}

NEAR_MISS = {
    "through_module": """
import torch.nn as nn
class Net(nn.Module):
    def freeze_backbone(self):
        pass
model = nn.DataParallel(Net())
model.module.freeze_backbone()
""",
    "module_api": """
import torch.nn as nn
model = nn.DataParallel(nn.Linear(3, 1))
model.eval()
params = list(model.parameters())
state = model.state_dict()
""",
    "unwrapped": """
import torch.nn as nn
class Net(nn.Module):
    def freeze_backbone(self):
        pass
model = Net()
model.freeze_backbone()
""",
    "ddp_no_sync": """
from torch.nn.parallel import DistributedDataParallel as DDP
def accumulate(model_fn, x):
    model = DDP(model_fn())
    with model.no_sync():
        model(x).sum().backward()
""",
}

SEEN = {
    "train_model_method": "https://github.com/jytime/Mask_RCNN_Pytorch/issues/2",
    "self_model_in_method": "https://github.com/pytorch/pytorch/issues/43329",
    "after_to_device": "https://github.com/Jungjee/ASVspoof_PA/issues/7",
    "through_module": "https://github.com/layumi/Person_reID_baseline_pytorch/issues/173",
}

# round 2: a layer of the wrapped model read off the wrapper (not a method call)
PITFALL["layer_attribute_after_wrap"] = """
import torch
import torch.nn as nn
def finetune(model):
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    params = list(model.classifier.parameters())
    return torch.optim.SGD(params, lr=0.01)
"""
NEAR_MISS["layer_through_module"] = """
import torch
import torch.nn as nn
def finetune(model):
    model = nn.DataParallel(model)
    params = list(model.module.classifier.parameters())
    return torch.optim.SGD(params, lr=0.01)
"""
SEEN["layer_attribute_after_wrap"] = (
    "https://github.com/liyunsheng13/micronet/issues/22 ('DataParallel' object has no attribute 'classifier')"
)
SEEN["layer_through_module"] = (
    "https://github.com/rdcolema/pytorch-image-classification/issues/2 (optim.Adam(model.module.fc.parameters(), ...))"
)

# round 3: the wrapper bound to ``self`` (``self.model = DataParallel(self.model)``, imported from
# torch.nn.parallel), the model's own part read in another method
PITFALL["trainer_wraps_self_model"] = """
import torch
from torch.nn.parallel import DataParallel
class Trainer:
    def __init__(self, model, lr):
        self.model = model.cuda()
        if torch.cuda.device_count() > 1:
            self.model = DataParallel(self.model)
        self.lr = lr
    def freeze_backbone(self):
        for p in self.model.backbone.parameters():
            p.requires_grad = False
"""
PITFALL["ddp_wrapped_then_grown"] = """
from torch.nn.parallel import DistributedDataParallel as DDP
class GANTrainer:
    def __init__(self, generator, rank):
        self._build(generator, rank)
    def _build(self, generator, rank):
        self.G = DDP(generator.to(rank), device_ids=[rank])
    def grow(self, level):
        self.G.grow_network(level)
"""
NEAR_MISS["trainer_reads_through_module"] = """
from torch.nn.parallel import DataParallel
class Trainer:
    def __init__(self, model):
        self.model = DataParallel(model)
    def freeze_backbone(self):
        for p in self.model.module.backbone.parameters():
            p.requires_grad = False
"""
NEAR_MISS["read_before_wrapping"] = """
from torch.nn.parallel import DataParallel
class Trainer:
    def __init__(self, model):
        self.model = model
        self.model.backbone.requires_grad_(False)
        self.model = DataParallel(self.model)
"""
SEEN["ddp_wrapped_then_grown"] = (
    "https://github.com/nashory/pggan-pytorch/issues/60 (self.G.grow_network on a wrapped generator)"
)
SEEN["trainer_wraps_self_model"] = (
    "https://github.com/layumi/Person_reID_baseline_pytorch/issues/173 (a class holding the wrapped model reads model.model)"
)
NEAR_MISS["read_in_a_step_that_may_run_before_wrapping"] = """
from torch.nn.parallel import DistributedDataParallel as DDP
class Task:
    def __init__(self, student):
        self.trainable = student
    def compile(self):
        self.eval_model = self.trainable.student
    def prepare_distributed(self, device_ids):
        self.trainable = DDP(self.trainable, device_ids=device_ids)
"""
SEEN["read_in_a_step_that_may_run_before_wrapping"] = (
    "timm/task/distillation.py (compile() reads trainable_module.student; its docstring calls compile() before prepare_distributed(), in build/realcode/src)"
)
PITFALL["local_alias_of_wrapped_self_model"] = """
import torch.nn as nn
class Trainer:
    def __init__(self, model):
        self.model = nn.DataParallel(model)
    def save_backbone(self, path):
        import torch
        model = self.model
        torch.save(model.backbone.state_dict(), path)
"""

# round 5: a read in a branch of a test that asks whether this object is wrapped is written for both
# cases (``if isinstance(model, DDP): getattr(model.module, a) else: getattr(model, a)``, the
# get_model_attribute helper found with the search tool, corpus code)
NEAR_MISS["hasattr_module_ifexp"] = """
import torch.nn as nn
class Net(nn.Module):
    def embed(self, x):
        return x
def export(x):
    net = nn.DataParallel(Net())
    fn = net.module.embed if hasattr(net, "module") else net.embed
    return fn(x)
"""
NEAR_MISS["isinstance_branch_on_self"] = """
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
class Net(nn.Module):
    def classifier(self):
        return None
class Runner:
    def __init__(self, rank):
        self.net = DDP(Net(), device_ids=[rank])
    def head(self):
        if isinstance(self.net, (nn.DataParallel, DDP)):
            return self.net.module.classifier()
        else:
            return self.net.classifier()
"""
PITFALL["other_object_tested"] = """
import torch.nn as nn
class Net(nn.Module):
    def embed(self, x):
        return x
def export(x, other):
    net = nn.DataParallel(Net())
    fn = other.module.embed if hasattr(other, "module") else net.embed
    return fn(x)
"""
NEAR_MISS["branch_on_the_wrapping_flag"] = """
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
class Trainer:
    def __init__(self, model, is_distributed, rank):
        self.is_distributed = is_distributed
        if is_distributed:
            model = DDP(model, device_ids=[rank])
        self.model = model
    def before_epoch(self):
        if self.is_distributed:
            self.model.module.head.use_l1 = True
        else:
            self.model.head.use_l1 = True
"""
SEEN["branch_on_the_wrapping_flag"] = (
    "YOLOX yolox/core/trainer.py (the head read through .module when distributed, directly otherwise; "
    "a wrong finding in round 3's read held-out half)"
)

NEAR_MISS["unwrapped_on_the_flag_it_was_wrapped_on"] = """
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def build_model(args):
    model = Sam3D().to("cuda")
    if args.multi_gpu:
        model = DDP(model, device_ids=[args.rank])
    return model
class Trainer:
    def __init__(self, model, args):
        self.model = model
        self.args = args
    def set_optimizer(self):
        if self.args.multi_gpu:
            sam_model = self.model.module
        else:
            sam_model = self.model
        self.optimizer = torch.optim.AdamW([
            {"params": sam_model.image_encoder.parameters()},
            {"params": sam_model.mask_decoder.parameters(), "lr": self.args.lr * 0.1},
        ])
trainer = Trainer(build_model(args), args)
"""
SEEN["unwrapped_on_the_flag_it_was_wrapped_on"] = (
    "uni-medical/SAM-Med3D train.py:140-154 (sam_model = self.model.module under multi_gpu, else self.model; "
    "round 9's tuning half, read wrong)"
)
NEAR_MISS["attribute_the_model_class_never_had"] = """
import torch
from torch import nn
class LIFConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.fc = nn.Linear(8, 10)
    def forward(self, x):
        voltages = self.conv(x).mean((2, 3))
        return self.fc(voltages)
def main(device, lr):
    model = LIFConvNet().to(device)
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model).to(device)
    optimizer = torch.optim.Adam(model.out.parameters(), lr=lr)
    return optimizer
"""
PITFALL["attribute_the_model_class_has"] = NEAR_MISS["attribute_the_model_class_never_had"].replace(
    "model.out.parameters()", "model.fc.parameters()"
)
SEEN["attribute_the_model_class_never_had"] = (
    "norse norse/task/cifar10.py:370 (round 12's held-out half, read wrong: model.out on a LIFConvNet that has "
    "no out at all; .module would not help)"
)
SEEN["attribute_the_model_class_has"] = "the same script reading a layer the class does have"

# round 21 (tuning half): the model's methods copied onto the wrapper (normalizing_flows' glow.py exposes
# log_prob and inverse on its DistributedDataParallel) answer when read there
_EXPOSED = """
import torch
from torch import nn
class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)
    def log_prob(self, x):
        return self.net(x).sum(1)
def train_epoch(model, loader, optimizer):
    for x in loader:
        loss = -model.log_prob(x).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
def main(loader, rank):
    model = torch.nn.parallel.DistributedDataParallel(Flow().cuda(rank), device_ids=[rank])
{expose}    optimizer = torch.optim.Adam(model.parameters())
    train_epoch(model, loader, optimizer)
    return model.log_prob(next(iter(loader)))
"""
NEAR_MISS["method_copied_onto_the_wrapper"] = _EXPOSED.format(expose="    model.log_prob = model.module.log_prob\n")
PITFALL["method_read_on_the_wrapper"] = _EXPOSED.format(expose="")
