"""PTF205 (loss-rewrapped-from-item): the loss's number wrapped in a new leaf tensor and backpropagated."""

PITFALL = {
    "rewrapped_then_backward": """
import torch
import torch.nn.functional as F
def train(model, loader, opt):
    for x, y in loader:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss = torch.tensor(loss.item(), requires_grad=True)
        loss.backward()
        opt.step()
""",
    "lightning_returns_it": """
import torch
import torch.nn.functional as F
class LitModel:
    def training_step(self, batch, batch_idx):
        generated_logits, labels = self.model(batch)
        loss = F.cross_entropy(generated_logits.reshape(-1, generated_logits.shape[-1]), labels.view(-1))
        loss_with_grad = torch.tensor(loss.item(), requires_grad=True)
        return loss_with_grad
""",
    "score_to_loss": """
import torch
def calculate_loss(sim_incorrect, sim_best, sim_correct):
    loss = sim_incorrect - 10 * sim_best - sim_correct
    loss = torch.tensor(loss.item(), requires_grad=True)
    return loss
""",
    "float_of_metric": """
import torch
def step(dice, opt):
    dice_loss = torch.tensor(1 - float(dice), requires_grad=True)
    dice_loss.backward()
    opt.step()
""",
    "numpy_value": """
import torch
def step(pred, target, opt):
    value = (pred - target).pow(2).mean().detach().cpu().numpy()
    err = torch.tensor(value, requires_grad=True)
    err.backward()
    opt.step()
""",
    "item_through_name": """
import torch
def reinforce(log_probs, rewards, optimizer):
    total = (log_probs * rewards).sum().item()
    policy_loss = torch.tensor(-total, requires_grad=True)
    optimizer.zero_grad()
    policy_loss.backward()
    optimizer.step()
""",
}

NEAR_MISS = {
    "backward_on_the_loss": """
import torch.nn.functional as F
def step(model, x, y, opt):
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()
""",
    "learnable_temperature": """
import torch
def make_temperature(init):
    return torch.nn.Parameter(torch.tensor(float(init)))
""",
    "logged_not_trained": """
import torch
def log_loss(loss, writer, step):
    value = torch.tensor(loss.item())
    writer.add_scalar("loss", value, step)
""",
    "new_leaf_from_data": """
import numpy as np
import torch
log_alpha = torch.tensor(np.log(0.1), requires_grad=True)
""",
    "commented_out_hack": """
def train(model, batch, loss_op, optimizer):
    loss = loss_op(model(batch), batch.y)
    # loss = torch.tensor(loss.item(), requires_grad=True)
    loss.backward()
    optimizer.step()
""",
}

SEEN = {
    "lightning_returns_it": "find_string 'torch.tensor(loss.item(), requires_grad=True)': loss_with_grad returned from a LightningModule's training_step",
    "score_to_loss": "find_string 'torch.tensor(loss.item(), requires_grad=True)': calculate_loss() re-wrapping a similarity score as the loss",
    "commented_out_hack": "find_string 'torch.tensor(loss.item(), requires_grad=True)': GNN training loops keeping the hack commented out ('even if the loss stays constant')",
    "rewrapped_then_backward": "https://github.com/isayev/ReLeaSE/issues/39 (a loss made from .item()/.numpy() values: every grad None, weights not updating)",
}
PITFALL["python_sum_of_items"] = """
import torch
def finish_episode(policy, optimizer, log_probs, returns):
    policy_loss = sum(-lp.item() * g for lp, g in zip(log_probs, returns))
    policy_loss = torch.tensor(policy_loss, requires_grad=True)
    optimizer.zero_grad()
    policy_loss.backward()
    optimizer.step()
"""
PITFALL["returned_by_a_loss_function"] = """
import torch
def wmape_loss(pred, target):
    err = (pred - target).abs().sum().item()
    vol = target.abs().sum().item()
    return torch.tensor(err / max(vol, 1e-8), requires_grad=True)
"""
NEAR_MISS["returned_by_a_helper_nothing_differentiates"] = """
import torch
def as_leaf(x):
    return torch.tensor(x.item(), requires_grad=True)
"""
SEEN["python_sum_of_items"] = "https://github.com/Kostis-S-Z/exploring_meta/issues/16 (a PPO loss rebuilt and set to requires_grad=True by hand); fresh set 1 s21 (a REINFORCE sum of .item() values)"
PITFALL["loss_computed_in_numpy_from_the_detached_predictions"] = """
import numpy as np
import torch
def pearson_loss(pred, target):
    p = pred.detach().cpu().numpy().ravel()
    t = target.detach().cpu().numpy().ravel()
    r = np.corrcoef(p, t)[0, 1]
    return torch.tensor(1.0 - r, dtype=torch.float32, device=pred.device, requires_grad=True)
"""
NEAR_MISS["a_start_value_computed_in_numpy_from_the_data"] = """
import numpy as np
import torch
def prior_loss(path):
    a, b = np.load(path + "/a.npy"), np.load(path + "/b.npy")
    r = np.corrcoef(a.ravel(), b.ravel())[0, 1]
    return torch.tensor(1.0 - r, dtype=torch.float32, requires_grad=True)
"""
SEEN["loss_computed_in_numpy_from_the_detached_predictions"] = (
    "fresh set 9's q04 (held-out half, scored, then tuning material): a forecasting challenge's 1 - Pearson "
    "loss computed with np.corrcoef on detached predictions and wrapped back with requires_grad=True"
)
SEEN["a_start_value_computed_in_numpy_from_the_data"] = (
    "the same NumPy expression on arrays read from files: no tensor was detached, so no graph was lost"
)
