"""PTF231 (argmax-over-batch-dim): argmax(0) / max(0) over a batch of per-example scores, compared with labels."""

PITFALL = {
    "eval_loop_argmax_dim0": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
model = nn.Linear(16, 10)
test_loader = DataLoader(TensorDataset(torch.randn(100, 16), torch.randint(0, 10, (100,))), batch_size=10)
model.eval()
correct = 0
with torch.no_grad():
    for x, y in test_loader:
        logits = model(x)
        preds = logits.argmax(dim=0)
        correct += (preds == y).sum().item()
""",
    "torch_max_values_indices": """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)
    def forward(self, x):
        return self.fc(x.flatten(1))

def evaluate(net, loader: DataLoader):
    total = correct = 0
    with torch.no_grad():
        for images, labels in loader:
            outputs = net(images)
            _, predicted = torch.max(outputs.data, 0)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
    return correct / total

net = Net()
print(evaluate(net, DataLoader(torch.load("test_set.pt", weights_only=True), batch_size=64)))
""",
    "torch_argmax_positional_in_train_loop": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
train_loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,))), batch_size=8, shuffle=True)
clf = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(clf.parameters(), lr=0.1)
for batch in train_loader:
    inputs, targets = batch
    opt.zero_grad()
    out = clf(inputs)
    loss = nn.functional.cross_entropy(out, targets)
    loss.backward()
    opt.step()
    acc = (torch.argmax(out, 0) == targets).float().mean()
""",
    "softmax_then_argmax_eq": """
import torch
import torch.nn.functional as F
from torch import nn

def accuracy(model: nn.Module, loader):
    hits = 0
    model.eval()
    with torch.no_grad():
        for xb, yb in loader:
            probs = F.softmax(model(xb.to("cuda")), dim=1)
            hits += probs.argmax(0).eq(yb.to("cuda")).sum().item()
    return hits
""",
    "written_out_logits_dim_param": """
import torch
SCORES = [[1.2, 0.1, 0.4], [0.2, 2.0, 0.3], [0.1, 0.3, 0.9]]
TARGETS = [0, 1, 2]

def score(dim):
    logits = torch.tensor(SCORES)
    labels = torch.tensor(TARGETS)
    pred = logits.argmax(dim)
    return (pred == labels).float().mean().item()

print(score(0))
""",
    "max_indices_attribute": """
import torch
from torch import nn
encoder = nn.Linear(32, 5)

def batch_accuracy(data_loader):
    right = 0
    with torch.no_grad():
        for feats, labels in data_loader:
            pred = encoder(feats).max(dim=0).indices
            right += (pred == labels).sum().item()
    return right
""",
}

NEAR_MISS = {
    "single_example_row": """
import torch
from torch import nn
model = nn.Linear(16, 10)
model.eval()

def predict_one(x, y):
    with torch.no_grad():
        scores = model(x.unsqueeze(0))[0]
        return scores.argmax(0) == y
""",
    "clip_similarity_both_directions": """
import torch
import torch.nn.functional as F

def retrieval_accuracy(image_emb, text_emb):
    logits = F.normalize(image_emb, dim=-1) @ F.normalize(text_emb, dim=-1).t()
    truth = torch.arange(logits.size(0))
    acc_i = (logits.argmax(1) == truth).float().mean()
    acc_t = (logits.argmax(0) == truth).float().mean()
    return (acc_i + acc_t) / 2
""",
    "ensemble_vote_over_models": """
import torch
from torch import nn
models = [nn.Linear(8, 3) for _ in range(5)]

def vote(loader):
    right = 0
    with torch.no_grad():
        for x, y in loader:
            votes = torch.stack([m(x).argmax(1) for m in models])
            majority = votes.mode(0).values
            right += (majority == y).sum().item()
    return right
""",
    "hardest_example_on_purpose": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
net = nn.Linear(4, 1)
loader = DataLoader(TensorDataset(torch.randn(40, 4), torch.randn(40, 1)), batch_size=8)
with torch.no_grad():
    for x, y in loader:
        errors = (net(x) - y).abs().squeeze(1)
        worst = errors.argmax(0)
        print(worst.item(), errors[worst].item())
""",
    "class_dim_correct": """
import torch
from torch import nn
model = nn.Linear(16, 10)

def evaluate(loader):
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            correct += (logits.argmax(dim=1) == y).sum().item()
            _, top = torch.max(logits, 1)
            correct += top.eq(y).sum().item()
    return correct
""",
}

SEEN = {
    "eval_loop_argmax_dim0": "jolibrain/deepdetect#1567 (argmax over the batch dimension instead of the classes in a segmentation evaluation: wrong metrics)",
    "softmax_then_argmax_eq": "mrdbourke/pytorch-deep-learning#163 (softmax(dim=0) over y_logit of shape [32, 10] before argmax: the batch dimension taken for the classes)",
    "clip_similarity_both_directions": "Zasder3/train-CLIP#6 (accuracy of a CLIP similarity matrix: argmax over dim 0 for text->image is right there)",
    "torch_max_values_indices": "the `_, predicted = torch.max(outputs.data, 1)` idiom of the PyTorch CIFAR-10 tutorial and ildoonet/cutmix#1, here with the dimension slipped to 0",
}

# Rows cut from a tensor a batch at a time, the indices zipped with the batch's labels into a confusion
# matrix (fresh set 6's tuning half, x13: missed at its first score and since).
_ZIPPED = """
import torch
def evaluate(model, beats, labels, confusion, batch=512):
    with torch.no_grad():
        for start in range(0, len(labels), batch):
            logits = model(beats[start:start + batch])
            predicted = logits.argmax({dim}).cpu()
            for truth, guess in zip({first}, predicted.tolist()):
                confusion[truth, guess] += 1
CLASS_NAMES = ["N", "S", "V", "F", "Q"]
evaluate(torch.nn.Linear(180, 5), torch.randn(2048, 180), torch.randint(0, 5, (2048,)), torch.zeros(5, 5))
"""
PITFALL["rows_sliced_and_zipped_with_labels"] = _ZIPPED.format(dim=0, first="labels[start:start + batch].tolist()")
NEAR_MISS["rows_sliced_class_dimension"] = _ZIPPED.format(dim=1, first="labels[start:start + batch].tolist()")
NEAR_MISS["best_example_per_class_named"] = _ZIPPED.format(dim=0, first="CLASS_NAMES")
SEEN["rows_sliced_and_zipped_with_labels"] = "benchmarks/fresh/lint6 x13_ecg_arrhythmia_eval.py (tuning material)"
_GENRE_EVAL = """
import torch
from torch.utils.data import DataLoader
def decide(logits):
    return logits.argmax({dim})
def evaluate(model, dataset, device):
    loader = DataLoader(dataset, batch_size=10, shuffle=False)
    preds, labels = [], []
    with torch.inference_mode():
        for x, y in loader:
            logits = model(x.to(device))
            preds.append(decide({scores}).cpu())
            labels.append(y)
    preds, labels = torch.cat(preds).numpy(), torch.cat(labels).numpy()
    return float((preds == labels).mean())
def main(dataset):
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(128, 10)).eval()
    print(evaluate(model, dataset, "cpu"))
"""
PITFALL["argmax_in_a_helper_whose_predictions_are_collected"] = _GENRE_EVAL.format(dim=0, scores="logits")
NEAR_MISS["argmax_over_classes_in_a_helper"] = _GENRE_EVAL.format(dim=1, scores="logits")
NEAR_MISS["helper_handed_the_scores_transposed"] = _GENRE_EVAL.format(dim=0, scores="logits.t()")
PITFALL["argmax_collected_batch_by_batch"] = """
import torch
from torch.utils.data import DataLoader
def accuracy(model, dataset):
    loader = DataLoader(dataset, batch_size=64)
    preds, targets = [], []
    with torch.no_grad():
        for x, y in loader:
            preds.append(model(x).argmax(0))
            targets.append(y)
    return (torch.cat(preds) == torch.cat(targets)).float().mean().item()
def main(dataset):
    print(accuracy(torch.nn.Linear(32, 10), dataset))
"""
SEEN["argmax_in_a_helper_whose_predictions_are_collected"] = (
    "fresh set 9's q22 (tuning half, read): decide(logits) returning logits.argmax(0), its results appended per "
    "batch, joined with torch.cat and compared with the labels"
)
SEEN["argmax_over_classes_in_a_helper"] = SEEN["argmax_in_a_helper_whose_predictions_are_collected"]
SEEN["helper_handed_the_scores_transposed"] = SEEN["argmax_in_a_helper_whose_predictions_are_collected"]
SEEN["argmax_collected_batch_by_batch"] = SEEN["argmax_in_a_helper_whose_predictions_are_collected"]
