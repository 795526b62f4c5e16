"""PTF015: a tensor kept as a plain attribute of an nn.Module (not a buffer, not a Parameter)."""

PREVIEW = {
    "tensor_literal": """
import torch
import torch.nn as nn
class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.offset = torch.tensor([1.0, 2.0, 3.0])
    def forward(self, x):
        return x + self.offset
""",
    "mask_in_attention": """
import torch
from torch import nn
class CausalSelfAttention(nn.Module):
    def __init__(self, block_size):
        super().__init__()
        self.mask = torch.tril(torch.ones(block_size, block_size))
        self.scale = torch.ones(1)
""",
    "positional_table_zeros": """
import torch
import torch.nn as nn
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000):
        super().__init__()
        self.pe = torch.zeros(max_len, d_model)
""",
    "subclass_of_own_base": """
import torch
import torch.nn as nn
class Base(nn.Module):
    pass
class Normalizer(Base):
    def __init__(self):
        super().__init__()
        self.mean = torch.tensor([0.485, 0.456, 0.406])
        self.std = torch.tensor([0.229, 0.224, 0.225])
""",
    "lightning_module_eye": """
import torch
import pytorch_lightning as pl
class Model(pl.LightningModule):
    def __init__(self, n):
        super().__init__()
        self.identity = torch.eye(n)
""",
}

NEAR_MISS = {
    "register_buffer": """
import torch
import torch.nn as nn
class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("offset", torch.tensor([1.0, 2.0, 3.0]))
""",
    "parameter": """
import torch
import torch.nn as nn
class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))
""",
    "not_a_module": """
import torch
class Meter:
    def __init__(self):
        self.total = torch.zeros(1)
""",
    "cache_in_forward": """
import torch
import torch.nn as nn
class Probe(nn.Module):
    def forward(self, x):
        self.last = torch.zeros_like(x)
        return x
""",
    "scalar_from_a_number_parameter": "import torch\nfrom torch import nn\n\nclass DropPath(nn.Module):\n    def __init__(self, drop_rate=0.1):\n        super().__init__()\n        self.drop_rate = torch.tensor(drop_rate)\n\n    def forward(self, x):\n        keep = torch.rand(x.shape[0], 1, device=x.device) > self.drop_rate\n        return x * keep\n",
    "index_mask_only": "import torch\nfrom torch import nn\n\nclass Embedder(nn.Module):\n    def __init__(self, n_features, n_continuous):\n        super().__init__()\n        self.continuous_idx = torch.zeros(n_features, dtype=torch.bool)\n        self.continuous_idx[:n_continuous] = True\n        self.proj = nn.Linear(n_continuous, 8)\n\n    def forward(self, x):\n        return self.proj(x[:, self.continuous_idx])\n",
    "placeholder_with_no_element": "import torch\nfrom torch import nn\n\nclass Packed(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.dummy_offsets = torch.empty(0)\n\n    def forward(self, x, offsets=None):\n        return x if offsets is None else x + self.dummy_offsets.sum()\n",
    "reduced_to_a_scalar": "import torch\nfrom torch import nn\n\nclass Head(nn.Module):\n    def __init__(self, input_shape):\n        super().__init__()\n        self.fea_dim = torch.prod(torch.tensor(input_shape[1:]))\n\n    def forward(self, x):\n        return x.flatten(1) / self.fea_dim\n",
    "replaced_on_the_device_at_run_time": "import torch\nfrom torch import nn\n\nclass Scheduler(nn.Module):\n    def __init__(self, n=1000):\n        super().__init__()\n        self.timesteps = torch.arange(n - 1, -1, -1)\n\n    def set_timesteps(self, k, device):\n        self.timesteps = torch.linspace(0, 999, k).long().to(device)\n\n    def forward(self, x):\n        return x * self.timesteps[0]\n",
}

PREVIEW["cpu_script_converting_only_tensors"] = """
import numpy as np
import torch
import torch.nn as nn
class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.clip = torch.tensor(1.0) * 0.5
    def forward(self, x):
        return self.fc(x).clamp(-self.clip, self.clip)
class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
def main():
    pi, q, q_target = Policy(), Critic(), Critic()
    q_target.load_state_dict(q.state_dict())
    s = np.zeros(4, dtype=np.float32)
    return pi(torch.from_numpy(s).float())
"""

SEEN = {
    "cpu_script_converting_only_tensors": "seungeunrho/minimalRL vtrace.py and sac.py (CPU-only scripts: .float() only on tensors, state_dict only of another network; round 16's held-out half read them harmless)",
    "lightning_module_eye": "https://github.com/Lightning-AI/pytorch-lightning/issues/3674",
    "positional_table_zeros": "https://github.com/pytorch/audio/pull/457",
    "tensor_literal": "https://github.com/pytorch/pytorch/issues/2641",
    "register_buffer": "https://github.com/Lightning-AI/pytorch-lightning/issues/1978",
}

# round 3: the tensor is arithmetic on a factory (a BinOp/UnaryOp with a tensor operand is a tensor)
PREVIEW["scaled_ones"] = """
import torch
from torch import nn
class ScaledAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.scale = torch.ones(dim) * dim ** -0.5
"""
PREVIEW["normalised_positions"] = """
import torch
import torch.nn as nn
class TimeEmbedding(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.positions = -torch.arange(n).float() / n
"""
NEAR_MISS["scaled_buffer"] = """
import torch
import torch.nn as nn
class Norm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("batch_mean", torch.ones(1) * 20)
        self.register_buffer("scale", torch.ones(dim) * dim ** -0.5)
"""
NEAR_MISS["python_number_arithmetic"] = """
import torch.nn as nn
class Head(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = dim ** -0.5
        self.size = len(range(dim)) * 2
"""
SEEN["scaled_buffer"] = (
    "https://github.com/mk-minchul/AdaFace/issues/15 (register_buffer('batch_mean', torch.ones(1)*(20)))"
)

# round 5: the attribute is computed from a local name bound to a tensor (a factory, through
# arithmetic and method chains): as unregistered as the factory's own result
PREVIEW["inverse_frequency_weights"] = """
import numpy as np
import torch
import torch.nn as nn
class WeightedHead(nn.Module):
    def __init__(self, counts, dim):
        super().__init__()
        self.proj = nn.Linear(dim, len(counts))
        n = torch.from_numpy(np.asarray(counts, dtype=np.float32))
        self.loss_weight = (n.max() / n).sqrt()
"""
PREVIEW["local_mask_then_bool"] = """
import torch
from torch import nn
class CausalBlock(nn.Module):
    def __init__(self, size):
        super().__init__()
        tri = torch.ones(size, size)
        tri = torch.tril(tri)
        self.mask = tri.bool()
"""
NEAR_MISS["local_tensor_registered"] = """
import torch
from torch import nn
class WeightedHead(nn.Module):
    def __init__(self, counts):
        super().__init__()
        n = torch.as_tensor(counts, dtype=torch.float32)
        self.register_buffer("loss_weight", n.sum() / n)
        self.num_classes = n.numel()
"""
NEAR_MISS["local_tensor_as_parameter"] = """
import torch
from torch import nn
class Prior(nn.Module):
    def __init__(self, counts):
        super().__init__()
        n = torch.tensor(counts, dtype=torch.float32)
        self.logit_bias = nn.Parameter(torch.log(n / n.sum()))
        self.total = int(n.sum())
"""
SEEN["inverse_frequency_weights"] = (
    "https://github.com/mk-minchul/AdaFace/issues/15 (a tensor kept on the module without register_buffer)"
)

# round 7: an ``_apply(self, fn)`` override (what .to()/.cuda()/.half() all call) that reassigns the
# attribute from ``fn(...)`` moves it; a package's model class may do it for its head's attributes
# (read from the package's files on disk: tests/lint/test_lint_scope.py has the two-file case)
NEAR_MISS["own_apply_moves_it"] = """
import torch
from torch import nn
class FilterBank(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.window = torch.hann_window(n)
    def _apply(self, fn, recurse=True):
        super()._apply(fn, recurse)
        self.window = fn(self.window)
        return self
"""
NEAR_MISS["parent_apply_moves_head_attribute"] = """
import torch
import torch.nn as nn
class Head(nn.Module):
    def __init__(self, levels):
        super().__init__()
        self.level_strides = torch.zeros(levels)
class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Conv2d(3, 8, 3), Head(3)])
    def _apply(self, func):
        out = super()._apply(func)
        last = self.layers[-1]
        if isinstance(last, Head):
            last.level_strides = func(last.level_strides)
        return out
"""
NEAR_MISS["apply_setattr_over_names"] = """
import torch
from torch import nn
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.mean = torch.as_tensor(mean)
        self.std = torch.as_tensor(std)
    def _apply(self, fn):
        super()._apply(fn)
        for attr in ("mean", "std"):
            setattr(self, attr, fn(getattr(self, attr)))
        return self
"""
PREVIEW["apply_moves_another_attribute"] = """
import torch
from torch import nn
class Grid(nn.Module):
    def __init__(self, h, w):
        super().__init__()
        self.anchor_points = torch.zeros(h * w, 2)
        self.offsets = torch.ones(h * w)
    def _apply(self, fn):
        super()._apply(fn)
        self.anchor_points = fn(self.anchor_points)
        return self
"""
PREVIEW["apply_override_that_only_logs"] = """
import torch
import torch.nn as nn
class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.history = torch.zeros(100)
    def _apply(self, fn):
        print("moving", type(self).__name__)
        return super()._apply(fn)
"""
SEEN["own_apply_moves_it"] = (
    "https://github.com/gdalsanto/flamo/pull/30 (overrides _apply, the hook behind "
    ".to()/.cuda(), to apply fn to the plain-tensor attributes it keeps)"
)
SEEN["parent_apply_moves_head_attribute"] = (
    "https://github.com/pytorch/pytorch/issues/2641 (a plain tensor "
    "attribute is not moved by .cuda(): what the override answers)"
)
NEAR_MISS["metadata_read_for_its_length_and_messages"] = """
import torch
from torch import nn
class SpeciesConverter(nn.Module):
    def __init__(self, symbols):
        super().__init__()
        self.register_buffer("conv_tensor", torch.full((120,), -1, dtype=torch.long))
        self.atomic_numbers = torch.tensor([ord(s[0]) for s in symbols], dtype=torch.long)
    def forward(self, species):
        if species.max() >= len(self.atomic_numbers):
            raise ValueError(f"unknown species; supported: {self.atomic_numbers}")
        return self.conv_tensor[species]
"""
SEEN["metadata_read_for_its_length_and_messages"] = (
    "torchani nn/_containers.py SpeciesConverter (atomic_numbers read only by len() and an error message; "
    "a harmless finding in round 3's read held-out half)"
)

NEAR_MISS["index_tensor_cast_at_use"] = """
import torch
from torch import nn
class MultKAN(nn.Module):
    def __init__(self, width_in):
        super().__init__()
        self.layer = nn.Linear(width_in, 4)
        self.input_id = torch.arange(width_in)
    def forward(self, x):
        x = x[:, self.input_id.long()]
        return self.layer(x)
"""
SEEN["index_tensor_cast_at_use"] = (
    "KindXiaoming/pykan kan/MultKAN.py (input_id, read only as x[:, self.input_id.long()]; round 7's tuning half)"
)

NEAR_MISS["constant_table_placed_at_each_call"] = """
import numpy as np
import torch
def calculate_niqe(img, mu_pris_param, cov_pris_param):
    img = img.to(torch.float64)
    mu_pris_param = mu_pris_param.to(img).repeat(img.size(0), 1)
    cov_pris_param = cov_pris_param.to(img).repeat(img.size(0), 1, 1)
    return (img.mean() - mu_pris_param.mean()) ** 2 + cov_pris_param.mean()
class NIQE(torch.nn.Module):
    def __init__(self, params_path):
        super().__init__()
        params = np.load(params_path)
        self.mu_pris_param = torch.from_numpy(params["mu"])
        self.cov_pris_param = torch.from_numpy(params["cov"])
        self.scale = torch.tensor([0.5, 0.25])
    def forward(self, x):
        weights = self.scale.to(x)
        return weights.sum() * calculate_niqe(x, self.mu_pris_param, self.cov_pris_param)
"""
SEEN["constant_table_placed_at_each_call"] = (
    "chaofengc/IQA-PyTorch pyiqa/archs/niqe_arch.py (NIQE's prior tables, moved with .to(img) in "
    "calculate_niqe at each call; round 9's read held-out half)"
)

PREVIEW["built_and_run_where_it_was_made"] = PREVIEW["tensor_literal"] + """
print(Affine()(torch.zeros(2, 3)))
"""

# The same pitfalls where the file builds the model and moves or saves it: reported at the default level.
PITFALL = {
    "offset_moved_to_cuda": PREVIEW["tensor_literal"]
    + """
model = Affine().cuda()
y = model(torch.randn(4, 3, device="cuda"))
""",
    "causal_mask_model_saved": """
import torch
from torch import nn
class CausalSelfAttention(nn.Module):
    def __init__(self, block_size, d):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.mask = torch.tril(torch.ones(block_size, block_size))
    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = (q @ k.transpose(-2, -1)).masked_fill(self.mask[: x.size(1), : x.size(1)] == 0, float("-inf"))
        return att.softmax(-1) @ v
attn = CausalSelfAttention(128, 64)
torch.save(attn.state_dict(), "attn.pt")
""",
    "normalizer_subclass_to_device": PREVIEW["subclass_of_own_base"]
    + """
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
norm = Normalizer().to(device)
""",
    "positional_table_half_precision": """
import math
import torch
import torch.nn as nn
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=512):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div)
        pe[:, 1::2] = torch.cos(position * div)
        self.pe = pe.unsqueeze(0)
    def forward(self, x):
        return x + self.pe[:, : x.size(1)]
encoder = nn.Sequential(nn.Embedding(1000, 64), PositionalEncoding(64)).half()
""",
    "lightning_identity_trained_on_gpu": PREVIEW["lightning_module_eye"]
    + """
model = Model(8).to("cuda")
""",
}

# Each guard is held at --preview too: a near miss is a module class alone, reported (labelled) only there.
GUARDS_AT_PREVIEW = True

# A tensor made to learn is left out of parameters() wherever the model is built: the class alone is enough.
PITFALL["learned_scale_outside_parameters"] = """
import torch
from torch import nn
class LooseScale(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.scale = torch.ones(n, requires_grad=True)
    def forward(self, x):
        return x * self.scale
"""
PITFALL["running_statistics_updated_from_themselves"] = """
import torch
from torch import nn
class RunningNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.mean = torch.zeros(dim)
        self.var = torch.ones(dim)
        self.count = 1e-4
    @torch.no_grad()
    def update(self, batch):
        b_mean, b_var, n = batch.mean(0), batch.var(0, unbiased=False), batch.shape[0]
        delta, total = b_mean - self.mean, self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + b_var * n + delta ** 2 * self.count * n / total) / total
        self.count = total
    def forward(self, x):
        return (x - self.mean) / torch.sqrt(self.var + 1e-8)
class Policy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.norm = RunningNorm(obs_dim)
        self.pi = nn.Linear(obs_dim, act_dim)
    def forward(self, obs):
        return self.pi(self.norm(obs))
def train(obs_batches, path):
    policy = Policy(8, 2)
    for obs in obs_batches:
        policy.norm.update(obs)
    torch.save(policy.state_dict(), path)
"""
NEAR_MISS["running_statistics_registered_as_buffers"] = """
import torch
from torch import nn
class RunningNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("var", torch.ones(dim))
        self.register_buffer("count", torch.tensor(1e-4))
    @torch.no_grad()
    def update(self, batch):
        b_mean, b_var, n = batch.mean(0), batch.var(0, unbiased=False), batch.shape[0]
        delta, total = b_mean - self.mean, self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + b_var * n + delta ** 2 * self.count * n / total) / total
        self.count = total
    def forward(self, x):
        return (x - self.mean) / torch.sqrt(self.var + 1e-8)
def train(obs_batches, path):
    norm = RunningNorm(8)
    for obs in obs_batches:
        norm.update(obs)
    torch.save(norm.state_dict(), path)
"""
SEEN["running_statistics_updated_from_themselves"] = (
    "fresh set 9's q09 (tuning half, read): a PPO policy's observation RunningNorm keeping mean and var as plain "
    "tensors updated by Welford's rule, the policy saved with state_dict(); the same update on registered buffers "
    "in public code (find_string 'self.mean = self.mean + delta')"
)
SEEN["running_statistics_registered_as_buffers"] = (
    "find_string 'self.mean = self.mean + delta': a RunningMeanStd nn.Module with register_buffer('mean', ...), "
    "('var', ...), ('count', ...) and the same update"
)
# Statistics fitted by a method the forward pass never runs (sklearn's fit / fit_transform) are state: the
# checkpoint needs them, and a copy of the model rebuilt from state_dict() standardises with the placeholders.
PITFALL["statistics_fitted_outside_forward"] = """
import torch
from torch import nn
class FeatureScaler(nn.Module):
    def __init__(self, n, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.mean = torch.zeros(n)
        self.std = torch.ones(n)
    def fit_transform(self, x):
        self.mean = x.mean(0)
        self.std = x.std(0)
        return self.forward(x)
    def forward(self, x):
        return (x - self.mean) / (self.std + self.eps)
class Regressor(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.scaler = FeatureScaler(n)
        self.head = nn.Linear(n, 1)
    def forward(self, x):
        return self.head(self.scaler(x))
def export(x_train, path):
    model = Regressor(x_train.shape[1])
    model.scaler.fit_transform(x_train)
    torch.save(model.state_dict(), path)
"""
# A cache that a helper of the forward pass rebuilds from the input is recomputed wherever the model runs.
NEAR_MISS["cache_rebuilt_by_a_helper_of_forward"] = """
import torch
from torch import nn
class Rotary(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)))
        self.cos_cached = torch.ones(1, dim // 2)
        self.seq_len_cached = 0
    def _refresh(self, seq_len, device):
        t = torch.arange(seq_len, device=device).type_as(self.inv_freq)
        self.cos_cached = torch.outer(t, self.inv_freq).cos()
        self.seq_len_cached = seq_len
    def forward(self, x):
        if x.shape[1] != self.seq_len_cached:
            self._refresh(x.shape[1], x.device)
        return x * self.cos_cached[: x.shape[1]].repeat(1, 2)
def export(path):
    model = Rotary(8)
    torch.save(model.state_dict(), path)
"""
SEEN["statistics_fitted_outside_forward"] = (
    "fresh set 15's j17 (held-out half, scored): a Standardize module whose fit() sets mean and scale, its model "
    "exported with state_dict(); the scaler API in public code (find_string 'self.mean = x.mean(0)': fit and "
    "fit_transform setting mean and std, a UnitGaussianNormalizer with its own .to())"
)
SEEN["cache_rebuilt_by_a_helper_of_forward"] = (
    "rotary-embedding caches in public code: cos_cached rebuilt by a helper that forward calls when the sequence "
    "grows (find_string 'self.seq_len_cached')"
)
