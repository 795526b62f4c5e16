"""PTF279 (loss-indexed-as-one-element): a full reduction indexed as if it had an element 0."""

PITFALL = {
    "running_loss_from_a_criterion": """
import torch.nn as nn
def train(model, loader, optimizer):
    criterion = nn.CrossEntropyLoss()
    total = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.data[0]
    return total
""",
    "functional_loss_in_a_print": """
import torch.nn.functional as F
def evaluate(model, loader):
    for i, (x, y) in enumerate(loader):
        test_loss = F.nll_loss(model(x), y, size_average=False)
        print("batch %d loss %.4f" % (i, test_loss.data[0]))
""",
    "summed_kl_divided_by_a_count": """
import torch
def kl_term(mu, logvar, y):
    loss_kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss_kl /= y.size(0) * y.size(1)
    return loss_kl.data[0]
""",
    "criterion_handed_to_the_evaluation": """
import torch.nn as nn
def evaluate(model, X, Y, evaluate_l2):
    out = model(X)
    return evaluate_l2(out, Y).data[0]
l2 = nn.MSELoss(size_average=False)
l2 = l2.cuda()
print(evaluate(net, x, y, l2))
""",
    "loss_method_of_the_class": """
import torch.nn as nn
class Learner(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.loss_fn = nn.CrossEntropyLoss()
    def set_forward_loss(self, x, y):
        return self.loss_fn(self.net(x), y)
    def train_loop(self, loader, optimizer):
        avg_loss = 0
        for x, y in loader:
            loss = self.set_forward_loss(x, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            avg_loss = avg_loss + loss.data[0]
        return avg_loss
""",
    "sum_of_a_tensor_indexed": """
import torch
def dice(pred: torch.Tensor, target: torch.Tensor):
    overlap = (pred * target).sum()
    return 2 * overlap.data[0] / (pred.sum() + target.sum()).item()
""",
}

NEAR_MISS = {
    "per_element_losses": """
import torch.nn as nn
def hardest(model, x, y):
    losses = nn.CrossEntropyLoss(reduction="none")(model(x), y)
    return losses[0].item()
""",
    "item_of_the_loss": """
import torch.nn.functional as F
def train_step(model, x, y, optimizer):
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    "sum_kept_along_a_dimension": """
import torch
def topk_accuracy(output: torch.Tensor, target, k=5):
    correct = output.topk(k, 1)[1].eq(target.view(-1, 1))
    hits = correct.float().sum(0, keepdim=True)
    return hits[0]
""",
    "loss_of_unknown_shape_plus_a_scalar": """
import torch
def combined(bce_fn, y_pred, y, mu, logvar):
    loss_bce = bce_fn(y_pred, y)
    loss_kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss = loss_bce + loss_kl
    return loss.data[0]
""",
    "model_output_indexed": """
import torch.nn as nn
def first_logit(model: nn.Module, x):
    out = model(x)
    return out.data[0]
""",
}

SEEN = {
    "running_loss_from_a_criterion": "https://github.com/pytorch/pytorch/issues/6061 (train_loss += loss.data[0], 0.4)",
    "functional_loss_in_a_print": (
        "https://github.com/foolwood/pytorch-slimming/issues/12 (loss.data[0] in a print, and "
        "F.cross_entropy(..., size_average=False).data[0])"
    ),
    "summed_kl_divided_by_a_count": "snap-stanford/GraphRNN train.py (round 13's held-out half: loss_kl.data[0])",
    "criterion_handed_to_the_evaluation": "laiguokun/LSTNet main.py (round 13's tuning half: evaluateL2(...).data[0])",
    "loss_method_of_the_class": "wyharveychen/CloserLookFewShot methods/maml.py (round 12's held-out half)",
    "sum_kept_along_a_dimension": "pytorch/examples imagenet accuracy() (correct_k = ....sum(0, keepdim=True))",
}

# The criterion built and moved in one expression, then handed to the epoch function (fresh set 13's m26,
# held-out half, missed at its first score; tuning material since). With reduction="none" it is per sample.
_MOVED_CRITERION = """
import torch
from torch import nn
def train(loader, model, criterion, optimizer, meter):
    for images, target in loader:
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        {backward}
        optimizer.step()
        meter.update(loss.data[0], images.size(0))
def main(model, loader, meter, device):
    criterion = nn.CrossEntropyLoss({reduction}).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train(loader, model, criterion, optimizer, meter)
"""
PITFALL["criterion_moved_as_it_is_built"] = _MOVED_CRITERION.format(reduction="", backward="loss.backward()")
NEAR_MISS["per_sample_criterion_moved_as_it_is_built"] = _MOVED_CRITERION.format(
    reduction='reduction="none"', backward="loss.mean().backward()"
)
SEEN["criterion_moved_as_it_is_built"] = (
    "benchmarks/fresh/lint13 m26_stanford_dogs_finetune.py (held-out half, missed at its first score)"
)
