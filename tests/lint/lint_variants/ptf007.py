"""PTF007: functional dropout in a module without training=self.training (or nn.Dropout built in forward)."""

PITFALL = {
    "forward": """
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
    def forward(self, x):
        return F.dropout(self.fc(x), p=0.5)
""",
    "helper_called_from_forward": """
import torch.nn as nn
import torch.nn.functional as F
class Attention(nn.Module):
    def attend(self, scores):
        return F.dropout(scores.softmax(-1), 0.1)
    def forward(self, q, k):
        return self.attend(q @ k.transpose(-1, -2))
""",
    "dropout2d_subclass_of_own_base": """
import torch
import torch.nn.functional as F
class Base(torch.nn.Module):
    pass
class Head(Base):
    def forward(self, x):
        return F.dropout2d(x, 0.1)
""",
    "nn_functional_path": """
from torch import nn
class Block(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p
    def forward(self, x):
        return nn.functional.dropout(x, p=self.p)
""",
    "dropout_module_built_in_forward": """
import torch.nn as nn
class ResNetHead(nn.Module):
    def forward(self, x):
        x = nn.Dropout(p=0.5)(x)
        return x
""",
}

NEAR_MISS = {
    "training_flag": """
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def forward(self, x):
        return F.dropout(x, p=0.5, training=self.training)
""",
    "training_positional": """
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def forward(self, x):
        return F.dropout(x, 0.5, self.training)
""",
    "module_in_init": """
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)
    def forward(self, x):
        return self.drop(x)
""",
    "plain_function": """
import torch.nn.functional as F
def corrupt(x):
    return F.dropout(x, 0.2)
""",
}

SEEN = {
    "forward": "https://github.com/pytorch/pytorch/issues/26338",
    "helper_called_from_forward": "https://github.com/rixwew/pytorch-fm/issues/21",
    "dropout_module_built_in_forward": "https://github.com/yangze0930/NTS-Net/issues/14",
    "training_flag": "https://github.com/BogiHsu/Tacotron2-PyTorch/issues/8",
}

# round 3: the training flag passed, but as a literal True: dropout stays on in eval mode
PITFALL["training_true_positional"] = """
import torch.nn as nn
import torch.nn.functional as F
class Encoder(nn.Module):
    def __init__(self, d, p=0.1):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.p = p
    def forward(self, x):
        h = F.gelu(self.fc(x))
        return F.dropout(h, self.p, True)
"""
PITFALL["training_true_keyword_in_helper"] = """
from torch import nn
from torch.nn import functional as F
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
    def _drop(self, h):
        return F.dropout(h, p=0.5, training=True)
    def forward(self, x):
        return self._drop(self.proj(x))
"""
NEAR_MISS["training_positional_self_training"] = """
import torch.nn as nn
import torch.nn.functional as F
class Encoder(nn.Module):
    def forward(self, h):
        return F.dropout(h, 0.1, self.training)
"""
NEAR_MISS["training_derived_from_self_training"] = """
import torch.nn as nn
import torch.nn.functional as F
class Block(nn.Module):
    def __init__(self, p, deterministic=False):
        super().__init__()
        self.p, self.deterministic = p, deterministic
    def forward(self, h):
        train = self.training and not self.deterministic
        return F.dropout(h, p=self.p, training=train)
"""
SEEN["training_true_keyword_in_helper"] = "https://github.com/BogiHsu/Tacotron2-PyTorch/issues/8 (F.dropout(..., training=True) in the prenet: on in evaluation)"
SEEN["training_positional_self_training"] = "https://github.com/delip/PyTorchNLPBook/issues/28 (the fix: training=self.training)"

# training=True written out is a choice, not a forgotten flag: Tacotron 2 keeps its prenet dropout on at
# inference on purpose (https://github.com/NVIDIA/tacotron2/issues/247, "mentioned in the original
# Tacotron2 paper"; https://github.com/NVIDIA/DeepLearningExamples/pull/457, "This is intentional")
NEAR_MISS.update({name: PITFALL.pop(name) for name in ("training_true_positional", "training_true_keyword_in_helper")})

# A switch of the module's own around F.dropout: a setting fixed at construction keeps dropping in eval mode; one
# the code flips at run time (Monte-Carlo dropout turned on and off around acting) is a deliberate mode.
_SWITCH = """
import torch
import torch.nn.functional as F
from torch import nn
class RewardNet(nn.Module):
    def __init__(self, dims, dropout_p=None):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims, dims[1:]))
        self.dropout_p = dropout_p
        self.use_dropout = dropout_p is not None
    def forward(self, x):
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
            if self.use_dropout is True:
                x = F.dropout(x, self.dropout_p)
        return self.layers[-1](x)
def select_action(model, context, sample):
{act}
"""
PITFALL["dropout_behind_a_setting_fixed_at_construction"] = _SWITCH.format(
    act="    model.eval()\n    with torch.no_grad():\n        return model(context).argmax()"
)
NEAR_MISS["dropout_behind_a_switch_flipped_when_acting"] = _SWITCH.format(
    act="    model.use_dropout = sample\n    with torch.no_grad():\n        return model(context).argmax()"
)
SEEN["dropout_behind_a_setting_fixed_at_construction"] = (
    "round 18's tuning half, read (genrl's contextual-bandit models: F.dropout under 'if self.dropout_p is not None "
    "and self.use_dropout is True:', the flag set by the trainer and by each agent's select_action; 4 findings "
    "read wrong)"
)
SEEN["dropout_behind_a_switch_flipped_when_acting"] = SEEN["dropout_behind_a_setting_fixed_at_construction"]
