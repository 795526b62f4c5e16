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
    "lbfgs-closure-target-broadcast": (
        "target-shape-broadcast",
        """
# the loss computed inside an LBFGS closure (torch's own step runs it): watched like any other code
model = nn.Linear(3, 1)
x, y = torch.randn(16, 3), torch.randn(16)
opt = torch.optim.LBFGS(model.parameters(), max_iter=3)
def closure():
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    return loss
for _ in range(2):
    opt.step(closure)
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
    "plain-tensor-checkpoint-cpu-only": (
        "unregistered-tensor-attribute",
        """
import os, tempfile
class Standardize(nn.Module):                   # statistics fitted once, kept as plain attributes
    def __init__(self, data):
        super().__init__()
        self.mean, self.std = data.mean(0), data.std(0)
        self.net = nn.Linear(3, 1)
    def forward(self, x):
        return self.net((x - self.mean) / self.std)
model = Standardize(torch.randn(100, 3) * 5 + 2)
model(torch.randn(4, 3)).sum().backward()
with tempfile.TemporaryDirectory() as d:
    torch.save(model.state_dict(), os.path.join(d, "model.pt"))   # saved without mean and std
""",
    ),
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
    # -- requires-grad-typo -------------------------------------------------------------------
    "typo-freeze-embedding-loop": (
        "requires-grad-typo",
        """
# `p.require_grad = False` over a pretrained part (pytorch/benchmark#1771, codertimo/BERT-pytorch#104)
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(20, 8)
        self.out = nn.Linear(8, 3)
    def forward(self, tokens):
        return self.out(self.embedding(tokens).mean(1))
model = Tagger()
for param in model.embedding.parameters():
    param.require_grad = False
opt = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()))
for _ in range(2):
    opt.zero_grad()
    F.cross_entropy(model(torch.randint(0, 20, (4, 5))), torch.tensor([0, 1, 2, 0])).backward()
    opt.step()
""",
    ),
    "typo-requires-grads-setattr": (
        "requires-grad-typo",
        """
backbone, head = nn.Linear(6, 6), nn.Linear(6, 2)
for name, p in backbone.named_parameters():
    setattr(p, "requires_grads", False)
opt = torch.optim.SGD([*backbone.parameters(), *head.parameters()], lr=0.1)
F.mse_loss(head(backbone(torch.randn(3, 6))), torch.zeros(3, 2)).backward()
opt.step()
""",
    ),
    "typo-meant-to-train-a-scale": (
        "requires-grad-typo",
        """
model = nn.Linear(4, 1)
temperature = torch.ones(1)
temperature.require_grad = True                 # meant to learn it: it never gets a gradient
opt = torch.optim.SGD([*model.parameters(), temperature], lr=0.1)
F.mse_loss(model(torch.randn(5, 4)) / temperature, torch.zeros(5, 1)).backward()
opt.step()
""",
    ),
    "typo-on-constant-table-ok": (
        None,
        """
# thuml/Time-Series-Library#743: the tensor did not require grad in the first place
class PositionalEmbedding(nn.Module):
    def __init__(self, d_model=8, max_len=16):
        super().__init__()
        pe = torch.zeros(max_len, d_model).float()
        pe.require_grad = False
        self.register_buffer("pe", pe)
    def forward(self, x):
        return x + self.pe[: x.size(1)]
PositionalEmbedding()(torch.randn(2, 4, 8))
""",
    ),
    "freeze-spelled-right-ok": (
        None,
        """
backbone, head = nn.Linear(6, 6), nn.Linear(6, 2)
for p in backbone.parameters():
    p.requires_grad = False
opt = torch.optim.SGD(head.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    F.mse_loss(head(backbone(torch.randn(3, 6))), torch.zeros(3, 2)).backward()
    opt.step()
""",
    ),
    # -- frozen-params-keep-moving -----------------------------------------------------------
    "freeze-midway-adam-zeroed-grads": (
        "frozen-params-keep-moving",
        """
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x, y = torch.randn(16, 4), torch.randn(16, 1)
for step in range(6):
    if step == 3:
        for p in model[0].parameters():          # stage 2: the encoder is done
            p.requires_grad = False
    opt.zero_grad(set_to_none=False)
    F.mse_loss(model(x), y).backward()
    opt.step()
""",
    ),
    "freeze-with-weight-decay-manual-zero": (
        "frozen-params-keep-moving",
        """
enc, head = nn.Linear(4, 4), nn.Linear(4, 1)
opt = torch.optim.SGD([*enc.parameters(), *head.parameters()], lr=0.1, weight_decay=0.01)
def train_step(x, y):
    for p in [*enc.parameters(), *head.parameters()]:
        if p.grad is not None:
            p.grad.zero_()                        # the pre-2.0 way to clear gradients
    F.mse_loss(head(enc(x)), y).backward()
    opt.step()
train_step(torch.randn(8, 4), torch.randn(8, 1))
enc.requires_grad_(False)
train_step(torch.randn(8, 4), torch.randn(8, 1))
""",
    ),
    "freeze-module-zero-grad-keeps-buffers": (
        "frozen-params-keep-moving",
        """
net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.Flatten(), nn.Linear(2 * 4 * 4, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for epoch in range(4):
    if epoch == 2:
        net[0].requires_grad_(False)
    net.zero_grad(set_to_none=False)
    F.cross_entropy(net(torch.randn(3, 1, 6, 6)), torch.tensor([0, 1, 0])).backward()
    opt.step()
""",
    ),
    "freeze-then-new-optimizer-ok": (
        None,
        """
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x, y = torch.randn(16, 4), torch.randn(16, 1)
for step in range(4):
    if step == 2:
        model[0].requires_grad_(False)
        opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1, momentum=0.9)
    opt.zero_grad(set_to_none=False)
    F.mse_loss(model(x), y).backward()
    opt.step()
""",
    ),
    "freeze-plain-sgd-zeroed-ok": (
        None,
        """
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)     # no momentum, no decay: a zero gradient is no step
x, y = torch.randn(16, 4), torch.randn(16, 1)
for step in range(4):
    if step == 2:
        model[0].requires_grad_(False)
    opt.zero_grad(set_to_none=False)
    F.mse_loss(model(x), y).backward()
    opt.step()
""",
    ),
    # -- loss-rewrapped-from-item ------------------------------------------------------------
    "rewrap-loss-from-numpy": (
        "loss-rewrapped-from-item",
        """
# the loss turned into NumPy and back (isayev/ReLeaSE#39)
model = nn.Linear(3, 1)
opt = torch.optim.Adam(model.parameters())
for _ in range(2):
    opt.zero_grad()
    errors = (model(torch.randn(8, 3)) - torch.randn(8, 1)).abs()
    loss = torch.tensor(np.mean(errors.detach().numpy()), requires_grad=True)
    loss.backward()
    opt.step()
""",
    ),
    "rewrap-detach-requires-grad": (
        "loss-rewrapped-from-item",
        """
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
def compute_loss(out, target):
    loss = F.smooth_l1_loss(out, target)
    return loss.detach().requires_grad_()    # "fixes" element 0 of tensors does not require grad
optimizer.zero_grad()
compute_loss(model(torch.randn(5, 3)), torch.randn(5, 1)).backward()
optimizer.step()
""",
    ),
    "rewrap-autograd-backward-from-item": (
        "loss-rewrapped-from-item",
        """
policy = nn.Linear(4, 2)
opt = torch.optim.Adam(policy.parameters())
log_probs = F.log_softmax(policy(torch.randn(6, 4)), 1)[:, 0]
returns = torch.randn(6)
value = -(log_probs * returns).sum().item()
torch.autograd.backward(torch.tensor(value, requires_grad=True))
opt.step()
""",
    ),
    "loss-item-for-logging-ok": (
        None,
        """
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
history = []
for _ in range(3):
    opt.zero_grad()
    loss = F.mse_loss(model(torch.randn(8, 3)), torch.randn(8, 1))
    loss.backward()
    opt.step()
    history.append(torch.tensor(loss.item()))
""",
    ),
    "leaf-backward-without-model-ok": (
        None,
        """
x = torch.tensor(3.0, requires_grad=True)     # autograd on a bare leaf: nothing else to train
x.backward()
y = torch.randn(3, requires_grad=True)
(y ** 2).sum().backward()
""",
    ),
    # -- parameter-unused-in-forward ------------------------------------------------------------
    "unused-branch-flag-never-set": (
        "parameter-unused-in-forward",
        """
class Encoder(nn.Module):
    def __init__(self, use_attn=False):
        super().__init__()
        self.proj = nn.Linear(6, 6)
        self.attn = nn.Linear(6, 6)
        self.use_attn = use_attn
        self.out = nn.Linear(6, 1)
    def forward(self, x):
        h = torch.relu(self.proj(x))
        if self.use_attn:
            h = h + self.attn(h)
        return self.out(h)
model = Encoder()
opt = torch.optim.AdamW(model.parameters())
for _ in range(3):
    opt.zero_grad()
    F.mse_loss(model(torch.randn(4, 6)), torch.randn(4, 1)).backward()
    opt.step()
""",
    ),
    "norm-module-replaced-by-functional": (
        "parameter-unused-in-forward",
        """
# a LayerNorm's gain that never gets a gradient (lucidrains/PaLM-rlhf-pytorch#46)
class Block(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Linear(dim, dim)
    def forward(self, x):
        return x + self.ff(F.layer_norm(x, x.shape[-1:]))   # not self.norm
model = nn.Sequential(Block(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    model(torch.randn(3, 8)).pow(2).mean().backward()
    opt.step()
""",
    ),
    "aux-head-computed-not-in-loss": (
        "parameter-unused-in-forward",
        """
# parameters "not used in producing loss" (Megvii-BaseDetection/YOLOX#885)
class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(5, 8)
        self.cls = nn.Linear(8, 3)
        self.aux = nn.Linear(8, 2)
    def forward(self, x):
        h = torch.relu(self.body(x))
        aux_logits = self.aux(h)                # computed, then dropped
        return self.cls(h)
det = Detector()
opt = torch.optim.SGD(det.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    F.cross_entropy(det(torch.randn(4, 5)), torch.tensor([0, 1, 2, 0])).backward()
    opt.step()
""",
    ),
    "layer-skipped-on-some-steps-ok": (
        None,
        """
class Net(nn.Module):                           # LayerDrop: skipped on some steps, trained on others
    def __init__(self):
        super().__init__()
        self.a, self.b, self.out = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 1)
    def forward(self, x, skip_b):
        h = torch.relu(self.a(x))
        if not skip_b:
            h = torch.relu(self.b(h))
        return self.out(h)
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(4):
    opt.zero_grad()
    net(torch.randn(2, 4), skip_b=step % 2 == 0).sum().backward()
    opt.step()
""",
    ),
    "teacher-in-optimizer-target-detached-ok": (
        None,
        """
both = nn.ModuleDict({"student": nn.Linear(3, 2), "teacher": nn.Linear(3, 2)})
opt = torch.optim.SGD(both.parameters(), lr=0.1)    # the teacher is held, and never meant to move
for _ in range(2):
    x = torch.randn(4, 3)
    target = both["teacher"](x).detach()
    with torch.no_grad():
        soft = both["teacher"](x).softmax(1)
    opt.zero_grad()
    (F.mse_loss(both["student"](x), target) + F.mse_loss(both["student"](x).softmax(1), soft)).backward()
    opt.step()
""",
    ),
    "frozen-embedding-in-optimizer-ok": (
        None,
        """
emb, rnn_out = nn.Embedding(10, 4), nn.Linear(4, 2)
emb.requires_grad_(False)                       # pretrained vectors, kept fixed
opt = torch.optim.SGD([*emb.parameters(), *rnn_out.parameters()], lr=0.1)
for _ in range(2):
    opt.zero_grad()
    rnn_out(emb(torch.tensor([1, 2, 3]))).sum().backward()
    opt.step()
""",
    ),
    # -- graph-cut-in-forward ----------------------------------------------------------------
    "detach-inside-forward": (
        "graph-cut-in-forward",
        """
# a detach() on the features inside the model cuts the encoder off (speechbrain/speechbrain#1396)
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 8)
        self.decoder = nn.Linear(8, 1)
    def forward(self, x):
        feats = self.encoder(x).detach()
        return self.decoder(torch.tanh(feats))
model = Model()
opt = torch.optim.Adam(model.parameters())
for _ in range(2):
    opt.zero_grad()
    F.mse_loss(model(torch.randn(6, 4)), torch.randn(6, 1)).backward()
    opt.step()
""",
    ),
    "no-grad-block-inside-forward": (
        "graph-cut-in-forward",
        """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 8)
        self.mix = nn.Linear(8, 8)
        self.head = nn.Linear(8, 1)
    def forward(self, x):
        h = torch.relu(self.stem(x))
        with torch.no_grad():                   # meant for a statistic, wraps the layer too
            h = self.mix(h)
        return self.head(h)
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    net(torch.randn(3, 4)).pow(2).mean().backward()
    opt.step()
""",
    ),
    "gate-value-taken-with-item": (
        "graph-cut-in-forward",
        """
class Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(4, 1)
        self.body = nn.Linear(4, 1)
    def forward(self, x):
        g = torch.sigmoid(self.gate(x)).mean().item()   # a number: the gate no longer learns
        return g * self.body(x)
m = Gated()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    F.mse_loss(m(torch.randn(5, 4)), torch.randn(5, 1)).backward()
    opt.step()
""",
    ),
    "stop-gradient-on-one-branch-ok": (
        None,
        """
# SimSiam's stop-gradient: the encoder still learns through the other branch
class SimSiam(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(6, 4)
        self.predictor = nn.Linear(4, 4)
    def forward(self, x1, x2):
        z1, z2 = self.encoder(x1), self.encoder(x2)
        p1, p2 = self.predictor(z1), self.predictor(z2)
        return -(F.cosine_similarity(p1, z2.detach()).mean() + F.cosine_similarity(p2, z1.detach()).mean()) / 2
model = SimSiam()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(2):
    opt.zero_grad()
    model(torch.randn(4, 6), torch.randn(4, 6)).backward()
    opt.step()
""",
    ),
    "straight-through-estimator-ok": (
        None,
        """
class Quantizer(nn.Module):                      # VQ-VAE: z + (zq - z).detach()
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 3)
        self.codebook = nn.Embedding(5, 3)
        self.dec = nn.Linear(3, 4)
    def forward(self, x):
        z = self.enc(x)
        idx = torch.cdist(z, self.codebook.weight).argmin(1)
        zq = self.codebook(idx)
        commit = F.mse_loss(zq, z.detach())
        return self.dec(z + (zq - z).detach()), commit
vq = Quantizer()
opt = torch.optim.Adam(vq.parameters())
for _ in range(2):
    opt.zero_grad()
    x = torch.randn(6, 4)
    out, commit = vq(x)
    (F.mse_loss(out, x) + commit).backward()
    opt.step()
""",
    ),
    # -- submodules-in-plain-list ------------------------------------------------------------
    "heads-in-plain-dict": (
        "submodules-in-plain-list",
        """
class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 8)
        self.heads = {"age": nn.Linear(8, 1), "score": nn.Linear(8, 1)}
    def forward(self, x):
        h = torch.relu(self.trunk(x))
        return sum(head(h) for head in self.heads.values())
model = MultiTask()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(2, 4)).pow(2).mean().backward()
    opt.step()
""",
    ),
    "convs-appended-to-list": (
        "submodules-in-plain-list",
        """
# layers built in a loop and kept in a list (pytorch/pytorch#8017)
class Net(nn.Module):
    def __init__(self, depth=2):
        super().__init__()
        self.convs = []
        for _ in range(depth):
            self.convs.append(nn.Conv1d(2, 2, 3, padding=1))
        self.fc = nn.Linear(2 * 5, 1)
    def forward(self, x):
        for conv in self.convs:
            x = F.relu(conv(x))
        return self.fc(x.flatten(1))
net = Net()
optimizer = torch.optim.Adam(net.parameters())
for _ in range(2):
    optimizer.zero_grad()
    net(torch.randn(3, 2, 5)).mean().backward()
    optimizer.step()
""",
    ),
    "layers-in-tuple": (
        "submodules-in-plain-list",
        """
class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))
        self.branches = (nn.Linear(3, 3), nn.Linear(3, 3))
    def forward(self, x):
        return self.scale * (self.branches[0](x) + self.branches[1](x))
pair = Pair()
opt = torch.optim.SGD(pair.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    pair(torch.randn(2, 3)).sum().backward()
    opt.step()
""",
    ),
    "blocks-in-module-list-ok": (
        None,
        """
class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
        self.head = nn.Linear(4, 1)
    def forward(self, x):
        for b in self.blocks:
            x = torch.relu(b(x))
        return self.head(x)
tower = Tower()
opt = torch.optim.SGD(tower.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    tower(torch.randn(2, 4)).sum().backward()
    opt.step()
""",
    ),
    "list-layers-given-to-optimizer-ok": (
        None,
        """
class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = [nn.Linear(4, 4) for _ in range(2)]   # kept out of the state dict on purpose
        self.head = nn.Linear(4, 1)
    def forward(self, x):
        for b in self.blocks:
            x = torch.relu(b(x))
        return self.head(x)
tower = Tower()
params = list(tower.parameters()) + [p for b in tower.blocks for p in b.parameters()]
opt = torch.optim.SGD(params, lr=0.1)
for _ in range(3):
    opt.zero_grad()
    tower(torch.randn(2, 4)).sum().backward()
    opt.step()
""",
    ),
    # -- init-after-load-state-dict ----------------------------------------------------------
    "load-then-reset-parameters": (
        "init-after-load-state-dict",
        """
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
checkpoint = {k: torch.ones_like(v) for k, v in model.state_dict().items()}
model.load_state_dict(checkpoint)
for m in model.modules():
    if hasattr(m, "reset_parameters"):
        m.reset_parameters()                    # meant for training from scratch
model(torch.randn(1, 4))
""",
    ),
    "load-then-dcgan-weights-init": (
        "init-after-load-state-dict",
        """
# pytorch/examples dcgan: weights_init via .data.normal_(), here applied after the load
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        m.weight.data.normal_(0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)
netG = nn.Sequential(nn.ConvTranspose2d(4, 8, 4, bias=False), nn.BatchNorm2d(8), nn.ReLU())
saved = {k: v.clone() + 1 for k, v in netG.state_dict().items()}
netG.load_state_dict(saved)
netG.apply(weights_init)
""",
    ),
    "load-then-init-loop": (
        "init-after-load-state-dict",
        """
# init_model_parameters after load_state_dict (huggingface/picotron#32)
def init_model_parameters(model):
    for name, p in model.named_parameters():
        if "weight" in name:
            nn.init.xavier_normal_(p)
        else:
            nn.init.zeros_(p)
model = nn.Linear(6, 6)
state = {"weight": torch.eye(6), "bias": torch.zeros(6)}
model.load_state_dict(state)
with torch.no_grad():
    init_model_parameters(model)
""",
    ),
    "load-then-reinit-head-ok": (
        None,
        """
model = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2))
model.load_state_dict({k: v.clone() for k, v in model.state_dict().items()})
nn.init.zeros_(model[2].weight)                 # a fresh head for the new task
nn.init.zeros_(model[2].bias)
""",
    ),
    "load-then-copy-ema-ok": (
        None,
        """
model, ema = nn.Linear(4, 4), nn.Linear(4, 4)
ckpt = {"model": {k: v + 1 for k, v in model.state_dict().items()}, "ema": ema.state_dict()}
model.load_state_dict(ckpt["model"])
ema.load_state_dict(ckpt["ema"])
with torch.no_grad():                           # evaluate with the EMA weights
    for p, q in zip(model.parameters(), ema.parameters()):
        p.copy_(q)
""",
    ),
    # -- inplace-edit-through-data ---------------------------------------------------------------
    "data-edit-wgan-clip-before-backward": (
        "inplace-edit-through-data",
        """
# WGAN weight clipping (martinarjovsky/WassersteinGAN main.py: p.data.clamp_), misplaced
# between the critic's loss and its backward
netD = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
for _ in range(3):
    real, fake = torch.randn(16, 4), torch.randn(16, 4)
    optD.zero_grad()
    errD = netD(fake).mean() - netD(real).mean()
    for p in netD.parameters():
        p.data.clamp_(-0.01, 0.01)
    errD.backward()
    optD.step()
""",
    ),
    "data-edit-max-norm-method": (
        "inplace-edit-through-data",
        """
class MaxNormNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(8, 32)
        self.out = nn.Linear(32, 3)
    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))
    def renorm_(self, max_norm=0.5):
        w = self.out.weight.data
        norms = w.norm(dim=1, keepdim=True).clamp(min=max_norm)
        w.mul_(max_norm / norms)
net = MaxNormNet()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(2):
    loss = F.cross_entropy(net(torch.randn(10, 8)), torch.randint(0, 3, (10,)))
    net.renorm_()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    ),
    "data-edit-zero-padding-row": (
        "inplace-edit-through-data",
        """
emb = nn.Embedding(20, 8)
head = nn.Linear(8, 2)
tokens = torch.randint(0, 20, (4, 6))
logits = head(emb(tokens).mean(1))
emb.weight.data[0] = 0                          # keep the padding row at zero
F.cross_entropy(logits, torch.tensor([0, 1, 0, 1])).backward()
""",
    ),
    "data-edit-clip-after-step-ok": (
        None,
        """
netD = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
for _ in range(3):
    for p in netD.parameters():                 # clipped before the critic runs, as WGAN does
        p.data.clamp_(-0.01, 0.01)
    optD.zero_grad()
    errD = netD(torch.randn(16, 4)).mean() - netD(torch.randn(16, 4)).mean()
    errD.backward()
    optD.step()
""",
    ),
    "data-read-between-forward-and-backward-ok": (
        None,
        """
net = nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for _ in range(3):
    loss = net(torch.randn(5, 6)).pow(2).mean()
    norms = [p.data.norm().item() for p in net.parameters()]   # logged, not edited
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        net[2].weight.clamp_(-1, 1)             # a constraint after the step
""",
    ),
    "data-nan-weights-keep-training-ok": (
        None,
        """
net = nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(8, 3)
x[0, 0] = float("nan")                          # a corrupt sample: the weights turn NaN, nothing edits them
for _ in range(3):
    opt.zero_grad()
    loss = net(x).pow(2).mean()
    loss.backward()
    opt.step()
""",
    ),
    # -- rnn-batch-first-mismatch ---------------------------------------------------------------
    "time-first-lstm-last-step-classifier": (
        "rnn-batch-first-mismatch",
        """
# yunjey/pytorch-tutorial#196: the tutorial's batch_first=True turned to False, out[:, -1, :] kept
class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(28, 64, 2)
        self.fc = nn.Linear(64, 10)
    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1, :])
model = RNN()
images = torch.randn(8, 28, 28)                 # (batch, rows as steps, pixels)
F.cross_entropy(model(images), torch.randint(0, 10, (8,))).backward()
""",
    ),
    "time-first-mha-first-token": (
        "rnn-batch-first-mismatch",
        """
attn = nn.MultiheadAttention(embed_dim=16, num_heads=4)
tokens = torch.randn(3, 7, 16)                  # (batch, tokens, dim) from the tokenizer
ctx, _ = attn(tokens, tokens, tokens)
cls = ctx[:, 0]                                 # "the [CLS] token"
print(cls.shape)
""",
    ),
    "time-first-gru-select": (
        "rnn-batch-first-mismatch",
        """
# salesforce/cove#10: an encoder LSTM left time-first, read batch-first
gru = nn.GRU(input_size=5, hidden_size=12, num_layers=1)
seq = torch.randn(4, 9, 5)
outputs, h = gru(seq)
summary = outputs.select(1, -1)
print(summary.shape)
""",
    ),
    "time-first-encoder-layer-cls": (
        "rnn-batch-first-mismatch",
        """
layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0)
x = torch.randn(2, 5, 16)
pooled = layer(x)[:, 0]
print(pooled.shape)
""",
    ),
    "time-first-used-time-first-ok": (
        None,
        """
lstm = nn.LSTM(5, 12)
batch = torch.randn(4, 9, 5)                    # (batch, time, features)
out, (h, c) = lstm(batch.transpose(0, 1))       # (time, batch, features) as the layer wants
last = out[-1]
assert torch.allclose(last, h[-1])
""",
    ),
    "time-first-batch-first-true-ok": (
        None,
        """
gru = nn.GRU(5, 12, batch_first=True)
out, h = gru(torch.randn(4, 9, 5))
last = out[:, -1, :]
mha = nn.MultiheadAttention(16, 2, batch_first=True)
q = torch.randn(3, 7, 16)
ctx, _ = mha(q, q, q)
print(last.shape, ctx[:, 0].shape)
""",
    ),
    # -- training-data-not-shuffled ----------------------------------------------------------------
    "unshuffled-folder-per-class": (
        "training-data-not-shuffled",
        """
from torch.utils.data import DataLoader, Dataset
class FolderDataset(Dataset):                   # samples listed class folder by class folder
    def __init__(self):
        self.samples = [(torch.randn(3) + c, c) for c in range(4) for _ in range(40)]
    def __len__(self):
        return len(self.samples)
    def __getitem__(self, i):
        x, c = self.samples[i]
        return x, c
loader = DataLoader(FolderDataset(), batch_size=10)
model = nn.Linear(3, 4)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for x, y in loader:
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
""",
    ),
    "unshuffled-dict-batches": (
        "training-data-not-shuffled",
        """
from torch.utils.data import DataLoader
records = [{"features": torch.randn(6), "label": label} for label in (0, 1) for _ in range(64)]
train_loader = DataLoader(records, batch_size=16, shuffle=False)
clf = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(clf.parameters(), lr=0.1)
for epoch in range(2):
    for batch in train_loader:
        loss = F.cross_entropy(clf(batch["features"]), batch["label"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
    ),
    "unshuffled-concat-per-class": (
        "training-data-not-shuffled",
        """
from torch.utils.data import ConcatDataset, DataLoader, TensorDataset
parts = [TensorDataset(torch.randn(50, 4), torch.full((50,), c)) for c in range(3)]
loader = DataLoader(ConcatDataset(parts), batch_size=8, drop_last=True)
net = nn.Linear(4, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
step = 0
for xb, yb in loader:
    opt.zero_grad()
    F.cross_entropy(net(xb), yb).backward()
    opt.step()
    step += 1
""",
    ),
    "unshuffled-eval-loader-ok": (
        None,
        """
from torch.utils.data import DataLoader, TensorDataset
x = torch.randn(120, 4)
y = torch.arange(3).repeat_interleave(40)       # sorted by label
train = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
val = DataLoader(TensorDataset(x, y), batch_size=8)   # evaluation in order is fine
net = nn.Linear(4, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for xb, yb in train:
    opt.zero_grad()
    F.cross_entropy(net(xb), yb).backward()
    opt.step()
with torch.no_grad():
    correct = sum((net(xb).argmax(1) == yb).sum().item() for xb, yb in val)
""",
    ),
    "unshuffled-mixed-order-ok": (
        None,
        """
from torch.utils.data import DataLoader, TensorDataset
x = torch.randn(96, 4)
y = torch.arange(96) % 3                         # stored interleaved: every batch holds all classes
loader = DataLoader(TensorDataset(x, y), batch_size=12)
net = nn.Linear(4, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for xb, yb in loader:
    opt.zero_grad()
    F.cross_entropy(net(xb), yb).backward()
    opt.step()
""",
    ),
    # -- exploding-gradients-without-clipping ----------------------------------------------------
    "exploding-lr-too-high-regression": (
        "exploding-gradients-without-clipping",
        """
# raw features in the hundreds, lr meant for standardised ones
x = torch.rand(64, 3) * 100
y = x @ torch.tensor([[0.5], [-1.0], [2.0]])
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(60):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
""",
    ),
    "exploding-deep-mlp-large-init": (
        "exploding-gradients-without-clipping",
        """
layers = []
for _ in range(8):
    lin = nn.Linear(16, 16)
    nn.init.normal_(lin.weight, std=0.6)        # too wide for 8 layers without normalisation
    layers += [lin, nn.LeakyReLU()]
net = nn.Sequential(*layers, nn.Linear(16, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
data, target = torch.randn(32, 16), torch.randn(32, 1)
for _ in range(40):
    opt.zero_grad()
    F.mse_loss(net(data), target).backward()
    opt.step()
""",
    ),
    "exploding-rnn-cell-loop": (
        "exploding-gradients-without-clipping",
        """
cell = nn.RNNCell(1, 24)
head = nn.Linear(24, 1)
with torch.no_grad():
    nn.init.orthogonal_(cell.weight_hh, gain=1.5)
params = [*cell.parameters(), *head.parameters()]
opt = torch.optim.SGD(params, lr=0.3)
seq = torch.randn(40, 8, 1)
for step in range(30):
    h = torch.zeros(8, 24)
    for t in range(seq.shape[0]):
        h = cell(seq[t], h)
    loss = F.mse_loss(head(h), seq[-1])
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    ),
    "exploding-nan-from-the-start-ok": (
        None,
        """
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 4)
x[2, 1] = float("nan")                          # a corrupt sample: NaN from the first step, no explosion
for _ in range(5):
    opt.zero_grad()
    F.mse_loss(model(x), torch.zeros(8, 1)).backward()
    opt.step()
""",
    ),
    "exploding-clipped-ok": (
        None,
        """
x = torch.rand(64, 3) * 100
y = x @ torch.tensor([[0.5], [-1.0], [2.0]])
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(60):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
""",
    ),
    # -- forgot-train-after-eval ---------------------------------------------------------------
    "eval-in-trainer-evaluate-never-undone": (
        "forgot-train-after-eval",
        """
class Trainer:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.model.train()
    def evaluate(self):
        self.model.eval()
        with torch.no_grad():
            return self.model(torch.randn(8, 4)).mean().item()
    def fit(self, epochs):
        for _ in range(epochs):
            for _ in range(3):
                self.opt.zero_grad()
                F.mse_loss(self.model(torch.randn(8, 4)), torch.randn(8, 1)).backward()
                self.opt.step()
            self.evaluate()
Trainer().fit(2)
""",
    ),
    "eval-train-false-in-metrics-helper": (
        "forgot-train-after-eval",
        """
def compute_metrics(net, batch):
    net.train(False)                            # eval mode for the metrics
    with torch.no_grad():
        return (net(batch).argmax(1) == 0).float().mean().item()
net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 2))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for epoch in range(2):
    for _ in range(2):
        optimizer.zero_grad()
        F.cross_entropy(net(torch.randn(4, 1, 8, 8)), torch.randint(0, 2, (4,))).backward()
        optimizer.step()
    acc = compute_metrics(net, torch.randn(4, 1, 8, 8))
""",
    ),
    "eval-every-few-steps-dropout-only": (
        "forgot-train-after-eval",
        """
model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 3))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
model.train()
for step in range(6):
    loss = F.cross_entropy(model(torch.randn(10, 6)), torch.randint(0, 3, (10,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == 2:                               # a quick validation halfway
        model.eval()
        with torch.no_grad():
            val = model(torch.randn(10, 6)).softmax(-1).max(-1).values.mean()
""",
    ),
    "eval-and-train-toggled-ok": (
        None,
        """
model = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(3):
    model.train()
    for _ in range(2):
        opt.zero_grad()
        F.mse_loss(model(torch.randn(8, 4)), torch.randn(8, 1)).backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        model(torch.randn(8, 4))
""",
    ),
    "eval-finetune-with-given-bn-statistics-ok": (
        None,
        """
# fine-tuning in eval mode on purpose: batch norm keeps the statistics it was given
backbone = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU())
backbone.train()
with torch.no_grad():
    for _ in range(5):
        backbone(torch.randn(16, 4))            # statistics computed (a pretrained model's)
model = nn.Sequential(backbone, nn.Linear(8, 1))
model.eval()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(3):
    opt.zero_grad()
    F.mse_loss(model(torch.randn(8, 4)), torch.randn(8, 1)).backward()
    opt.step()
""",
    ),
    "eval-teacher-beside-training-student-ok": (
        None,
        """
teacher = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 3))
student = nn.Sequential(nn.Linear(4, 3))
teacher.eval()
teacher.requires_grad_(False)
opt = torch.optim.Adam(student.parameters(), lr=1e-3)
for _ in range(3):
    x = torch.randn(8, 4)
    soft = teacher(x).softmax(-1)
    loss = F.kl_div(student(x).log_softmax(-1), soft, reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    ),
}
