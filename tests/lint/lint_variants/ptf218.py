"""PTF218 (tbptt-hidden-not-detached): a recurrent state carried across backward() calls undetached."""

PITFALL = {
    "lstm_pair_in_a_training_loop": """
import torch
from torch import nn
lstm = nn.LSTM(16, 32, batch_first=True)
head = nn.Linear(32, 10)
opt = torch.optim.Adam([*lstm.parameters(), *head.parameters()])
hidden = (torch.zeros(1, 8, 32), torch.zeros(1, 8, 32))
for x, y in batches:
    out, hidden = lstm(x, hidden)
    loss = nn.functional.cross_entropy(head(out[:, -1]), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "model_of_the_file_in_a_function": """
import torch
from torch import nn
class CharRNN(nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.gru = nn.GRU(width, width)
        self.out = nn.Linear(width, vocab)
    def forward(self, tokens, state):
        h, state = self.gru(self.embed(tokens), state)
        return self.out(h), state
def train(stream, bptt=35):
    model = CharRNN(100, 128)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    state = None
    for i in range(0, stream.size(0) - 1, bptt):
        logits, state = model(stream[i:i + bptt], state)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), stream[i + 1:i + 1 + bptt].flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
    "cell_stepped_by_hand": """
import torch
from torch import nn
cell = nn.GRUCell(4, 8)
readout = nn.Linear(8, 1)
opt = torch.optim.Adam([*cell.parameters(), *readout.parameters()])
h = torch.zeros(1, 8)
for x_t, y_t in stream:
    h = cell(x_t, h)
    loss = (readout(h) - y_t).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "state_as_a_keyword_with_amp": """
import torch
from torch import nn
rnn = nn.LSTM(10, 20, num_layers=2)
scaler = torch.amp.GradScaler()
optimizer = torch.optim.AdamW(rnn.parameters())
def fit(chunks):
    hc = None
    for chunk, target in chunks:
        with torch.autocast("cuda"):
            out, hc = rnn(chunk, hx=hc)
            loss = (out - target).abs().mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
    "state_attribute_model": """
import torch
from torch import nn
class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 16, batch_first=True)
        self.fc = nn.Linear(16, 1)
    def forward(self, x, hidden):
        out, hidden = self.lstm(x, hidden)
        return self.fc(out), hidden
net = Forecaster()
opt = torch.optim.Adam(net.parameters(), 1e-3)
h = None
for window, target in loader:
    pred, h = net(window, h)
    loss = nn.functional.mse_loss(pred, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
}

NEAR_MISS = {
    "repackaged_each_step": """
import torch
from torch import nn
def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)
model = nn.LSTM(16, 16)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
hidden = (torch.zeros(1, 4, 16), torch.zeros(1, 4, 16))
for x, y in batches:
    hidden = repackage_hidden(hidden)
    out, hidden = model(x, hidden)
    loss = (out - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "detached_in_place": """
import torch
from torch import nn
model = nn.LSTM(8, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
hidden = (torch.zeros(1, 2, 8), torch.zeros(1, 2, 8))
for data, target in batches:
    hidden[0].detach_()
    hidden[1].detach_()
    output, hidden = model(data, hidden)
    loss = (output - target).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "detached_as_it_is_passed": """
import torch
from torch import nn
gru = nn.GRU(4, 4)
opt = torch.optim.Adam(gru.parameters())
h = torch.zeros(1, 1, 4)
for x in chunks:
    out, h = gru(x, h.detach())
    out.pow(2).mean().backward()
    opt.step()
    opt.zero_grad()
""",
    "backward_once_after_the_sequence": """
import torch
from torch import nn
cell = nn.LSTMCell(3, 6)
opt = torch.optim.Adam(cell.parameters())
h = c = torch.zeros(1, 6)
outputs = []
for x_t in sequence:
    h, c = cell(x_t, (h, c))
    outputs.append(h)
loss = torch.stack(outputs).pow(2).mean()
loss.backward()
opt.step()
""",
    "rollout_under_no_grad": """
import torch
from torch import nn
policy = nn.GRU(4, 4)
opt = torch.optim.Adam(policy.parameters())
h = torch.zeros(1, 1, 4)
for step in range(100):
    with torch.no_grad():
        action, h = policy(obs, h)
    loss = compute_loss(buffer)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "state_reset_every_batch": """
import torch
from torch import nn
lstm = nn.LSTM(5, 5, batch_first=True)
opt = torch.optim.Adam(lstm.parameters())
for x, y in loader:
    state = (torch.zeros(1, x.size(0), 5), torch.zeros(1, x.size(0), 5))
    for t in range(0, x.size(1), 10):
        out, state = lstm(x[:, t:t + 10], state)
    loss = (out[:, -1] - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "running_best_kept": """
import torch
best = float("inf")
for epoch in range(10):
    loss = train_one_epoch(model, optimizer)
    loss.backward()
    best = min(best, loss.item())
    batch = to_device(batch, "cuda")
""",
}

SEEN = {
    "model_of_the_file_in_a_function": "benchmarks/fresh/lint2/t01_char_lm.py (a read held-out script: a char LM whose state is fed window to window)",
    "state_attribute_model": "sgadgil6/cnslab_fmri#4 (an LSTM's state carried from batch to batch: 'backward through the graph a second time', OOM with retain_graph=True)",
    "repackaged_each_step": "pytorch/examples word_language_model/main.py (repackage_hidden at the start of every batch)",
    "detached_in_place": "pytorch/examples distributed/rpc/rnn/main.py (hidden[0].detach_() before each step)",
    "detached_as_it_is_passed": "dpressel/dliss-tutorial#1 (detach the hidden states at every training step, initialise from the old ones)",
}

# round 13: a state kept on the model itself between forward calls
PITFALL["state_kept_on_the_model"] = """
import torch
import torch.nn as nn
import torch.nn.functional as F
class StatefulLM(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab, 64)
        self.lstm = nn.LSTM(64, 128, batch_first=True)
        self.decoder = nn.Linear(128, vocab)
        self.state = None
    def reset_state(self):
        self.state = None
    def forward(self, tokens):
        out, self.state = self.lstm(self.embed(tokens), self.state)
        return self.decoder(out)
def train(windows, vocab, epochs):
    model = StatefulLM(vocab)
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        model.reset_state()
        for x, y in windows:
            logits = model(x)
            loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
"""
SEEN["state_kept_on_the_model"] = (
    "benchmarks/fresh/lint11 s05_char_lstm_language_model.py (held-out half, missed at its first score)"
)
NEAR_MISS["state_on_the_model_reset_each_step"] = """
import torch
import torch.nn as nn
class Tagger(nn.Module):
    def __init__(self, vocab, tags):
        super().__init__()
        self.embed = nn.Embedding(vocab, 6)
        self.lstm = nn.LSTM(6, 6)
        self.out = nn.Linear(6, tags)
        self.hidden = self.init_hidden()
    def init_hidden(self):
        return (torch.zeros(1, 1, 6), torch.zeros(1, 1, 6))
    def forward(self, sentence):
        lstm_out, self.hidden = self.lstm(self.embed(sentence).view(len(sentence), 1, -1), self.hidden)
        return torch.log_softmax(self.out(lstm_out.view(len(sentence), -1)), dim=1)
model = Tagger(10, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for sentence, tags in data:
    model.zero_grad()
    model.hidden = model.init_hidden()
    loss = nn.functional.nll_loss(model(sentence), tags)
    loss.backward()
    opt.step()
"""
SEEN["state_on_the_model_reset_each_step"] = (
    "PyTorch tutorial 'Sequence Models and LSTM Networks' (model.hidden = model.init_hidden() before each sentence)"
)
NEAR_MISS["state_on_the_model_detached_in_forward"] = """
import torch
import torch.nn as nn
class Stateful(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 8, batch_first=True)
        self.head = nn.Linear(8, 1)
        self.h = None
    def forward(self, x):
        if self.h is not None:
            self.h = self.h.detach()
        out, self.h = self.gru(x, self.h)
        return self.head(out)
model = Stateful()
opt = torch.optim.Adam(model.parameters())
for x, y in stream:
    loss = (model(x) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
NEAR_MISS["state_on_the_model_reset_by_method_each_step"] = """
import torch
import torch.nn as nn
class Stateful(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 8, batch_first=True)
        self.head = nn.Linear(8, 1)
        self.h = None
    def reset(self):
        self.h = None
    def forward(self, x):
        out, self.h = self.gru(x, self.h)
        return self.head(out)
model = Stateful()
opt = torch.optim.Adam(model.parameters())
for x, y in stream:
    model.reset()
    loss = (model(x) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
NEAR_MISS["state_on_the_model_repackaged_in_forward"] = """
import torch
import torch.nn as nn
class Stateful(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8, batch_first=True)
        self.head = nn.Linear(8, 1)
        self.state = None
    def forward(self, x):
        if self.state is not None:
            self.state = tuple(s.detach() for s in self.state)
        out, self.state = self.lstm(x, self.state)
        return self.head(out)
model = Stateful()
opt = torch.optim.Adam(model.parameters())
for x, y in stream:
    loss = (model(x) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
