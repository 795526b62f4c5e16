"""PTF260 (exploding-gradients-without-clipping): a recurrent network trained with plain SGD, unclipped."""

PITFALL = {
    "char_rnn_class": """
import torch
from torch import nn
class CharRNN(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.rnn = nn.RNN(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)
    def forward(self, x):
        h, _ = self.rnn(self.embed(x))
        return self.out(h)
model = CharRNN(128, 256)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
criterion = nn.CrossEntropyLoss()
def train(batches):
    for x, y in batches:
        optimizer.zero_grad()
        loss = criterion(model(x).flatten(0, 1), y.flatten())
        loss.backward()
        optimizer.step()
""",
    "word_lm_lstm_epoch_loop": """
import torch
import torch.nn as nn
import torch.optim as optim
class WordLM(nn.Module):
    def __init__(self, ntoken, ninp=200, nhid=200):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.lstm = nn.LSTM(ninp, nhid, 2)
        self.decoder = nn.Linear(nhid, ntoken)
    def forward(self, x, hidden):
        out, hidden = self.lstm(self.encoder(x), hidden)
        return self.decoder(out), hidden
def main(train_data, ntokens, epochs=40):
    model = WordLM(ntokens)
    opt = optim.SGD(model.parameters(), lr=20.0)
    crit = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        hidden = None
        for x, y in train_data:
            out, hidden = model(x, hidden)
            hidden = tuple(h.detach() for h in hidden)
            loss = crit(out.view(-1, ntokens), y.view(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
""",
    "bare_gru_layer_and_head": """
import torch
from torch import nn
gru = nn.GRU(8, 32)
head = nn.Linear(32, 1)
opt = torch.optim.SGD([*gru.parameters(), *head.parameters()], lr=1.0)
def fit(seqs, targets, steps=500):
    for _ in range(steps):
        out, _ = gru(seqs)
        loss = ((head(out[-1]) - targets) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
    "cell_unrolled_by_hand": """
import torch
from torch import nn
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(16, 64)
        self.fc = nn.Linear(64, 5)
    def forward(self, xs):
        h = c = torch.zeros(xs.size(1), 64)
        outs = []
        for x in xs:
            h, c = self.cell(x, (h, c))
            outs.append(self.fc(h))
        return torch.stack(outs)
def train(loader):
    net = Tagger()
    sgd = torch.optim.SGD(net.parameters(), lr=1.0)
    for xs, ys in loader:
        loss = nn.functional.cross_entropy(net(xs).flatten(0, 1), ys.flatten())
        sgd.zero_grad()
        loss.backward()
        sgd.step()
""",
    "nested_model_class": """
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(4, 64, nonlinearity="relu")
    def forward(self, x):
        return self.rnn(x)[0][-1]
class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = Encoder()
        self.head = nn.Linear(64, 1)
    def forward(self, x):
        return self.head(self.enc(x))
model = Forecaster()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
while True:
    x, y = torch.randn(100, 16, 4), torch.randn(16, 1)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
}

NEAR_MISS = {
    "clipped": """
import torch
from torch import nn
gru = nn.GRU(8, 32)
head = nn.Linear(32, 1)
params = [*gru.parameters(), *head.parameters()]
opt = torch.optim.SGD(params, lr=0.1)
def fit(seqs, targets, steps=500):
    for _ in range(steps):
        out, _ = gru(seqs)
        loss = ((head(out[-1]) - targets) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 0.25)
        opt.step()
""",
    "adam_bounds_its_steps": """
import torch
from torch import nn
class Sentiment(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20000, 100)
        self.lstm = nn.LSTM(100, 128, batch_first=True)
        self.fc = nn.Linear(128, 2)
    def forward(self, x):
        return self.fc(self.lstm(self.emb(x))[1][0][-1])
model = Sentiment()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
def train(loader):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
""",
    "not_recurrent": """
import torch
from torch import nn
model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
def train(loader):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
""",
    "value_clipping_by_hand": """
import torch
from torch import nn
rnn = nn.RNN(3, 16)
opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
def step(x, y):
    out, _ = rnn(x)
    loss = ((out[-1].sum(1) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    for p in rnn.parameters():
        p.grad.data.clamp_(-1, 1)
    opt.step()
for _ in range(100):
    step(torch.randn(20, 4, 3), torch.randn(4))
""",
    "gated_at_a_small_rate": """
import torch
from torch import nn
lstm = nn.LSTM(8, 8)
opt = torch.optim.SGD(lstm.parameters(), lr=0.05)
for data, target in batches:
    output, _ = lstm(data)
    loss = (output - target).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "short_truncated_windows": """
import torch
from torch import nn
WINDOW = 5
rnn = nn.RNN(2, 16, batch_first=True)
head = nn.Linear(16, 1)
opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
def train(stream):
    h = torch.zeros(1, stream.size(0), 16)
    for window in stream.split(WINDOW, dim=1):
        out, h = rnn(window, h.detach())
        loss = head(out).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
    "clipping_in_a_helper": """
import torch
from torch import nn
from utils import clip_gradient
lstm = nn.LSTM(10, 20)
opt = torch.optim.SGD(lstm.parameters(), lr=1.0)
def train(batches):
    for x, y in batches:
        out, _ = lstm(x)
        loss = (out - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        clip_gradient(opt, 0.5)
        opt.step()
""",
}

SEEN = {
    "char_rnn_class": "https://github.com/pytorch/pytorch/issues/2623 (the char-RNN classification tutorial's model on a large data set: nan loss from exploding gradients, fixed by clipping in train())",
    "word_lm_lstm_epoch_loop": "pytorch/examples word_language_model (SGD-style lr=20 on a 2-layer LSTM, kept finite only by --clip 0.25) and https://github.com/asappresearch/sru/issues/2 (the LSTM language model ends in nan/inf: gradient explosion)",
    "bare_gru_layer_and_head": "https://github.com/keras-team/keras/issues/18919 (with SGD the loss is NaN, with an adaptive optimizer it is not: SGD is not adaptive, clip the gradients); the corpus case's RNN + Linear head",
    "adam_bounds_its_steps": "benchmarks/fresh/lint s01_intent_gru.py and s13 (GRU/LSTM classifiers with Adam and no clipping: correct code, not planted)",
    "short_truncated_windows": "the corpus case tbptt-hidden-not-detached (an RNN trained over 4-step windows, hidden state detached: a fixed program with no clipping, correct)",
    "clipping_in_a_helper": "https://github.com/sunnyxiaohu/R-C3D.pytorch/issues/4 (clip_gradient(model, 100.) as the fix for a nan loss: a clipping helper of the project's own)",
}
