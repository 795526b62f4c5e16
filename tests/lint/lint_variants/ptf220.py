"""PTF220 (numpy-needs-detach-and-cpu): .numpy() on a tensor that requires grad or lives on a GPU."""

PITFALL = {
    "metric_in_the_training_loop": """
import torch
import torch.nn.functional as F
from torch import nn
from sklearn.metrics import f1_score
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def train_epoch(loader):
    for x, y in loader:
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        probs = logits.softmax(dim=1).numpy()
        print(f1_score(y.numpy(), probs.argmax(1), average="macro"))
""",
    "loss_history_for_a_plot": """
import torch
from torch import nn
class DQN:
    def __init__(self):
        self.eval_net = nn.Linear(4, 2)
        self.loss_func = nn.MSELoss()
        self.optimizer = torch.optim.Adam(self.eval_net.parameters(), lr=0.01)
        self.cost_his = []
    def learn(self, b_s, b_a, q_target):
        q_eval = self.eval_net(b_s).gather(1, b_a)
        loss = self.loss_func(q_eval, q_target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.cost_his.append(loss.numpy())
""",
    "layer_weights_to_plot": """
import matplotlib.pyplot as plt
from torch import nn
embedding = nn.Embedding(1000, 2)
vectors = embedding.weight.numpy()
plt.scatter(vectors[:, 0], vectors[:, 1])
""",
    "parameters_histogram": """
import numpy as np
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
    def forward(self, x):
        return self.fc(x)
net = Net()
def weight_histogram():
    return [np.histogram(p.numpy(), bins=20) for p in net.parameters()]
""",
    "np_asarray_of_a_prediction": """
import numpy as np
import torch
from torch import nn
reg = nn.Linear(3, 1)
x = torch.randn(16, 3)
pred = reg(x).squeeze(1)
residuals = np.asarray(pred) - np.linspace(0, 1, 16)
""",
    "helper_returns_the_training_output": """
import torch
from torch import nn
net = nn.Linear(3, 2)
def step(x, y):
    out = net(x)
    nn.functional.cross_entropy(out, y).backward()
    return out
def log_predictions(x, y):
    out = step(x, y)
    return out.numpy().argmax(1)
""",
    "embeddings_left_on_the_gpu": """
import torch
from torch import nn
encoder = nn.Linear(300, 300).cuda()
def embed(batch):
    with torch.no_grad():
        emb = encoder(batch.cuda())
    return emb.numpy()
""",
    "leaf_tensor_with_requires_grad": """
import matplotlib.pyplot as plt
import torch
w = torch.zeros(10, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for _ in range(100):
    loss = ((w - 3) ** 2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
plt.plot(w.numpy())
""",
}

NEAR_MISS = {
    "under_no_grad": """
import torch
from torch import nn
model = nn.Linear(3, 2)
def predict(x):
    with torch.no_grad():
        out = model(x)
    return out.numpy()
""",
    "detached_or_forced": """
import torch
import torch.nn.functional as F
from torch import nn
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def train_step(x, y):
    out = model(x)
    loss = F.cross_entropy(out, y)
    loss.backward()
    opt.step()
    a = out.detach().cpu().numpy()
    b = out.data.numpy()
    c = out.numpy(force=True)
    d = out.tolist()
    return a, b, c, d, loss.item()
""",
    "argmax_has_no_grad": """
import torch
import torch.nn.functional as F
from torch import nn
model = nn.Linear(3, 2)
def train_step(x, y):
    out = model(x)
    F.cross_entropy(out, y).backward()
    preds = out.argmax(dim=1).numpy()
    return (preds == y.numpy()).mean()
""",
    "helper_whose_caller_may_turn_grad_off": """
from torch import nn
model = nn.Linear(3, 2)
def to_numpy_predictions(x):
    return model(x).numpy()
""",
    "frozen_backbone_features": """
import torch
from torch import nn
backbone = nn.Linear(128, 64)
backbone.requires_grad_(False)
head = nn.Linear(64, 2)
def train_step(x, y, opt):
    feats = backbone(x)
    np_feats = feats.numpy()
    loss = nn.functional.cross_entropy(head(feats), y)
    loss.backward()
    opt.step()
    return np_feats
""",
    "state_dict_tensors_are_detached": """
import numpy as np
from torch import nn
layer = nn.Linear(4, 4)
np.save("weights.npy", layer.state_dict()["weight"].numpy())
""",
    "cpu_copy_of_a_cuda_output": """
import torch
from torch import nn
encoder = nn.Linear(300, 300).cuda()
@torch.no_grad()
def embed(batch):
    return encoder(batch.cuda()).cpu().numpy()
""",
    "decorated_eval_with_a_cuda_model_moved_back": """
import torch
from torch import nn
net = nn.Linear(3, 1)
@torch.inference_mode()
def score(x):
    return net(x).numpy()
""",
}

SEEN = {
    "loss_history_for_a_plot": "https://github.com/ClownW/Reinforcement-learning-with-PyTorch/issues/3 (5_Deep_Q_Network: the loss kept for the cost plot after backward raises Can't call numpy() on Tensor that requires grad)",
    "layer_weights_to_plot": "https://github.com/tkalayci71/embedding-inspector/issues/22 (plt.plot(x.numpy(), emb_vec[u].numpy()) on embedding vectors that require grad)",
    "np_asarray_of_a_prediction": "https://github.com/zhuangdizhu/FedGen/issues/1 (np.sum over a list of losses that require grad raises the same RuntimeError through __array__)",
    "metric_in_the_training_loop": "https://github.com/pytorch/pytorch/issues/44023 (a Lightning MNIST step whose metric converts an output that requires grad)",
    "helper_returns_the_training_output": "this corpus's case: the training step's logits handed to a NumPy metric",
}
NEAR_MISS["parameters_read_under_inference_mode"] = """
import numpy as np
import torch
from torch import nn
class Deconvolution(nn.Module):
    def __init__(self, n_genes, n_types):
        super().__init__()
        self.W = nn.Parameter(torch.randn(n_genes, n_types))
        self.px_o = nn.Parameter(torch.randn(n_genes))
    @torch.inference_mode()
    def get_params(self):
        return self.W.cpu().numpy(), self.px_o.cpu().numpy()
"""
SEEN["parameters_read_under_inference_mode"] = (
    "scvi-tools external/stereoscope/_module.py (get_params under @torch.inference_mode(): numpy() of a "
    "parameter converts where grad mode is off; a wrong finding in round 3's tuning half)"
)

# round 20 (held-out, after its reading): the conversion in the branch of an ``if`` whose other branch moves the
# same tensor to the CPU first is the CPU path (pytorch-generative-model-collections' nine GAN scripts)
_GPU_MODE = """
import torch
from torch import nn
class GAN:
    def __init__(self, gpu_mode):
        self.gpu_mode = gpu_mode
        self.G = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
        if self.gpu_mode:
            self.G.cuda()
    def visualize(self, n):
        self.G.eval()
        z = torch.rand((n, 8))
        if self.gpu_mode:
            z = z.cuda()
        samples = self.G(z)
{convert}
        return samples
"""
NEAR_MISS["cpu_branch_of_a_gpu_mode_test"] = _GPU_MODE.format(
    convert="""        if self.gpu_mode:
            samples = samples.cpu().data.numpy()
        else:
            samples = samples.data.numpy()"""
)
PITFALL["cuda_output_converted_in_both_branches"] = _GPU_MODE.format(
    convert="""        if self.gpu_mode:
            samples = samples.data.numpy()
        else:
            samples = samples.data.numpy()"""
)

# A metrics helper of the file handed the model's output by a training step: its .numpy() runs where
# autograd records, on a tensor that requires grad (fresh set 20's f15, tuning half, missed at its first run).
_METRICS = """
import numpy as np
import torch
from torch import nn
class RunningMetrics:
    def __init__(self):
        self.scores = []
    def update(self, logits, labels):
        self.scores.append(torch.sigmoid(logits).cpu().numpy())
    def compute(self):
        return float(np.concatenate(self.scores).mean())
def fit(loader):
    model = nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.BCEWithLogitsLoss()
    metrics = RunningMetrics()
    for x, y in loader:
        logits = model(x)
        loss = criterion(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        {update}
    return metrics.compute()
"""
PITFALL["metrics_helper_given_the_training_output"] = _METRICS.format(update="metrics.update(logits, y)")
NEAR_MISS["metrics_helper_given_it_detached"] = _METRICS.format(update="metrics.update(logits.detach(), y)")
NEAR_MISS["metrics_helper_called_under_no_grad"] = _METRICS.format(
    update="with torch.no_grad():\n            metrics.update(model(x), y)"
)
SEEN["metrics_helper_given_the_training_output"] = "benchmarks/fresh/lint20 f15_review_sentiment.py (tuning half)"
