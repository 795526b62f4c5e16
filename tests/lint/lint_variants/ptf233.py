"""PTF233 (rnn-batch-first-mismatch): an LSTM/GRU/RNN left batch_first=False used batch-first."""

PITFALL = {
    "classifier_takes_out_last_step": """
import torch
from torch import nn
class SentimentLSTM(nn.Module):
    def __init__(self, vocab, emb=64, hidden=128):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=0)
        self.rnn = nn.LSTM(emb, hidden, num_layers=2, dropout=0.2)
        self.head = nn.Linear(hidden, 2)
    def forward(self, tokens):
        seq_out, (h, c) = self.rnn(self.emb(tokens))
        return self.head(seq_out[:, -1, :])
""",
    "gru_output_indexed_in_one_expression": """
import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.gru = nn.GRU(n_in, n_hidden)
        self.fc = nn.Linear(n_hidden, 1)
    def forward(self, x):
        return self.fc(self.gru(x)[0][:, -1])
""",
    "mnist_rows_as_time_steps": """
import torch
from torch import nn
class RowLSTM(nn.Module):
    def __init__(self, in_dim=28, hidden_dim=128, n_layer=2, n_class=10):
        super().__init__()
        self.lstm = nn.LSTM(in_dim, hidden_dim, n_layer)
        self.classifier = nn.Linear(hidden_dim, n_class)
    def forward(self, x):
        out, _ = self.lstm(x)
        out = out[:, -1, :]
        return self.classifier(out)
""",
    "tagger_fed_by_batch_first_collate": """
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader
def collate(items):
    words, tags = zip(*items)
    return pad_sequence(words, batch_first=True), pad_sequence(tags, batch_first=True, padding_value=-100)
class Tagger(nn.Module):
    def __init__(self, vocab, n_tags):
        super().__init__()
        self.embed = nn.Embedding(vocab, 100)
        self.lstm = nn.LSTM(100, 200, bidirectional=True)
        self.proj = nn.Linear(400, n_tags)
    def forward(self, words):
        h, _ = self.lstm(self.embed(words))
        return self.proj(h)
def run(dataset, vocab, n_tags):
    model = Tagger(vocab, n_tags)
    loader = DataLoader(dataset, batch_size=16, collate_fn=collate)
    for words, tags in loader:
        scores = model(words)
        print(scores.shape, tags.shape)
""",
    "script_over_default_collate_batches": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
rnn = nn.RNN(8, 16, num_layers=1)
head = nn.Linear(16, 1)
windows = torch.randn(512, 30, 8)
loader = DataLoader(TensorDataset(windows, torch.randn(512, 1)), batch_size=64, shuffle=True)
for x, y in loader:
    states, last = rnn(x)
    print(head(states).shape, y.shape)
""",
    "flag_passed_false_by_the_builder": """
import torch
from torch import nn
def build(batch_first):
    return nn.GRU(32, 64, batch_first=batch_first)
def summarize(gru, batch):
    out, _ = gru(batch)
    return out[:, -1]
def main():
    gru = build(batch_first=False)
    return summarize(gru, torch.randn(4, 10, 32))
""",
    "padded_input_from_pad_sequence": """
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
lstm = nn.LSTM(12, 24)
def encode(seqs):
    padded = pad_sequence(seqs, batch_first=True)
    out, (h, c) = lstm(padded)
    return out
""",
}

NEAR_MISS = {
    "batch_first_true": """
import torch
from torch import nn
class SentimentLSTM(nn.Module):
    def __init__(self, vocab, emb=64, hidden=128):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, 2)
    def forward(self, tokens):
        out, _ = self.rnn(self.emb(tokens))
        return self.head(out[:, -1, :])
""",
    "transposed_to_time_first": """
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(1000, 32)
        self.lstm = nn.LSTM(32, 64)
    def forward(self, tokens):
        x = self.embed(tokens).transpose(0, 1)
        out, _ = self.lstm(x)
        return out[-1]
""",
    "time_first_collate": """
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader
def collate(items):
    seqs, labels = zip(*items)
    return pad_sequence(seqs), torch.tensor(labels)
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(500, 16)
        self.gru = nn.GRU(16, 32)
    def forward(self, seqs):
        out, h = self.gru(self.embed(seqs))
        return out[-1]
def run(dataset):
    model = Model()
    for seqs, labels in DataLoader(dataset, batch_size=8, collate_fn=collate):
        print(model(seqs).shape, labels.shape)
""",
    "one_sentence_viewed_time_first": """
import torch
from torch import nn
class LSTMTagger(nn.Module):
    def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)
    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        return self.hidden2tag(lstm_out.view(len(sentence), -1))
""",
    "flag_passed_true_by_the_builder": """
import torch
from torch import nn
def build(batch_first):
    return nn.GRU(32, 64, batch_first=batch_first)
def summarize(gru, batch):
    out, _ = gru(batch)
    return out[:, -1]
def main():
    gru = build(batch_first=True)
    return summarize(gru, torch.randn(4, 10, 32))
""",
    "packed_from_a_batch_first_collate": """
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 8)
        self.lstm = nn.LSTM(8, 16)
    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        return out
""",
}

SEEN = {
    "mnist_rows_as_time_steps": "https://github.com/pytorch/pytorch/issues/1538 (an MNIST row-LSTM built without batch_first, batch-first images, out[:, -1, :]: different results with and without batch_first)",
    "classifier_takes_out_last_step": "https://github.com/yunjey/pytorch-tutorial/issues/151 (out[:, -1, :] of an LSTM output, right only with batch_first=True; out[-1] otherwise)",
    "tagger_fed_by_batch_first_collate": "https://github.com/salesforce/cove/issues/10 (an encoder LSTM defined without batch_first=True, fed and read batch-first)",
    "one_sentence_viewed_time_first": "the PyTorch 'Sequence Models and LSTM Networks' tutorial (LSTMTagger: embeds.view(len(sentence), 1, -1), a batch of one laid out time first)",
}

# The input passes an nn.Sequential of layers that keep the axes (a projection) before the recurrence:
# the loader's (batch, seq, ...) layout reaches the layer unchanged (fresh set 19's e10, missed at its
# held-out scoring, tuning material since). A Sequential with a layer that moves the axes tells nothing.
_PROJECTED = """
import torch
from torch import nn
from torch.utils.data import DataLoader
class Tagger(nn.Module):
    def __init__(self, n_in, hidden):
        super().__init__()
        self.proj = nn.Sequential({layers})
        self.rnn = nn.GRU(hidden, hidden, bidirectional=True)
        self.out = nn.Linear(2 * hidden, 3)
    def forward(self, feats):
        h, _ = self.rnn(self.proj(feats))
        return self.out(h)
def train(dataset, opt):
    model = Tagger(40, 64)
    for feats, tags in DataLoader(dataset, batch_size=32, shuffle=True):
        loss = nn.functional.cross_entropy(model(feats).reshape(-1, 3), tags.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
PITFALL["projected_by_a_sequential_first"] = _PROJECTED.format(layers="nn.Linear(n_in, hidden), nn.ReLU()")
NEAR_MISS["projected_by_a_sequential_that_transposes"] = _PROJECTED.format(
    layers="nn.Linear(n_in, hidden), nn.ReLU(), Transpose()"
)
NEAR_MISS["projected_by_a_convolution"] = _PROJECTED.format(layers="nn.Conv1d(n_in, hidden, 3), nn.ReLU()")
SEEN["projected_by_a_sequential_first"] = (
    "benchmarks/fresh/lint19 e10_protein_secondary_structure.py (held-out half, missed at its first score)"
)
