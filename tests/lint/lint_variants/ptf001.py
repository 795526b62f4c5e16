"""PTF001: nn.init's deprecated names without the trailing underscore."""

PITFALL = {
    "nn_alias": """
import torch.nn as nn
layer = nn.Linear(4, 3)
nn.init.xavier_uniform(layer.weight)
""",
    "init_module_in_loop": """
import torch
from torch.nn import init
def reset(model):
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            init.kaiming_normal(m.weight, mode="fan_out")
            init.constant(m.bias, 0)
""",
    "full_path_in_method": """
import torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 2)
        torch.nn.init.normal(self.fc.weight, 0, 0.01)
""",
    "import_as_init": """
import torch.nn.init as init
def weights_init(m):
    init.xavier_normal(m.weight.data)
""",
    "from_import_name": """
from torch.nn.init import orthogonal
from torch import nn
rnn = nn.LSTM(4, 8)
orthogonal(rnn.weight_hh_l0)
""",
}

NEAR_MISS = {
    "underscore_names": """
import torch.nn as nn
layer = nn.Linear(4, 3)
nn.init.xavier_uniform_(layer.weight)
nn.init.zeros_(layer.bias)
""",
    "calculate_gain": """
from torch.nn import init
gain = init.calculate_gain("relu")
""",
    "own_function_named_like_it": """
def xavier_uniform(shape):
    return [0.0] * shape
w = xavier_uniform(3)
""",
}

SEEN = {
    "nn_alias": "https://github.com/ml-jku/hti-cnn/pull/2",
    "full_path_in_method": "https://github.com/NVIDIA/tacotron2/pull/67",
    "init_module_in_loop": "https://github.com/dsgiitr/d2l-pytorch/pull/17",
}
