"""PTF115 (cross-without-dim): torch.cross without dim, a warning since torch 2.2."""
PITFALL = {
    "function_two_args": "import torch\n\ndef normal(a, b):\n    return torch.cross(a, b)\n",
    "method": "def normal(v0, v1, v2):\n    return (v1 - v0).cross(v2 - v0)\n",
    "in_loop": "import torch\n\ndef normals(tris):\n    return [torch.cross(t[1] - t[0], t[2] - t[0]) for t in tris]\n",
    "aliased": "import torch as th\n\nn = th.cross(th.randn(4, 3), th.randn(4, 3))\n",
    "chained_normalize": "import torch\nimport torch.nn.functional as F\n\ndef face_normals(e1, e2):\n    return F.normalize(torch.cross(e1, e2), dim=-1)\n",
}
NEAR_MISS = {
    "dim_keyword": "import torch\n\ndef normal(a, b):\n    return torch.cross(a, b, dim=-1)\n",
    "linalg_cross": "import torch\n\ndef normal(a, b):\n    return torch.linalg.cross(a, b)\n",
    "numpy_cross": "import numpy as np\n\nn = np.cross(np.ones(3), np.zeros(3))\n",
    "dim_positional": "import torch\n\nn = torch.cross(torch.randn(2, 3), torch.randn(2, 3), 1)\n",
}
SEEN = {
    "function_two_args": "https://github.com/uw-ipd/RoseTTAFold2NA/issues/113 (Z = torch.cross(Xn,Yn)); https://github.com/pyg-team/pytorch_geometric/pull/8918",
    "method": "https://github.com/YaoYinYing/RFdiffusion/issues/6 (CBrotaxis1 = (CBr-CAr).cross(NCr-CAr))",
    "in_loop": "https://github.com/openforcefield/smee/issues/163 (z = torch.cross(x_hat, xy_plane_hat[:, 1, :]))",
    "aliased": "not found by search",
    "chained_normalize": "not found by search",
}

# The method form on an object not known to be a tensor is reported only with --preview: a layer or helper
# named ``cross`` is called the same way (round 22's tuning half: torecsys's ``self.cross(emb_inputs)``, a
# cross-network layer). On a tensor the bindings show, it is reported.
PREVIEW = {"method": PITFALL.pop("method")}
PITFALL["method_on_an_annotated_tensor"] = """
import torch
def normal(v0: torch.Tensor, v1: torch.Tensor, v2: torch.Tensor) -> torch.Tensor:
    return (v1 - v0).cross(v2 - v0)
"""
NEAR_MISS["a_layer_named_cross"] = """
import torch
from torch import nn
class CrossLayer(nn.Module):
    def forward(self, x):
        return x * x.sum(-1, keepdim=True)
class DeepCross(nn.Module):
    def __init__(self):
        super().__init__()
        self.cross = CrossLayer()
    def forward(self, emb):
        return self.cross(emb)
"""
SEEN["a_layer_named_cross"] = "round 22 tuning half: torecsys deep_and_cross_network.py (self.cross = CrossNetworkLayer(...))"
