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

# round 6: float64 followed through NumPy's linear algebra, slicing and arithmetic
PITFALL["qr_orthogonal_init"] = """
import numpy as np
import torch

def orthogonal_init(layer, gain=1.0):
    rows, cols = layer.weight.shape
    q, r = np.linalg.qr(np.random.normal(0.0, 1.0, (rows, cols)))
    q = q * np.sign(np.diag(r))
    layer.weight.data = torch.from_numpy(gain * q[:rows, :cols])
"""
PITFALL["astype_double_normalised"] = """
import numpy as np
import torch
import torch.nn as nn

def load_vectors(emb: nn.Embedding, table):
    vecs = np.asarray(table).astype("float64")
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    emb.weight = nn.Parameter(torch.from_numpy(unit.T.copy().T))
"""
NEAR_MISS["svd_cast_back_to_float32"] = """
import numpy as np
import torch
import torch.nn as nn

def truncate(fc: nn.Linear, k: int):
    m = fc.weight.detach().numpy().astype(np.float64)
    u, s, vh = np.linalg.svd(m, full_matrices=False)
    low = (u[:, :k] * s[:k]) @ vh[:k]
    fc.weight = nn.Parameter(torch.from_numpy(low.astype(np.float32)))
"""
NEAR_MISS["svd_then_float"] = """
import numpy as np
import torch

def truncate(fc, k):
    m = fc.weight.detach().numpy().astype(np.float64)
    u, s, vh = np.linalg.svd(m, full_matrices=False)
    fc.weight.data = torch.from_numpy(u[:, :k] @ np.diag(s[:k]) @ vh[:k]).float()
"""
NEAR_MISS["svd_of_tensor_numpy"] = """
import numpy as np
import torch

def truncate(fc, k):
    u, s, vh = np.linalg.svd(fc.weight.detach().numpy(), full_matrices=False)
    fc.weight.data = torch.from_numpy((u[:, :k] * s[:k]) @ vh[:k])
"""
SEEN["qr_orthogonal_init"] = ("the Saxe et al. orthogonal initializer in NumPy as the code corpus spells it "
                              "(Q, R = numpy.linalg.qr(M); Q = Q * numpy.sign(numpy.diag(R))), handed to torch "
                              "without a cast")
SEEN["svd_then_float"] = ("code corpus: 'PyTorch port of ortho_init from baselines.a2c.utils' "
                          "(np.linalg.svd of np.random.normal, then torch.from_numpy((scale * q).astype(np.float32)))")
SEEN["svd_cast_back_to_float32"] = ("github.com/Yotterni/ysda_transformer_svd_compression svd_compression/"
                                    "compressed_naive_svd.py (the low-rank factors copied into float32 weights)")
