"""PTF019: a negative slice step on a tensor."""

PITFALL = {
    "reverse_factory": """
import torch
a = torch.arange(12).float()
print(a[::-1])
""",
    "second_axis_batch": """
def reverse_time(loader):
    for x, y in loader:
        yield x[:, ::-1], y
""",
    "annotated_param": """
import torch
def bidirectional(seq: torch.Tensor):
    return torch.cat([seq, seq[::-1]])
""",
    "model_output": """
import torch.nn as nn
rnn = nn.Linear(4, 4)
def backwards(x):
    out = rnn(x)
    return out[::-2]
""",
    "method_chain": """
import torch
def flipped(t: torch.Tensor):
    return t.sum(dim=0)[..., ::-1]
""",
}

NEAR_MISS = {
    "flip": """
import torch
a = torch.arange(6)
r = a.flip(0)
""",
    "numpy_array": """
import numpy as np
a = np.arange(6)
r = a[::-1]
""",
    "meshgrid_tuple": """
import torch
def grid(h, w):
    coords = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    return torch.stack(coords[::-1], dim=0)
""",
    "model_output_tuple": """
import torch.nn as nn
class Neck(nn.Module):
    def forward(self, feats):
        return tuple(feats), tuple(feats)
neck = Neck()
def top_down(feats, n):
    hidden, pos = neck(feats)
    return hidden[-n:][::-1]
""",
    "python_list": """
xs = [1, 2, 3]
r = xs[::-1]
""",
    "positive_step_after_flip": """
import torch
x = torch.arange(6.0)
y = x.flip(0)[::2]
""",
}

PITFALL["reversed_input_of_a_recurrent_layer"] = """
import torch
from torch import nn
class BiEncoder(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.fwd = nn.LSTM(n_in, n_hidden, batch_first=True)
        self.bwd = nn.LSTM(n_in, n_hidden, batch_first=True)
    def forward(self, seq):
        ahead, _ = self.fwd(seq)
        behind, (h, c) = self.bwd(seq[:, ::-1, :])
        return torch.cat([ahead, behind[:, ::-1, :]], dim=-1)
"""
PITFALL["time_reversed_signal_into_a_convolution"] = """
from torch import nn
class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 8, 5)
    def forward(self, wave):
        return self.conv(wave[..., ::-1]).mean()
"""
NEAR_MISS["skip_list_reversed_for_a_decoder"] = """
from torch import nn
class UNet(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder
    def forward(self, x):
        skips = self.encoder(x)
        return self.decoder(skips[::-1])
"""
NEAR_MISS["state_of_a_recurrent_layer"] = """
from torch import nn
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(16, 32, num_layers=2)
    def forward(self, x):
        out, state = self.rnn(x)
        return out, state[::-1]
"""

SEEN = {
    "reversed_input_of_a_recurrent_layer": "benchmarks/fresh/lint14 n14_household_load_forecast.py (tuning half, missed at its first run: a hand-made bidirectional GRU reversing its input and output with ::-1)",
    "reverse_factory": "https://github.com/pytorch/pytorch/issues/99297",
    "second_axis_batch": "https://github.com/pytorch/pytorch/issues/229",
    "annotated_param": "https://github.com/pytorch/pytorch/issues/604",
    "method_chain": "https://github.com/ecmwf/earthkit-meteo/issues/73",
    "meshgrid_tuple": "torchvision/models/optical_flow/_utils.py make_coords_grid (torchvision 0.29.1)",
    "model_output_tuple": "transformers/models/sam2/modeling_sam2.py Sam2VisionModel.forward (fpn_hidden_states[...][::-1])",
}
