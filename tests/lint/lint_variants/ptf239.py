"""PTF239 (loss-target-requires-grad): a regression or distillation loss whose target is a network's output,
not detached and not computed under no_grad."""

PITFALL = {
    "simsiam_projections_not_detached": """
import torch
import torch.nn as nn

class SimSiam(nn.Module):
    def __init__(self, backbone, dim=2048, pred_dim=512):
        super().__init__()
        self.backbone = backbone
        self.projection = nn.Sequential(nn.Linear(512, dim), nn.BatchNorm1d(dim))
        self.prediction = nn.Sequential(nn.Linear(dim, pred_dim), nn.ReLU(), nn.Linear(pred_dim, dim))

    def forward(self, x0, x1):
        z0 = self.projection(self.backbone(x0).flatten(start_dim=1))
        z1 = self.projection(self.backbone(x1).flatten(start_dim=1))
        return self.prediction(z0), self.prediction(z1), z0, z1

cos = nn.CosineSimilarity(dim=1)

def train(model, loader, opt):
    for (x0, x1), _ in loader:
        p0, p1, z0, z1 = model(x0, x1)
        loss = -0.5 * (cos(p0, z1).mean() + cos(p1, z0).mean())
        opt.zero_grad()
        loss.backward()
        opt.step()

train(SimSiam(nn.Identity()), [], None)
""",
    "teacher_called_outside_no_grad": """
import torch
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(784, width), nn.ReLU(), nn.Linear(width, 10))

    def forward(self, x):
        return self.body(x)

teacher, student = Net(1200), Net(50)
teacher.load_state_dict(torch.load("teacher.pt", weights_only=True))
opt = torch.optim.SGD(student.parameters(), lr=0.01)

def distill_step(x, y, T=4.0):
    s_logits = student(x)
    t_logits = teacher(x)
    kd = F.kl_div(F.log_softmax(s_logits / T, dim=1), F.softmax(t_logits / T, dim=1), reduction="batchmean")
    loss = kd * T * T + F.cross_entropy(s_logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "dqn_target_network_forward": """
import torch
import torch.nn as nn

class QNet(nn.Module):
    def __init__(self, n_obs, n_actions):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(n_obs, 128), nn.ReLU(), nn.Linear(128, n_actions))

    def forward(self, s):
        return self.fc(s)

class Agent:
    def __init__(self, n_obs, n_actions, gamma=0.99):
        self.q_eval = QNet(n_obs, n_actions)
        self.q_next = QNet(n_obs, n_actions)
        self.gamma = gamma
        self.opt = torch.optim.Adam(self.q_eval.parameters(), lr=1e-4)
        self.loss = nn.MSELoss()

    def replace_target(self):
        self.q_next.load_state_dict(self.q_eval.state_dict())

    def learn(self, states, actions, rewards, states_, dones):
        idx = torch.arange(len(actions))
        q_pred = self.q_eval.forward(states)[idx, actions]
        q_next = self.q_next.forward(states_).max(dim=1)[0]
        q_target = rewards + self.gamma * q_next * (1 - dones)
        loss = self.loss(q_pred, q_target)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
""",
    "byol_momentum_target": """
import torch
import torch.nn as nn
import torch.nn.functional as F

def mlp(d_in, d_out):
    return nn.Sequential(nn.Linear(d_in, 1024), nn.BatchNorm1d(1024), nn.ReLU(), nn.Linear(1024, d_out))

online = mlp(512, 256)
target = mlp(512, 256)
predictor = mlp(256, 256)
opt = torch.optim.Adam([*online.parameters(), *predictor.parameters()], lr=3e-4)

def update_target(tau=0.996):
    for po, pt in zip(online.parameters(), target.parameters()):
        pt.data.mul_(tau).add_(po.data, alpha=1 - tau)

def step(v1, v2):
    p = F.normalize(predictor(online(v1)), dim=-1)
    z = F.normalize(target(v2), dim=-1)
    loss = F.mse_loss(p, z)
    opt.zero_grad()
    loss.backward()
    opt.step()
    update_target()
""",
    "student_and_teacher_in_one_module_dict": """
import torch
from torch import nn

nets = nn.ModuleDict({"student": nn.Linear(16, 4), "teacher": nn.Linear(16, 4)})
opt = torch.optim.SGD(nets.parameters(), lr=0.1)
x = torch.randn(8, 16)
loss = nn.SmoothL1Loss()(nets["student"](x), nets["teacher"](x))
opt.zero_grad()
loss.backward()
opt.step()
""",
    "mean_teacher_deepcopy": """
import copy
import torch
import torch.nn.functional as F
from torch import nn

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
ema_model = copy.deepcopy(model)
opt = torch.optim.Adam(model.parameters())

def consistency_step(x, noise=0.1):
    student_out = F.softmax(model(x + noise * torch.randn_like(x)), dim=1)
    teacher_out = F.softmax(ema_model(x + noise * torch.randn_like(x)), dim=1)
    loss = F.mse_loss(student_out, teacher_out)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
}

NEAR_MISS = {
    "teacher_under_no_grad": """
import torch
import torch.nn.functional as F
from torch import nn

teacher = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5))
student = nn.Linear(20, 5)
opt = torch.optim.SGD(student.parameters(), lr=0.1)

def step(data, kd_T=2.0):
    with torch.no_grad():
        kd_out = teacher(data)
    out = student(data)
    loss = F.kl_div(F.log_softmax(out / kd_T, dim=1), F.softmax(kd_out / kd_T, dim=1), reduction="batchmean")
    loss.backward()
    opt.step()
""",
    "vicreg_invariance_both_views_learn": """
import torch
import torch.nn.functional as F
from torch import nn

class VICReg(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(128, 256), nn.ReLU())
        self.projector = nn.Linear(256, 512)

    def forward(self, a, b):
        x = self.projector(self.backbone(a))
        y = self.projector(self.backbone(b))
        return F.mse_loss(x, y) + 0.1 * (x.std(0).mean() + y.std(0).mean())

model = VICReg()
model(torch.randn(4, 128), torch.randn(4, 128)).backward()
""",
    "perceptual_loss_same_feature_net": """
import torch
import torch.nn.functional as F
from torch import nn

features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1))
generator = nn.Sequential(nn.Conv2d(3, 3, 3, padding=1), nn.Tanh())
opt = torch.optim.Adam(generator.parameters())

def g_step(lowres, highres):
    fake = generator(lowres)
    loss = F.mse_loss(features(fake), features(highres)) + F.l1_loss(fake, highres)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "simsiam_with_stop_gradient": """
import torch
import torch.nn.functional as F
from torch import nn

projector = nn.Linear(64, 128)
predictor = nn.Linear(128, 128)

def D(p, z):
    return -F.cosine_similarity(p, z.detach(), dim=-1).mean()

def step(x1, x2, opt):
    z1, z2 = projector(x1), projector(x2)
    p1, p2 = predictor(z1), predictor(z2)
    loss = D(p1, z2) / 2 + D(p2, z1) / 2
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "autoencoder_target_is_the_input": """
import torch
from torch import nn

encoder = nn.Linear(784, 32)
decoder = nn.Linear(32, 784)
crit = nn.MSELoss()
x = torch.rand(16, 784)
loss = crit(decoder(encoder(x)), x)
loss.backward()
""",
    "frozen_teacher": """
import torch
import torch.nn.functional as F
from torch import nn

teacher = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 3))
for p in teacher.parameters():
    p.requires_grad = False
student = nn.Linear(10, 3)

def loss_of(x):
    return F.mse_loss(student(x), teacher(x))

loss_of(torch.randn(2, 10)).backward()
""",
    "dqn_target_detached": """
import copy
import torch
import torch.nn.functional as F
from torch import nn

policy = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2))
target_net = copy.deepcopy(policy)

def learn(s, a, r, s2, done, gamma=0.99):
    q = policy(s).gather(1, a.unsqueeze(1)).squeeze(1)
    q_next = target_net(s2).max(1)[0].detach()
    loss = F.smooth_l1_loss(q, r + gamma * q_next * (1 - done))
    loss.backward()
""",
    "target_detached_at_the_loss": """
import copy
import torch
from torch import nn

critic = nn.Linear(6, 1)
critic_target = copy.deepcopy(critic)
criterion = nn.MSELoss()

def update(state_action, next_state_action, reward, gamma=0.99):
    target_q = reward + gamma * critic_target(next_state_action)
    loss = criterion(critic(state_action), target_q.detach())
    loss.backward()
""",
    "teacher_forward_under_no_grad_decorator": """
import torch
import torch.nn.functional as F
from torch import nn

class FrozenTeacher(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(12, 4)

    @torch.no_grad()
    def forward(self, x):
        return self.net(x)

teacher, student = FrozenTeacher(), nn.Linear(12, 4)
x = torch.randn(3, 12)
F.mse_loss(student(x), teacher(x)).backward()
""",
    "lsgan_constant_target": """
import torch
import torch.nn.functional as F
from torch import nn

G = nn.Sequential(nn.Linear(16, 64), nn.Tanh())
D = nn.Sequential(nn.Linear(64, 1))
z = torch.randn(8, 16)
fake = G(z)
g_loss = F.mse_loss(D(fake), torch.ones(8, 1))
g_loss.backward()
""",
}

SEEN = {
    "simsiam_projections_not_detached": "https://github.com/lightly-ai/lightly/issues/559 (SimSiam's projections z0, z1 returned without .detach(), unlike facebookresearch/simsiam's builder) and https://github.com/PatrickHua/SimSiam/issues/39",
    "simsiam_with_stop_gradient": "https://github.com/PatrickHua/SimSiam/issues/22 (D(p, z) = -F.cosine_similarity(p, z.detach(), dim=-1).mean(): the stop-gradient)",
    "dqn_target_network_forward": "https://github.com/philtabor/Deep-Q-Learning-Paper-To-Code/issues/9 and /issues/16 (q_next = self.q_next.forward(states_).max(dim=1)[0]; q_target = rewards + self.gamma*q_next without detach or no_grad)",
    "byol_momentum_target": "https://github.com/datawhalechina/easy-rl/pull/117 (a TD target without detach(): 'not the semi-gradient method'); BYOL's momentum target network, updated from the online one",
    "teacher_under_no_grad": "https://github.com/microsoft/nni/pull/1819 (with torch.no_grad(): kd_out = self.teacher_model(data), then F.kl_div of the softmaxes)",
    "target_detached_at_the_loss": "https://github.com/quantumiracle/Popular-RL-Algorithms/issues/16 (target Q computed without no_grad, detached where the loss takes it)",
    "teacher_called_outside_no_grad": "https://github.com/lucidrains/vit-pytorch/issues/289 (distill_loss = F.kl_div(F.log_softmax(distill_logits / T), F.softmax(teacher_logits / T).detach()): the detach this spelling leaves out)",
}
_BYOL = """
import copy
import torch
import torch.nn.functional as F
from torch import nn
def regression_loss(p, z):
    p, z = F.normalize(p, dim=-1), F.normalize(z, dim=-1)
    return 2 - 2 * (p * z).sum(dim=-1)
class BYOL(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.online = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, 32))
        self.predictor = nn.Linear(32, 32)
        self.target = copy.deepcopy(self.online)
    def forward(self, v1, v2):
        p1, p2 = self.predictor(self.online(v1)), self.predictor(self.online(v2))
{targets}
        return (regression_loss(p1, z2) + regression_loss(p2, z1)).mean()
def train(model, loader, opt):
    for v1, v2 in loader:
        loss = model(v1, v2)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
PITFALL["byol_cosine_written_out_target_with_gradients"] = _BYOL.format(
    targets="        z1, z2 = self.target(v1), self.target(v2)"
)
NEAR_MISS["byol_cosine_written_out_target_under_no_grad"] = _BYOL.format(
    targets="        with torch.no_grad():\n            z1, z2 = self.target(v1), self.target(v2)"
)
SEEN["byol_cosine_written_out_target_with_gradients"] = (
    "fresh set 9's q13 (held-out half, scored, then tuning material): BYOL's regression loss 2 - 2 * (p * z).sum(-1) "
    "of normalised p and z, the target network's outputs computed with gradients"
)
SEEN["byol_cosine_written_out_target_under_no_grad"] = "the same model, its target projections under torch.no_grad()"
