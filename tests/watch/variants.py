"""Re-spellings of each detector's pitfall as user code writes it (not as its case does), and
correct near-misses. Each program is a whole script; ``EXPECT`` maps it to the case the watcher
must report (at a line of the script), or None for silence. Where a spelling was taken from
public code, the comment names it."""

PRELUDE = (
    "import numpy as np\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ntorch.manual_seed(0)\n"
)

PROGRAMS = {
    # -- softmax-singleton-axis --------------------------------------------------------------
    "softmax-binary-head-module": (
        "softmax-singleton-axis",
        """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 16)
        self.head = nn.Linear(16, 1)          # one output unit
        self.act = nn.Softmax(dim=1)
    def forward(self, x):
        return self.act(self.head(torch.relu(self.body(x))))
net = Net()
probs = net(torch.randn(4, 8))
F.binary_cross_entropy(probs, torch.ones(4, 1)).backward()
""",
    ),
    "softmax-tensor-method-last-dim": (
        "softmax-singleton-axis",
        """
w = torch.randn(6, 1, requires_grad=True)
scores = torch.randn(3, 6) @ w               # (3, 1)
weights = scores.softmax(-1)
(weights * 2).sum().backward()
""",
    ),
    "softmax-implicit-dim": (
        "softmax-singleton-axis",
        """
import warnings
warnings.simplefilter("ignore")
gate = nn.Conv2d(4, 1, 1)
attn = F.softmax(gate(torch.randn(2, 4, 5, 5)))   # no dim: 4-D input picks dim 1, of size 1
attn.mean().backward()
""",
    ),
    "softmax-log-through-torch": (
        "softmax-singleton-axis",
        """
logits = nn.Linear(5, 1)(torch.randn(7, 5))
loss = F.nll_loss(torch.log_softmax(logits, dim=1), torch.zeros(7, dtype=torch.long))
loss.backward()
""",
    ),
    "softmax-over-classes-ok": (
        None,
        """
logits = nn.Linear(5, 3)(torch.randn(7, 5))
F.cross_entropy(logits, torch.tensor([0, 1, 2, 0, 1, 2, 0])).backward()
p = logits.softmax(dim=1)
""",
    ),
    "softmax-decoding-one-key-no-grad": (
        None,
        """
with torch.no_grad():                       # an attention step over a single cached key
    q, k = torch.randn(2, 4, 1, 8), torch.randn(2, 4, 1, 8)
    attn = torch.softmax(q @ k.transpose(-2, -1) / 8 ** 0.5, dim=-1)
""",
    ),
    # -- target-shape-broadcast --------------------------------------------------------------
    "mse-bound-criterion": (
        "target-shape-broadcast",
        """
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
criterion = nn.MSELoss()
x, y = torch.randn(16, 3), torch.randn(16)            # y: (N,)
for _ in range(2):
    loss = criterion(model(x), y)                     # (N, 1) against (N,)
    loss.backward()
""",
    ),
    "l1-functional-keyword": (
        "target-shape-broadcast",
        """
pred = nn.Linear(2, 1)(torch.randn(5, 2))
F.l1_loss(input=pred, target=torch.zeros(5)).backward()
""",
    ),
    "smooth-l1-prediction-squeezed-target-not": (
        "target-shape-broadcast",
        """
pred = nn.Linear(2, 1)(torch.randn(4, 2)).squeeze(-1)  # (4,)
target = torch.randn(4).unsqueeze(1)                    # (4, 1)
nn.SmoothL1Loss()(pred, target).backward()
""",
    ),
    "mse-same-shape-ok": (
        None,
        """
lin = nn.Linear(3, 1)
nn.MSELoss()(lin(torch.randn(16, 3)).squeeze(1), torch.randn(16)).backward()
nn.MSELoss()(lin(torch.randn(16, 3)), torch.randn(16, 1)).backward()
""",
    ),
    "mse-scalar-target-ok": (
        None,
        """
z = nn.Linear(3, 4)(torch.randn(2, 3))
F.mse_loss(z, torch.zeros(2, 4)).backward()          # equal shapes
""",
    ),
    # -- nan-grad-through-mask ---------------------------------------------------------------
    "nan-where-division": (
        "nan-grad-through-mask",
        """
x = torch.tensor([0.0, 2.0, 3.0], requires_grad=True)
count = torch.tensor([0.0, 1.0, 2.0])
mean = torch.where(count > 0, x / count, torch.zeros_like(x))
mean.sum().backward()
""",
    ),
    "nan-log-masked-by-index": (
        "nan-grad-through-mask",
        """
p = nn.Parameter(torch.tensor([0.0, 0.5, 0.9]))
logp = torch.log(p)
valid = p > 0
loss = -(logp[valid]).mean()
loss.backward()
""",
    ),
    "nan-sqrt-distance-in-function": (
        "nan-grad-through-mask",
        """
def pairwise_distance(a):
    d2 = ((a[:, None] - a[None]) ** 2).sum(-1)
    return torch.sqrt(d2)                     # sqrt'(0) is inf on the diagonal
pts = torch.randn(4, 2, requires_grad=True)
d = pairwise_distance(pts)
off = ~torch.eye(4, dtype=torch.bool)
d[off].sum().backward()
""",
    ),
    "nan-safe-double-where-ok": (
        None,
        """
x = torch.tensor([0.0, 2.0, 3.0], requires_grad=True)
count = torch.tensor([0.0, 1.0, 2.0])
safe = torch.where(count > 0, count, torch.ones_like(count))
torch.where(count > 0, x / safe, torch.zeros_like(x)).sum().backward()
""",
    ),
    "nan-loss-itself-nan-ok": (
        None,
        """
w = torch.tensor([float("nan"), 1.0], requires_grad=True)
(w * 3).sum().backward()                     # NaN data: the loss is NaN too, another problem
""",
    ),
    # -- uint8-conversion-wraparound ---------------------------------------------------------
    "uint8-to-dtype": (
        "uint8-conversion-wraparound",
        """
img = torch.rand(3, 4, 4) * 1.2 - 0.1          # a network output slightly outside [0, 1]
pixels = (img * 255).to(torch.uint8)
""",
    ),
    "uint8-type-keyword": (
        "uint8-conversion-wraparound",
        """
def to_image(t):
    return (t.permute(1, 2, 0) * 255.0 + 0.5).to(dtype=torch.uint8)
out = to_image(torch.full((3, 2, 2), 1.01))
""",
    ),
    "uint8-type-method": (
        "uint8-conversion-wraparound",
        """
depth = torch.randn(8, 8) * 300
vis = depth.type(torch.uint8)
""",
    ),
    "uint8-clamped-ok": (
        None,
        """
img = torch.rand(3, 4, 4) * 1.2 - 0.1
pixels = (img * 255).clamp(0, 255).to(torch.uint8)
pixels2 = img.mul(255).round().clamp_(0, 255).byte()
""",
    ),
    "uint8-in-range-ok": (
        None,
        """
labels = torch.tensor([0.0, 3.0, 255.0])
mask = labels.byte()
""",
    ),
    # -- loss-target-requires-grad -----------------------------------------------------------
    "dqn-target-not-detached": (
        "loss-target-requires-grad",
        """
q_net, target_net = nn.Linear(4, 2), nn.Linear(4, 2)
opt = torch.optim.Adam(q_net.parameters())
s, s2, r = torch.randn(8, 4), torch.randn(8, 4), torch.randn(8)
q = q_net(s).max(1)[0]
target = r + 0.99 * target_net(s2).max(1)[0]      # no torch.no_grad(), no .detach()
loss = F.smooth_l1_loss(q, target)
loss.backward()
""",
    ),
    "distillation-kl": (
        "loss-target-requires-grad",
        """
student, teacher = nn.Linear(6, 3), nn.Linear(6, 3)
x = torch.randn(5, 6)
kd = nn.KLDivLoss(reduction="batchmean")
loss = kd(F.log_softmax(student(x), dim=1), F.softmax(teacher(x), dim=1))
loss.backward()
""",
    ),
    "autoencoder-target-is-encoder-output": (
        "loss-target-requires-grad",
        """
enc, proj = nn.Linear(5, 3), nn.Linear(3, 3)
h = enc(torch.randn(4, 5))
criterion = nn.MSELoss()
criterion(proj(h), h).backward()
""",
    ),
    "dqn-target-no-grad-ok": (
        None,
        """
q_net, target_net = nn.Linear(4, 2), nn.Linear(4, 2)
s, s2, r = torch.randn(8, 4), torch.randn(8, 4), torch.randn(8)
with torch.no_grad():
    target = r + 0.99 * target_net(s2).max(1)[0]
F.smooth_l1_loss(q_net(s).max(1)[0], target).backward()
""",
    ),
    "labels-plain-tensor-ok": (
        None,
        """
lin = nn.Linear(3, 2)
F.mse_loss(lin(torch.randn(4, 3)), torch.randn(4, 2)).backward()
pred = lin(torch.randn(4, 3))
F.kl_div(F.log_softmax(pred, 1), F.softmax(torch.randn(4, 2), 1), reduction="batchmean").backward()
""",
    ),
    # -- loss-append-keeps-graph -------------------------------------------------------------
    "running-loss-plus-equals": (
        "loss-append-keeps-graph",
        """
# the FAQ's loop (pytorch/pytorch#6017; google/brax#152)
model, criterion = nn.Linear(3, 1), nn.MSELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
total_loss = 0
for i in range(5):
    opt.zero_grad()
    loss = criterion(model(torch.randn(8, 3)), torch.randn(8, 1))
    loss.backward()
    opt.step()
    total_loss += loss
""",
    ),
    "losses-dict-of-lists": (
        "loss-append-keeps-graph",
        """
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
history = {"train": []}
def step(x, y):
    opt.zero_grad()
    out = F.mse_loss(model(x), y)
    out.backward()
    opt.step()
    return out
for _ in range(6):
    history["train"].append(step(torch.randn(4, 3), torch.randn(4, 1)))
""",
    ),
    "loss-sum-before-backward": (
        "loss-append-keeps-graph",
        """
# `loss_sum += loss` before backward (ray-project/ray#40940's loop)
model = nn.Linear(3, 1)
optimizer = torch.optim.AdamW(model.parameters())
loss_sum = torch.zeros(())
for _ in range(4):
    loss = model(torch.randn(2, 3)).pow(2).mean()
    loss_sum += loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
    ),
    "gan-step-sum-for-logging-ok": (
        None,
        """
# errD = errD_real + errD_fake after both backward() calls, read once (pytorch/examples dcgan/main.py)
netD = nn.Linear(4, 1)
optD = torch.optim.SGD(netD.parameters(), lr=0.01)
for _ in range(4):
    netD.zero_grad()
    errD_real = F.binary_cross_entropy_with_logits(netD(torch.randn(3, 4)), torch.ones(3, 1))
    errD_real.backward()
    errD_fake = F.binary_cross_entropy_with_logits(netD(torch.randn(3, 4)), torch.zeros(3, 1))
    errD_fake.backward()
    errD = errD_real + errD_fake
    optD.step()
    print(errD.item())
""",
    ),
    "running-loss-item-ok": (
        None,
        """
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
running, kept = 0.0, []
for _ in range(6):
    opt.zero_grad()
    loss = F.mse_loss(model(torch.randn(8, 3)), torch.randn(8, 1))
    loss.backward()
    opt.step()
    running += loss.item()
    kept.append(loss.detach())
""",
    ),
    "accumulate-then-backward-ok": (
        None,
        """
model = nn.Linear(3, 1)
total = 0
for _ in range(4):                                  # gradient accumulation by summing losses
    total = total + model(torch.randn(2, 3)).pow(2).mean()
total.backward()
""",
    ),
    # -- param-reassignment-detaches-optimizer -----------------------------------------------
    "new-head-after-optimizer": (
        "param-reassignment-detaches-optimizer",
        """
backbone = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
model = nn.Sequential()
model.features, model.fc = backbone, nn.Linear(8, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.fc = nn.Linear(8, 3)                         # the head for our 3 classes, too late
out = model.fc(model.features(torch.randn(2, 8)))
F.cross_entropy(out, torch.tensor([0, 2])).backward()
optimizer.step()
""",
    ),
    "weight-reinit-with-new-parameter": (
        "param-reassignment-detaches-optimizer",
        """
emb = nn.Embedding(10, 4)
opt = torch.optim.Adam(emb.parameters())
emb.weight = nn.Parameter(torch.zeros(10, 4))       # pretrained vectors, loaded the wrong way
emb(torch.tensor([1, 2])).sum().backward()
opt.step()
""",
    ),
    "setattr-parameter": (
        "param-reassignment-detaches-optimizer",
        """
lin = nn.Linear(3, 3)
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
setattr(lin, "bias", nn.Parameter(torch.ones(3)))
lin(torch.randn(1, 3)).sum().backward()
opt.step()
""",
    ),
    "new-head-before-optimizer-ok": (
        None,
        """
model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 10))
model[2] = nn.Linear(8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
F.cross_entropy(model(torch.randn(2, 8)), torch.tensor([0, 2])).backward()
optimizer.step()
""",
    ),
    "copy-into-parameter-ok": (
        None,
        """
emb = nn.Embedding(10, 4)
opt = torch.optim.Adam(emb.parameters())
with torch.no_grad():
    emb.weight.copy_(torch.zeros(10, 4))
emb(torch.tensor([1, 2])).sum().backward()
opt.step()
""",
    ),
    # -- unregistered-tensor-attribute -------------------------------------------------------
    "positional-encoding-plain-attribute": (
        "unregistered-tensor-attribute",
        """
# `self.pe = torch.zeros(max_len, d_model)` (wenet-e2e/wenet#2413)
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=50):
        super().__init__()
        self.proj = nn.Linear(d_model, d_model)
        self.pe = torch.zeros(max_len, d_model)
    def forward(self, x):
        return self.proj(x) + self.pe[: x.size(1)]
model = PositionalEncoding(8)
device = torch.device("cpu")
model = model.to(device)
""",
    ),
    "setattr-pos-embed-half": (
        "unregistered-tensor-attribute",
        """
# setattr(self, f'pos_embed{idx}', ...) then model.half() (lyuwenyu/RT-DETR#677)
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        for idx in range(2):
            setattr(self, f"pos_embed{idx}", torch.randn(1, 3, 4))
enc = Encoder().half()
""",
    ),
    "nested-mask-double": (
        "unregistered-tensor-attribute",
        """
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.Linear(4, 4)
        self.causal = torch.tril(torch.ones(5, 5))
model = nn.Sequential(Block(), nn.Linear(4, 2))
model.double()
""",
    ),
    "registered-buffer-ok": (
        None,
        """
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=50):
        super().__init__()
        self.proj = nn.Linear(d_model, d_model)
        self.register_buffer("pe", torch.zeros(max_len, d_model), persistent=False)
        self.scale = 2.0
model = PositionalEncoding(8).to(torch.float64)
""",
    ),
    "weight-norm-recomputed-ok": (
        None,
        """
layer = nn.utils.parametrizations.weight_norm(nn.Linear(4, 4)).double()
import warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    old = nn.utils.weight_norm(nn.Linear(4, 4)).double()   # recomputes .weight in a pre-hook
""",
    ),
    # -- from-numpy-shares-memory ------------------------------------------------------------
    "dataset-normalizes-in-place": (
        "from-numpy-shares-memory",
        """
class Frames(torch.utils.data.Dataset):
    def __init__(self):
        self.data = np.random.rand(4, 3, 8, 8).astype(np.float32)
    def __len__(self):
        return len(self.data)
    def __getitem__(self, i):
        x = torch.from_numpy(self.data[i])
        x.sub_(0.5).div_(0.25)
        return x
for batch in torch.utils.data.DataLoader(Frames(), batch_size=2):
    pass
""",
    ),
    "as-tensor-augmented-assign": (
        "from-numpy-shares-memory",
        """
arr = np.ones((2, 3), dtype=np.float32)
t = torch.as_tensor(arr)
t /= 255.0
""",
    ),
    "from-numpy-view-clamp": (
        "from-numpy-shares-memory",
        """
audio = np.random.randn(1000).astype(np.float32)
wave = torch.from_numpy(audio).view(10, 100)
wave.clamp_(-1.0, 1.0)
""",
    ),
    "from-numpy-out-of-place-ok": (
        None,
        """
arr = np.ones((2, 3), dtype=np.float32)
t = torch.from_numpy(arr)
t = (t - 0.5) / 0.25
u = torch.tensor(arr)
u -= 1
""",
    ),
    "from-numpy-float-copy-ok": (
        None,
        """
arr = np.ones((2, 3))                               # float64
t = torch.from_numpy(arr).float()                   # a copy in float32
t.mul_(2)
""",
    ),
    # -- eval-without-no-grad ----------------------------------------------------------------
    "validate-loop-without-no-grad": (
        "eval-without-no-grad",
        """
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
def evaluate(model, batches):
    model.eval()
    correct = 0
    for x, y in batches:
        logits = model(x)
        correct += (logits.argmax(1) == y).sum().item()
    return correct
evaluate(model, [(torch.randn(4, 8), torch.tensor([0, 1, 2, 0]))] * 3)
""",
    ),
    "predict-after-training": (
        "eval-without-no-grad",
        """
net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad(); F.mse_loss(net(torch.randn(3, 4)), torch.randn(3, 1)).backward(); opt.step()
net.train(False)
preds = [net(torch.randn(1, 4)).item() for _ in range(3)]
""",
    ),
    "eval-module-returns-tuple": (
        "eval-without-no-grad",
        """
lstm = nn.LSTM(4, 8, batch_first=True).eval()
out, (h, c) = lstm(torch.randn(2, 5, 4))
summary = out.mean().item()
""",
    ),
    "eval-with-inference-mode-ok": (
        None,
        """
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3)).eval()
with torch.inference_mode():
    model(torch.randn(4, 8))
with torch.no_grad():
    model(torch.randn(4, 8))
""",
    ),
    "frozen-bn-finetune-ok": (
        None,
        """
model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
model.eval()                                        # BN statistics frozen while fine-tuning
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    loss = model(torch.randn(5, 4)).pow(2).mean()
    loss.backward()
    opt.step()
""",
    ),
}
