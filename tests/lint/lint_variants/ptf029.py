"""PTF029: a weight set from a float64 NumPy array (torch.from_numpy keeps float64)."""

PITFALL = {
    "rng_normal_data": """
import numpy as np
import torch
import torch.nn as nn
rng = np.random.default_rng(0)
layer = nn.Linear(3, 2)
layer.weight.data = torch.from_numpy(rng.normal(0, 0.5, size=(2, 3)))
""",
    "np_random_parameter": """
import numpy as np
import torch
from torch import nn
def init(model):
    model.fc.weight = nn.Parameter(torch.from_numpy(np.random.randn(10, 4)))
""",
    "bound_array_to_device": """
import numpy as np
import torch
def load_bias(layer, device):
    b = np.zeros(layer.out_features)
    layer.bias.data = torch.from_numpy(b).to(device)
""",
    "in_loop_over_layers": """
import numpy as np
import torch
def randomise(layers):
    for m in layers:
        m.weight.data = torch.from_numpy(np.random.uniform(-0.1, 0.1, m.weight.shape))
""",
    "random_state": """
import numpy as np
import torch
import torch.nn as nn
rs = np.random.RandomState(1)
emb = nn.Embedding(10, 4)
emb.weight = nn.Parameter(torch.from_numpy(rs.standard_normal((10, 4))))
""",
}

NEAR_MISS = {
    "float_conversion": """
import numpy as np
import torch
import torch.nn as nn
layer = nn.Linear(3, 2)
layer.weight.data = torch.from_numpy(np.random.randn(2, 3)).float()
""",
    "float32_dtype": """
import numpy as np
import torch
import torch.nn as nn
layer = nn.Linear(3, 2)
layer.weight.data = torch.from_numpy(np.zeros((2, 3), dtype=np.float32))
""",
    "copy_into_parameter": """
import numpy as np
import torch
import torch.nn as nn
layer = nn.Linear(3, 2)
with torch.no_grad():
    layer.weight.copy_(torch.from_numpy(np.random.randn(2, 3)))
""",
    "to_float32": """
import numpy as np
import torch
import torch.nn as nn
layer = nn.Linear(3, 2)
layer.weight.data = torch.from_numpy(np.random.randn(2, 3)).to(torch.float32)
""",
}

SEEN = {
    "rng_normal_data": "https://github.com/OUCMachineLearning/OUCML/issues/24",
    "np_random_parameter": "https://github.com/pytorch/pytorch/issues/2138",
    "float_conversion": "https://github.com/timeseriesAI/tsai/issues/468",
    "copy_into_parameter": "https://github.com/pytorch/pytorch/issues/2138 (weight.data.copy_ converts)",
}
