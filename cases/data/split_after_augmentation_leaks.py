# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A test set split off after augmentation
#
# The dataset is small, so you enlarge it first: every sample gets a slightly jittered copy.
# Then `random_split` carves out a test set, the model trains, and the test accuracy is 80%.
# It looks like a model that generalises. Here the labels are coin flips, so no model can
# beat 50% on data it has not seen: more than two test samples in three have their own
# near-copy in the training set, and the test set measures how well the model remembers.

# %%
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import TensorDataset, random_split

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# 400 samples of 8 features with labels drawn at random (nothing to learn), each augmented with
# one copy plus noise of standard deviation 0.01, then split 600 / 200, a small MLP trained
# until it fits its training set.

# %%
N, FEATURES, STEPS = 400, 8, 200


def samples():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(N, FEATURES, generator=g)
    y = torch.randint(0, 2, (N,), generator=g)  # coin flips: no signal in x
    return x, y


def augment(x, y):
    """Each sample and a jittered copy of it, with the same label."""
    noise = 0.01 * torch.randn(x.shape, generator=torch.Generator().manual_seed(1))
    return torch.cat([x, x + noise]), torch.cat([y, y])


def tensors(subset):
    return torch.stack([subset[i][0] for i in range(len(subset))]), torch.stack(
        [subset[i][1] for i in range(len(subset))]
    )


def fit_and_score(device, train_x, train_y, test_x, test_y):
    with seeded(0):
        model = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, 2)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    train_x, train_y, test_x, test_y = (t.to(device) for t in (train_x, train_y, test_x, test_y))
    for _ in range(STEPS):
        opt.zero_grad()
        F.cross_entropy(model(train_x), train_y).backward()
        opt.step()
    with torch.no_grad():
        return {
            "train_accuracy": (model(train_x).argmax(1) == train_y).float().mean().item(),
            "test_accuracy": (model(test_x).argmax(1) == test_y).float().mean().item(),
            "train_x": train_x.cpu(),
            "test_x": test_x.cpu(),
        }


def broken(device):
    x, y = augment(*samples())  # augment the whole dataset ...
    train, test = random_split(TensorDataset(x, y), [600, 200], generator=torch.Generator().manual_seed(2))
    return fit_and_score(device, *tensors(train), *tensors(test))  # ... then split it


# %%
if __name__ == "__main__":
    print({k: v for k, v in observe(broken, "cpu").value.items() if "accuracy" in k})

# %% [markdown]
# ## Why
# A random split assumes its items are independent draws. After the augmentation they are
# not: each original sample now exists twice, and a split of the 800 items sends both copies
# of a pair to the same side only by chance. With 600 of 800 items in training, a test item's
# twin is in training three times in four on average (here 138 of the 200), labelled the same.
# A network that fits its training set (here 100%, random labels included) answers those test
# items from memory, so the test accuracy mixes 100% on the leaked ones with 50% on the rest. The same leak
# comes from several crops of one image, frames of one video, sentences of one document or
# visits of one patient split at random: whatever belongs together must be split together.
#
# ## The fix
# Split first, on the original samples (or on the groups that belong together), and augment only
# the training part. The test set then holds samples the model has never seen in any form, and
# its accuracy on coin-flip labels is what it must be: chance.


# %%
def fixed(device):
    x, y = samples()
    train, test = random_split(TensorDataset(x, y), [300, 100], generator=torch.Generator().manual_seed(2))
    train_x, train_y = augment(*tensors(train))  # augment the training part only
    return fit_and_score(device, train_x, train_y, *tensors(test))


# %%
if __name__ == "__main__":
    print({k: v for k, v in observe(fixed, "cpu").value.items() if "accuracy" in k})

# %% [markdown]
# ## Where it comes from
# Humbatova et al., "Taxonomy of Real Faults in Deep Learning Systems" (ICSE 2020), list an
# incorrect train/test data split among the faults of real deep-learning programs, and
# torchtest2 names label leakage among what its checks look for. `torch.utils.data.random_split`
# does exactly what its documentation says: it splits the items it is given, without knowing
# which of them are copies of one another. No torch release changes any of this.

# %% [markdown]
# ## How the harness checks it
# A high test accuracy is not a leak by itself: with labels that follow the features (a rule the
# model can learn) and the split done first, the same network scores far above chance honestly.
# The symptom asks for near-copies of test samples in the training set as well, and refuses it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source

TWIN = 0.1  # a test sample with a training sample this close (Euclidean) has a twin in training


def twins(value) -> int:
    """Test samples with a near-copy in the training set, counted by hand from the distances."""
    distances = torch.cdist(value["test_x"], value["train_x"])
    return int((distances.min(dim=1).values < TWIN).sum())


def symptom(run):
    """On coin-flip labels the test accuracy is 70% or more, and half the test samples or more
    have a near-copy in the training set."""
    if run.error is not None or not isinstance(run.value, dict):
        return False
    v = run.value
    return v["test_accuracy"] >= 0.7 and 2 * twins(v) >= len(v["test_x"])


def near_miss(device):
    x, _ = samples()
    y = (x[:, 0] + x[:, 1] > 0).long()  # labels that follow the features
    train, test = random_split(TensorDataset(x, y), [300, 100], generator=torch.Generator().manual_seed(2))
    train_x, train_y = augment(*tensors(train))
    return fit_and_score(device, train_x, train_y, *tensors(test))


def check(run, device):
    """No test sample has a near-copy in the training set, and the test accuracy on coin-flip
    labels lies within three standard deviations of chance (0.5 +- 3 sqrt(0.25 / n))."""
    assert run.error is None, f"raised {run.error!r}"
    v = run.value
    assert twins(v) == 0, f"{twins(v)} test samples have a twin in training"
    n = len(v["test_x"])
    assert abs(v["test_accuracy"] - 0.5) <= 3 * (0.25 / n) ** 0.5, v["test_accuracy"]


def stable(value):
    """The trained floats move in their last digits between releases: keep the twins and
    whether the test accuracy is far from chance."""
    return {
        "twins": twins(value),
        "test_far_above_chance": value["test_accuracy"] >= 0.7,
        "train_fitted": value["train_accuracy"] >= 0.95,
    }


CASE = Case(
    id="split-after-augmentation-leaks",
    title="A test set split off after augmentation",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="80% test accuracy on coin-flip labels: the split came after augmentation, so test samples have twins in training.",
    affects=(Affects("*", reason="random_split splits the items it is given; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="Humbatova et al., Taxonomy of Real Faults in Deep Learning Systems (ICSE 2020): incorrect train/test data split",
            url="https://arxiv.org/abs/1910.11015",
        ),
        Source(
            title="torchtest2: what is checked (label leakage)",
            url="https://pypi.org/project/torchtest2/",
        ),
    ),
    tags=("data", "split", "leakage", "augmentation", "evaluation"),
    references=("https://docs.pytorch.org/docs/stable/data.html#torch.utils.data.random_split",),
)
