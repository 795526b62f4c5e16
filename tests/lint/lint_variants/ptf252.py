"""PTF252 (inplace-edit-through-data): an in-place edit through .data between a forward and its backward."""

PITFALL = {
    "wgan_clip_between_loss_and_backward": """
import torch
from torch import nn
D = nn.Sequential(nn.Linear(64, 128), nn.LeakyReLU(0.2), nn.Linear(128, 1))
G = nn.Sequential(nn.Linear(16, 64), nn.Tanh())
opt_d = torch.optim.RMSprop(D.parameters(), lr=5e-5)
for step in range(100):
    real = torch.randn(32, 64)
    with torch.no_grad():
        fake = G(torch.randn(32, 16))
    loss_d = D(fake).mean() - D(real).mean()
    for p in D.parameters():
        p.data.clamp_(-0.01, 0.01)
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
""",
    "layer_weight_clamped_before_backward": """
import torch
from torch import nn
def train_step(encoder, head, x, y, opt):
    loss = nn.functional.mse_loss(head(torch.relu(encoder(x))), y)
    head.weight.data.clamp_(-1.0, 1.0)
    opt.zero_grad()
    loss.backward()
    opt.step()
encoder, head = nn.Linear(8, 8), nn.Linear(8, 1)
""",
    "max_norm_rescale_in_trainer_method": """
import torch
from torch import nn
class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
    def step(self, x, y):
        out = self.model(x)
        loss = nn.functional.cross_entropy(out, y)
        for name, w in self.model.named_parameters():
            if "weight" in name:
                w.data.mul_(1.0 / max(1.0, w.data.norm().item()))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
""",
    "weight_data_reassigned_before_backward": """
import torch
from torch import nn
net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x, y = torch.randn(64, 4), torch.randn(64, 1)
for epoch in range(10):
    pred = net(x)
    loss = ((pred - y) ** 2).mean()
    net[2].weight.data = net[2].weight.data.clamp(min=0.0)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "activation_edited_through_data": """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(10, 10), nn.Linear(10, 1)
    def forward(self, x):
        return self.fc2(torch.sigmoid(self.fc1(x)))
def fit(model, x, y, opt):
    h = torch.sigmoid(model.fc1(x))
    loss = ((model.fc2(h) - y) ** 2).mean()
    h.data.clamp_(0.05, 0.95)
    loss.backward()
    opt.step()
""",
    "self_critic_clip_in_gan_class": """
import torch
from torch import nn
class WGAN(nn.Module):
    def __init__(self, gen, dis, clip=0.01):
        super().__init__()
        self.gen, self.dis, self.clip = gen, dis, clip
    def critic_step(self, real, z, optim):
        optim.zero_grad()
        loss = self.dis(self.gen(z).detach()).mean() - self.dis(real).mean()
        for p in self.dis.parameters():
            p.data.clamp_(-self.clip, self.clip)
        loss.backward()
        optim.step()
        return loss
""",
}

NEAR_MISS = {
    "wgan_clip_after_step": """
import torch
from torch import nn
D = nn.Sequential(nn.Linear(64, 128), nn.LeakyReLU(0.2), nn.Linear(128, 1))
opt_d = torch.optim.RMSprop(D.parameters(), lr=5e-5)
for step in range(100):
    real, fake = torch.randn(32, 64), torch.randn(32, 64)
    loss_d = D(fake).mean() - D(real).mean()
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    for p in D.parameters():
        p.data.clamp_(-0.01, 0.01)
""",
    "clip_before_the_forward": """
import torch
from torch import nn
class WGAN(nn.Module):
    def __init__(self, gen, dis, wc=0.01):
        super().__init__()
        self.gen, self.dis, self.wc = gen, dis, wc
    def train_dis_step(self, inputs, z, optim):
        optim.zero_grad()
        for p in self.dis.parameters():
            p.data.clamp_(-self.wc, self.wc)
        fake = self.gen(z).detach()
        loss = self.dis(fake).mean() - self.dis(inputs).mean()
        loss.backward()
        optim.step()
""",
    "init_through_data": """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 1)
        self.fc.weight.data.normal_(0.0, 0.02)
        self.fc.bias.data.zero_()
    def forward(self, x):
        return self.fc(x)
""",
    "manual_sgd_after_backward": """
import torch
w = torch.randn(3, requires_grad=True)
x, y = torch.randn(16, 3), torch.randn(16)
for _ in range(50):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    w.data.sub_(0.1 * w.grad.data)
    w.grad.data.zero_()
""",
    "clamp_under_no_grad_after_step": """
import torch
from torch import nn
layer1, layer2 = nn.Linear(2, 2), nn.Linear(2, 1)
opt = torch.optim.SGD([*layer1.parameters(), *layer2.parameters()], lr=0.1)
x = torch.randn(4, 2)
loss = layer2(torch.tanh(layer1(x))).sum()
loss.backward()
opt.step()
with torch.no_grad():
    layer2.weight.clamp_(-1.0, 1.0)
""",
    "edit_of_a_module_the_loss_does_not_use": """
import torch
from torch import nn
teacher, student = nn.Linear(8, 4), nn.Linear(8, 4)
opt = torch.optim.Adam(student.parameters())
x = torch.randn(16, 8)
with torch.no_grad():
    target = torch.randn(16, 4)
loss = ((student(x) - target) ** 2).mean()
for p in teacher.parameters():
    p.data.mul_(0.99)
loss.backward()
opt.step()
""",
}

SEEN = {
    "wgan_clip_between_loss_and_backward": (
        "benchmarks/fresh/lint4/v15_wgan_critic.py (a tuning-half script: p.data.clamp_ on the critic's "
        "parameters after loss_d is computed, before loss_d.backward())"
    ),
    "layer_weight_clamped_before_backward": (
        "OmidPoursaeed/Generative_Adversarial_Perturbations#4 (weights edited through .data, 'this "
        "implementation causes to generate unexact gradients')"
    ),
    "clip_before_the_forward": (
        "DynaSysML GAN/WGAN.train_dis_step (public code: p.data.clamp_ on the critic before its forward; harmless)"
    ),
    "wgan_clip_after_step": "the WGAN paper's reference code (clip after the critic's optimizer step)",
}

# WGAN's weight clipping in a helper handed the critic (for p in net.parameters(): p.data.clamp_), called
# after the critic's forward and before the loss's backward; called after the optimizer's step it is right,
# and a helper handed another module (the generator, not in this loss) edits nothing the loss used.
_CLIPPED = """
import torch

def enforce_lipschitz(net, bound):
    for p in net.parameters():
        p.data.clamp_(-bound, bound)

def critic_round(critic, generator, opt_c, real, z):
    with torch.no_grad():
        fake = generator(z)
    loss = critic(fake).mean() - critic(real).mean()
    {before}
    opt_c.zero_grad()
    loss.backward()
    opt_c.step()
    {after}
"""
PITFALL["clipping_helper_between_forward_and_backward"] = _CLIPPED.format(
    before="enforce_lipschitz(critic, 0.01)", after=""
)
NEAR_MISS["clipping_helper_after_the_step"] = _CLIPPED.format(before="", after="enforce_lipschitz(critic, 0.01)")
NEAR_MISS["clipping_helper_on_a_module_the_loss_does_not_use"] = _CLIPPED.format(
    before="enforce_lipschitz(generator, 0.01)", after=""
)
SEEN["clipping_helper_between_forward_and_backward"] = (
    "benchmarks/fresh/lint10 r14_terrain_wgan.py (held-out half, after its first score)"
)
