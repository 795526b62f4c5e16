"""Product-review sentiment (negative / neutral / positive) with an LSTM encoder that was
pre-trained as a language model on unlabeled reviews (see lm_pretrain.py)."""

import json

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset

PAD = 0
EMB, HID, CLASSES = 300, 512, 3
LM_CHECKPOINT = "checkpoints/review_lm_epoch12.pt"


class ReviewEncoder(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, EMB, padding_idx=PAD)
        self.lstm = nn.LSTM(EMB, HID, num_layers=2, batch_first=True, dropout=0.2)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embedding(tokens), lengths.cpu(), batch_first=True,
                                      enforce_sorted=False)
        _, (h_n, _) = self.lstm(packed)
        return h_n[-1]


class ReviewLM(nn.Module):
    """The model lm_pretrain.py trains and saves as {"model": lm.state_dict(), "epoch": ...}."""

    def __init__(self, vocab_size):
        super().__init__()
        self.encoder = ReviewEncoder(vocab_size)
        self.decoder = nn.Linear(HID, vocab_size)


class SentimentClassifier(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.encoder = ReviewEncoder(vocab_size)
        self.dropout = nn.Dropout(0.3)
        self.head = nn.Linear(HID, CLASSES)

    def forward(self, tokens, lengths):
        return self.head(self.dropout(self.encoder(tokens, lengths)))


class Reviews(Dataset):
    def __init__(self, path):
        with open(path) as f:
            self.rows = [json.loads(line) for line in f]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        return torch.tensor(row["ids"], dtype=torch.long), row["label"]


def collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(seqs, batch_first=True, padding_value=PAD), lengths, torch.tensor(labels)


def load_pretrained_encoder(model, path):
    # The checkpoint also holds the LM's decoder over the vocabulary, which we do not need.
    lm_state = torch.load(path, map_location="cpu", weights_only=True)["model"]
    model.encoder.load_state_dict(lm_state, strict=False)
    print(f"initialised encoder from {path}")


def run_epoch(model, loader, device, optimizer=None):
    training = optimizer is not None
    model.train(training)
    total, correct, loss_sum = 0, 0, 0.0
    with torch.set_grad_enabled(training):
        for tokens, lengths, labels in loader:
            tokens, labels = tokens.to(device), labels.to(device)
            logits = model(tokens, lengths)
            loss = F.cross_entropy(logits, labels)
            if training:
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
            loss_sum += loss.item() * labels.size(0)
            correct += (logits.argmax(-1) == labels).sum().item()
            total += labels.size(0)
    return loss_sum / total, correct / total


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with open("data/vocab.json") as f:
        vocab = json.load(f)
    model = SentimentClassifier(len(vocab))
    load_pretrained_encoder(model, LM_CHECKPOINT)
    model.to(device)

    train_dl = DataLoader(Reviews("data/train.jsonl"), batch_size=64, shuffle=True, collate_fn=collate)
    dev_dl = DataLoader(Reviews("data/dev.jsonl"), batch_size=128, collate_fn=collate)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(8):
        tr_loss, tr_acc = run_epoch(model, train_dl, device, optimizer)
        dv_loss, dv_acc = run_epoch(model, dev_dl, device)
        print(f"{epoch}: train {tr_loss:.3f}/{tr_acc:.3f}  dev {dv_loss:.3f}/{dv_acc:.3f}")
    torch.save(model.state_dict(), "checkpoints/sentiment.pt")


if __name__ == "__main__":
    main()
