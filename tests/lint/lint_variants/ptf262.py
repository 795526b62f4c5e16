"""PTF262 (padded-sequences-without-packing): a padded batch through an RNN, its final state used."""

PITFALL = {
    "padding_idx_embedding_lstm_hidden": """
import torch
from torch import nn
class SentimentLSTM(nn.Module):
    def __init__(self, vocab_size, pad_idx):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, 100, padding_idx=pad_idx)
        self.rnn = nn.LSTM(100, 256, num_layers=2, bidirectional=True, dropout=0.5)
        self.fc = nn.Linear(512, 1)
        self.dropout = nn.Dropout(0.5)
    def forward(self, text):
        embedded = self.dropout(self.embedding(text))
        output, (hidden, cell) = self.rnn(embedded)
        hidden = self.dropout(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1))
        return self.fc(hidden)
""",
    "pad_sequence_then_gru_in_a_loop": """
import torch
from torch.nn.utils.rnn import pad_sequence
encoder = torch.nn.GRU(input_size=8, hidden_size=16, batch_first=True)
def encode_all(groups):
    codes = []
    for seqs in groups:
        batch = pad_sequence(seqs, batch_first=True)
        _, h = encoder(batch)
        codes.append(h[-1])
    return torch.cat(codes)
""",
    "last_step_output_batch_first": """
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(32, 64, batch_first=True)
        self.head = nn.Linear(64, 5)
    def forward(self, seqs):
        x = pad_sequence(seqs, batch_first=True)
        out, _ = self.lstm(x)
        return self.head(out[:, -1, :])
""",
    "time_major_last_output": """
import torch
import torch.nn as nn
import torch.nn.functional as F
class Encoder(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.emb = nn.Embedding(vocab, 64, padding_idx=0)
        self.rnn = nn.GRU(64, 128)
    def forward(self, src):
        x = F.dropout(self.emb(src), 0.2, self.training)
        outputs, _ = self.rnn(x)
        return outputs[-1]
""",
    "bidirectional_gru_hn_concat": """
import torch
from torch import nn
class ReviewEncoder(nn.Module):
    def __init__(self, n_tokens):
        super().__init__()
        self.embed = nn.Embedding(n_tokens, 128, padding_idx=0)
        self.rnn = nn.GRU(128, 192, batch_first=True, bidirectional=True)
    def forward(self, tokens):
        h = self.rnn(self.embed(tokens))[1]
        return torch.cat([h[-2], h[-1]], dim=1)
""",
    "plain_rnn_state_returned": """
import torch
from torch import nn
from torch.nn.utils import rnn as rnn_utils
def summarize(cell: nn.RNN, sequences):
    padded = rnn_utils.pad_sequence(sequences)
    out, h_n = cell(padded)
    return h_n.squeeze(0)
""",
}

NEAR_MISS = {
    "packed_before_the_rnn": """
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
class Encoder(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embedding = nn.Embedding(vocab, 64, padding_idx=0)
        self.gru = nn.GRU(64, 128, batch_first=True)
    def forward(self, tokens, lengths):
        emb = self.embedding(tokens)
        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h = self.gru(packed)
        return h[-1]
""",
    "last_real_step_gathered": """
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
lstm = nn.LSTM(16, 32, batch_first=True)
def encode(seqs):
    lengths = torch.tensor([len(s) for s in seqs])
    out, _ = lstm(pad_sequence(seqs, batch_first=True))
    return out[torch.arange(len(seqs)), lengths - 1]
""",
    "mask_pooled_outputs": """
import torch
from torch import nn
class Pooled(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.emb = nn.Embedding(vocab, 50, padding_idx=0)
        self.rnn = nn.LSTM(50, 100, batch_first=True)
    def forward(self, ids):
        mask = (ids != 0).unsqueeze(-1).float()
        out, _ = self.rnn(self.emb(ids))
        return (out * mask).sum(1) / mask.sum(1)
""",
    "per_token_tagging_outputs": """
import torch.nn as nn
class POSTagger(nn.Module):
    def __init__(self, vocab, tags, pad_idx):
        super().__init__()
        self.embedding = nn.Embedding(vocab, 100, padding_idx=pad_idx)
        self.lstm = nn.LSTM(100, 128, bidirectional=True)
        self.fc = nn.Linear(256, tags)
        self.dropout = nn.Dropout(0.25)
    def forward(self, text):
        embedded = self.dropout(self.embedding(text))
        outputs, (hidden, cell) = self.lstm(embedded)
        return self.fc(self.dropout(outputs))
""",
    "decoder_one_token_at_a_time": """
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden, padding_idx=0)
        self.gru = nn.GRU(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)
    def forward(self, input_step, last_hidden):
        embedded = self.embedding(input_step)
        output, hidden = self.gru(embedded, last_hidden)
        return self.out(output.squeeze(0)), hidden
""",
    "fixed_length_windows": """
import torch
from torch import nn
rnn = nn.GRU(4, 8, batch_first=True)
def encode(series, window=24):
    windows = series.unfold(0, window, 1)
    _, h = rnn(windows.unsqueeze(-1).expand(-1, -1, 4))
    return h[-1]
""",
    "left_padded_batch": """
import torch
from torch.nn.utils.rnn import pad_sequence
gru = torch.nn.GRU(3, 6, batch_first=True)
def last_states(seqs):
    batch = pad_sequence(seqs, batch_first=True, padding_side="left")
    _, h = gru(batch)
    return h[-1]
""",
}

SEEN = {
    "padding_idx_embedding_lstm_hidden": "bentrevett/pytorch-sentiment-analysis#86 (without packed padded sequences, "
    "hidden and cell come from the last element, most probably a pad token)",
    "per_token_tagging_outputs": "bentrevett/pytorch-pos-tagging#8 (padding_idx and no packing: only the per-token "
    "outputs are used, so the final state's padding does not matter)",
    "pad_sequence_then_gru_in_a_loop": "zhangj111/astnn#28 (GRU fed zero-padded sequences: the state of a short "
    "sequence moves through the padding through the biases)",
    "bidirectional_gru_hn_concat": "benchmarks/fresh/lint4/v02_review_sentiment_gru.py (padding_idx Embedding, "
    "bidirectional GRU, h_n[-2] and h_n[-1] concatenated; tuning material)",
    "time_major_last_output": "LiyuanLucasLiu/LM-LSTM-CRF#15 (a manually padded batch to the LSTM, compared with "
    "spro/practical-pytorch's batched seq2seq encoder, which packs)",
}

PITFALL["lengths_given_to_forward_and_ignored"] = """
import torch
from torch import nn
class SpeakerNet(nn.Module):
    def __init__(self, n_feats, n_speakers, hidden=128):
        super().__init__()
        self.rnn = nn.LSTM(n_feats, hidden, batch_first=True, bidirectional=True)
        self.classify = nn.Linear(2 * hidden, n_speakers)
    def forward(self, x, lengths):
        _, (h_n, _) = self.rnn(x)
        return self.classify(torch.cat([h_n[-2], h_n[-1]], dim=1))
"""
NEAR_MISS["lengths_given_to_forward_and_packed"] = """
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence
class SpeakerNet(nn.Module):
    def __init__(self, n_feats, n_speakers, hidden=128):
        super().__init__()
        self.rnn = nn.LSTM(n_feats, hidden, batch_first=True, bidirectional=True)
        self.classify = nn.Linear(2 * hidden, n_speakers)
    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, (h_n, _) = self.rnn(packed)
        return self.classify(torch.cat([h_n[-2], h_n[-1]], dim=1))
"""
SEEN["lengths_given_to_forward_and_ignored"] = (
    "benchmarks/fresh/lint5/w03_speaker_id_train.py (fresh set 5's tuning half: pad_sequence in the collate, "
    "lengths handed to forward and never read, h_n used)"
)
_BOUTS = """
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pad_sequence, pack_padded_sequence
from torch.utils.data import DataLoader
def collate(batch):
    signals, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in signals])
    return {padded}, lengths, torch.tensor(labels)
def make_loader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, collate_fn=collate)
class BoutGRU(nn.Module):
    def __init__(self, n_in, hidden, n_classes):
        super().__init__()
        self.proj = nn.Linear(n_in, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_classes)
    def forward(self, x):
        _, h_n = self.gru(torch.relu(self.proj(x)))
        return self.head(h_n[-1])
def train_epoch(model, loader, optimizer):
    for x, _, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
def main(dataset):
    model = BoutGRU(6, 64, 5)
    optimizer = torch.optim.Adam(model.parameters())
    train_epoch(model, make_loader(dataset, 32), optimizer)
"""
PITFALL["padded_by_the_collate_and_handed_to_forward"] = _BOUTS.format(padded="pad_sequence(signals, batch_first=True)")
NEAR_MISS["fixed_length_windows_stacked_by_the_collate"] = _BOUTS.format(padded="torch.stack(signals)")
SEEN["padded_by_the_collate_and_handed_to_forward"] = (
    "fresh set 9's q25 (held-out half, scored, then tuning material): activity bouts of 2-20 s padded by the "
    "loader's collate with pad_sequence, the model's forward running its GRU over them and reading h_n[-1]"
)
SEEN["fixed_length_windows_stacked_by_the_collate"] = "the same pipeline over fixed-length windows, stacked"

# Token ids looked up by an Embedding with a padding index: right-padded by default, so the last step is padding;
# torchtext's Field(pad_first=True) pads on the left, and the last step of every row is a real token.
_FIELD = """
import torch
from torch import nn
from torchtext.legacy import data
TEXT = data.Field({pad}lower=True, fix_length=100)
class GRUClassifier(nn.Module):
    def __init__(self, vocab, classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab, 50, padding_idx=1)
        self.gru = nn.GRU(50, 128, batch_first=True)
        self.out = nn.Linear(128, classes)
    def forward(self, ids):
        _, h = self.gru(self.embedding(ids))
        return self.out(h[-1])
"""
PITFALL["embedding_padded_on_the_right_by_default"] = _FIELD.format(pad="")
NEAR_MISS["embedding_padded_on_the_left_by_the_field"] = _FIELD.format(pad="pad_first=True, ")
SEEN["embedding_padded_on_the_right_by_default"] = (
    "round 18's tuning half, read (outlier-exposure's NLP classifiers: data.Field(pad_first=True) beside an "
    "Embedding(padding_idx=1) and a GRU whose h_n is used; 5 findings read wrong); torchtext's Field pads on the "
    "right unless pad_first=True"
)
SEEN["embedding_padded_on_the_left_by_the_field"] = SEEN["embedding_padded_on_the_right_by_default"]
