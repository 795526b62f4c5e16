# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Keeping the loss tensor keeps its graph
#
# To plot the training curve you keep every step's loss: `losses.append(loss)`. The numbers
# are right, training is right, but the process grows a little with every step and never
# gives it back, and if a kept tensor is one that never went through `backward()` (a
# validation loss, a term you only log) it holds that step's activations too, until the
# GPU runs out of memory hours into a run. The list holds tensors, and each tensor holds the
# whole autograd graph that produced it.

# %%
import numpy as np
import torch
import torch.nn.functional as F

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A small linear regression trained for eight steps; the loop records each step's loss, and
# the broken version records the loss tensor itself.

# %%
STEPS, BATCH, FEATURES, LR = 8, 16, 8, 0.05


def problem(device, steps=STEPS):
    """The model, its optimizer and ``steps`` batches, all deterministic."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(steps, BATCH, FEATURES, generator=gen)
    y = x @ torch.arange(1.0, FEATURES + 1).unsqueeze(1) + 0.1 * torch.randn(steps, BATCH, 1, generator=gen)
    with seeded(0):
        model = torch.nn.Linear(FEATURES, 1).to(device)
    return model, torch.optim.SGD(model.parameters(), lr=LR), x.to(device), y.to(device)


def train(model, opt, xs, ys, keep):
    """An ordinary training loop that records ``keep(loss)`` at every step."""
    losses = []
    for x, y in zip(xs, ys):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(keep(loss))
    return losses


def broken(device):
    return train(*problem(device), keep=lambda loss: loss)  # losses.append(loss): the tensor


def graph_nodes(history):
    """Every autograd node still reachable from the values kept in ``history``."""
    roots = {v.grad_fn for v in history if isinstance(v, torch.Tensor) and v.grad_fn is not None}
    seen, todo = set(), list(roots)
    while todo:
        node = todo.pop()
        if node is not None and node not in seen:
            seen.add(node)
            todo.extend(parent for parent, _ in node.next_functions)
    return roots, seen


# %%
if __name__ == "__main__":
    losses = broken("cpu")
    roots, nodes = graph_nodes(losses)
    print(f"{len(roots)} graphs alive, {len(nodes)} autograd nodes kept by the list of losses")

# %% [markdown]
# ## Why
# A tensor that autograd produced carries its `grad_fn`, the node that made it, and every
# node links to the nodes of its inputs; so holding the loss holds the step's whole graph,
# back to the parameters. `backward()` frees the activations the graph saved (without
# `retain_graph=True`), but not the graph's nodes, nor the loss tensor itself, which on a GPU
# is one device allocation per step. So a list of losses grows by one graph per step for as
# long as the list lives. It gets much worse when the kept tensor never goes through
# `backward()` — a validation loss computed with gradients enabled, or a loss term that is
# only logged: nothing frees that graph's saved activations, and each kept value pins a full
# forward pass of memory. The same happens with `total_loss += loss`, which chains every
# step's graph into one.
#
# ## The fix
# Keep a number, not a graph: `loss.item()` (a Python float). On a GPU `.item()` waits for
# the device at every step; if that matters, keep `loss.detach()` (a tensor with no history)
# and convert once per epoch.


# %%
def fixed(device):
    return train(*problem(device), keep=lambda loss: loss.item())  # floats: no graph kept


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# S1's training notes list it among their lessons: append `loss.item()`, not `loss`, otherwise an
# extra copy is kept alive. The PyTorch FAQ ("My model reports 'cuda runtime error(2): out of
# memory'") opens with the same advice, "Don't accumulate history across your training loop": in
# the 0.3-era page the example adds `loss[0]` (still a Variable with history) to a running total;
# the later page uses `total_loss += loss` after `backward()` and fixes it with `float(loss)`. No
# release changed the mechanism. The declared range starts at 0.4.0, whose release notes merged
# Variable into Tensor (this code needs it) and added `.item()`; the version matrix observes it
# from 1.13.1 on. This project observed it on torch 2.13.0 (CPU), where a saved-tensor hook also
# showed the distinction above: after `backward()` none of the activations the kept graphs saved
# were still alive, while for losses kept without `backward()` all of them were.
#
# The symptom is the mechanism, not a time: the kept list still reaches STEPS graphs and,
# through them, the model's parameters; the fix's check asks that no kept value reaches a
# graph and that the numbers match the same run written out in NumPy. The speed of the two loops is compared in
# `benchmarks/test_bench_loss_append_keeps_graph.py`.

# %% [markdown]
# ## How the harness checks it
#
# Not every list that grows with the steps is this pitfall. Keeping each step's predictions
# for a metric at the end of the epoch (`outputs.append(out.detach())`) also grows memory step
# by step, but with data you asked for and no graph: the symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """All STEPS graphs are still alive, each reaching down to the model's weights."""
    if run.error is not None:
        return False
    roots, nodes = graph_nodes(run.value)
    reaches_weights = any(hasattr(node, "variable") for node in nodes)  # AccumulateGrad nodes
    return len(roots) == STEPS and len(nodes) > STEPS and reaches_weights


def near_miss(device):
    model, opt, xs, ys = problem(device)
    outputs = []
    for x, y in zip(xs, ys):
        opt.zero_grad()
        out = model(x)
        F.mse_loss(out, y).backward()
        opt.step()
        outputs.append(out.detach())  # kept on purpose, without history
    return outputs


def check(run, device):
    """No kept value reaches an autograd graph, and the values are the losses of the same SGD run
    written out in NumPy (float64, MSE gradient by hand) from the same initial model and batches."""
    roots, nodes = graph_nodes(run.value)
    assert not roots and not nodes, f"the kept losses still hold {len(roots)} graphs"
    model, _, xs, ys = problem(device)
    w = model.weight.detach().cpu().double().numpy().T.copy()  # (FEATURES, 1), before training
    b = model.bias.detach().cpu().double().numpy().copy()
    expected = []
    for x, y in zip(xs.cpu().double().numpy(), ys.cpu().double().numpy()):
        err = x @ w + b - y
        expected.append(float(np.mean(err**2)))
        w, b = w - LR * 2 * x.T @ err / len(x), b - LR * 2 * err.mean(0)
    kept = torch.tensor([float(v) for v in run.value], dtype=torch.float64)
    torch.testing.assert_close(kept, torch.tensor(expected, dtype=torch.float64), rtol=1e-4, atol=1e-5)


CASE = Case(
    id="loss-append-keeps-graph",
    title="Keeping the loss tensor keeps its graph",
    kind="performance",
    symptom_category="slow-or-memory",
    symptom_line="Memory grows every step because the kept loss values keep their graphs.",
    # A tensor keeps its grad_fn, and the grad_fn its inputs' nodes, by design. From 1.13.1 on the
    # matrix observes it; the code here needs 0.4, where Variable merged into Tensor and `.item()`
    # (the fix) appeared. The FAQ shows the same problem with Variables before that.
    affects=(
        Affects(
            ">=0.4",
            since="the 0.4.0 release notes: Variable merged into Tensor (which this "
            "code needs) and .item() added; the 0.3-era FAQ shows the same with Variables",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(S1.at("'炼丹心得': record loss.item(), not the loss tensor"),),
    tags=("training", "memory", "autograd_graph", "logging"),
    references=(
        "http://pytorch.org/docs/master/notes/faq.html",  # FAQ: don't accumulate history across your training loop
        "https://raw.githubusercontent.com/pytorch/pytorch.github.io/d95d45ec86b49ad375185b021872caf001696929/docs/master/_sources/notes/faq.rst.txt",
    ),
)
