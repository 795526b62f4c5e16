"""PTF280 (save-whole-model-pickles-class): torch.save() of a whole module instead of its state_dict."""

PITFALL = {
    "class_in_the_training_script": """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)
    def forward(self, x):
        return self.fc(x.flatten(1))
net = Net()
for epoch in range(3):
    pass
torch.save(net, "checkpoint/net_epoch_%d.pth" % epoch)
""",
    "optional_whole_model_flag": """
import os
import torch
import torchvision
def save(model, model_dir, epoch, all_model):
    path = os.path.join(model_dir, "model_" + str(epoch) + ".pth")
    if all_model:
        torch.save(model, path)
    else:
        torch.save(model.state_dict(), path)
model = torchvision.models.mobilenet_v2(num_classes=136)
save(model, "out", 1, True)
""",
    "inner_model_of_data_parallel": """
import torch
import torch.nn as nn
def train(net, epochs):
    net = nn.DataParallel(net).cuda()
    for epoch in range(epochs):
        torch.save(net.module, "retina_{}.pt".format(epoch))
train(nn.Sequential(nn.Conv2d(3, 8, 3)), 2)
""",
    "module_saving_itself": """
import torch
from torch import nn
class Network(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleDict()
    def save(self, file_name):
        torch.save(self, open(file_name, "wb"))
""",
    "model_in_a_checkpoint_dict": """
import torch
import torch.nn as nn
model = nn.LSTM(32, 64, batch_first=True)
opt = torch.optim.Adam(model.parameters())
torch.save({"model": model, "optimizer": opt.state_dict(), "epoch": 3}, "ckpt.pt")
""",
    "trainer_attribute": """
import torch
from torch import nn
class Trainer:
    def __init__(self, model: nn.Module):
        self.model = nn.Sequential(model, nn.Softmax(dim=-1))
    def checkpoint(self, path):
        torch.save(self.model, path)
""",
}

PREVIEW = {
    "class_imported_from_the_project": """
import torch
from models import RNNModel
model = RNNModel(10000, 200)
with open("model.pt", "wb") as f:
    torch.save(model, f)
""",
}

NEAR_MISS = {
    "state_dict": """
import torch
import torch.nn as nn
net = nn.Linear(4, 2)
torch.save(net.state_dict(), "weights.pt")
""",
    "checkpoint_of_state_dicts": """
import torch
import torch.nn as nn
model = nn.GRU(8, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "config": {"hidden": 8}}, "ckpt.pt")
""",
    "deep_copy_through_memory": """
import io
import torch
from torch import nn
class Network(nn.Module):
    def clone(self):
        buffer = io.BytesIO()
        torch.save(self, buffer)
        buffer.seek(0)
        return torch.load(buffer, weights_only=False)
""",
    "tensors_and_parameters": """
import torch
import torch.nn as nn
model = nn.Linear(3, 1)
torch.save(torch.randn(3, 3), "x.pt")
torch.save([p.detach() for p in model.parameters()], "params.pt")
torch.save(model.weight, "weight.pt")
""",
    "unknown_object_of_another_library": """
import torch
def dump(obj, path):
    torch.save(obj, path)
""",
}

SEEN = {
    "class_in_the_training_script": "https://github.com/pytorch/pytorch/issues/7812 (torch.save(model, path) in train.py; Can't get attribute 'Net' on <module '__main__'>)",
    "optional_whole_model_flag": "https://github.com/github-luffy/PFLD_68points_Pytorch/issues/25 (if args.all_model: torch.save(model, checkpoint_path))",
    "inner_model_of_data_parallel": "yhenon/pytorch-retinanet train.py (torch.save(retinanet.module, '{}_retinanet_{}.pt'.format(...)))",
    "module_saving_itself": "BindsNET/bindsnet bindsnet/network/network.py (Network.save: torch.save(self, open(file_name, 'wb')))",
    "model_in_a_checkpoint_dict": "https://github.com/pytorch/pytorch/issues/2762 (a whole model pickled; the class must be importable where it is loaded)",
    "trainer_attribute": "sooftware/kospeech kospeech/checkpoint/checkpoint.py (torch.save(self.model, ...))",
    "class_imported_from_the_project": "https://github.com/chenxie95/deeplearning_course_sjtu/issues/28 (torch.save(model, f) of an RNNModel from model.py; AttributeError when loaded from another folder)",
    "deep_copy_through_memory": "BindsNET/bindsnet bindsnet/network/network.py (Network.clone: torch.save(self, SpooledTemporaryFile) and load back in the same process)",
    "state_dict": "PyTorch tutorial Saving and Loading Models (the recommended approach)",
}
