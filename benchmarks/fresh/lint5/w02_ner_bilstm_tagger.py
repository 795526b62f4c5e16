"""CoNLL-2003 named-entity tagger: GloVe word embeddings + char CNN + BiLSTM, BIO tags."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from seqeval.metrics import f1_score
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from conll import TAGS, load_conll, make_batches, load_glove

IGNORE = -100


class CharCNN(nn.Module):
    def __init__(self, n_chars, dim=30, filters=50):
        super().__init__()
        self.emb = nn.Embedding(n_chars, dim, padding_idx=0)
        self.conv = nn.Conv1d(dim, filters, kernel_size=3, padding=1)

    def forward(self, chars):
        b, t, w = chars.shape
        x = self.emb(chars.view(b * t, w)).transpose(1, 2)
        x = F.relu(self.conv(x)).max(dim=2).values
        return x.view(b, t, -1)


class BiLSTMTagger(nn.Module):
    def __init__(self, glove, n_chars, n_tags, hidden=200):
        super().__init__()
        self.words = nn.Embedding.from_pretrained(glove, freeze=False, padding_idx=0)
        self.chars = CharCNN(n_chars)
        self.lstm = nn.LSTM(glove.shape[1] + 50, hidden, batch_first=True, bidirectional=True)
        self.drop = nn.Dropout(0.5)
        self.tag_proj = nn.Linear(2 * hidden, n_tags)

    def forward(self, words, chars, lengths):
        x = self.drop(torch.cat([self.words(words), self.chars(chars)], dim=-1))
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=words.shape[1])
        return self.tag_proj(self.drop(out)).softmax(dim=-1)


def decode(scores, lengths):
    best = scores.argmax(dim=-1)
    return [[TAGS[i] for i in row[:n]] for row, n in zip(best.tolist(), lengths.tolist())]


def evaluate(model, batches, device):
    model.eval()
    gold, pred = [], []
    with torch.no_grad():
        for words, chars, lengths, tags in batches:
            scores = model(words.to(device), chars.to(device), lengths)
            pred += decode(scores, lengths)
            gold += [[TAGS[i] for i in row[:n]] for row, n in zip(tags.tolist(), lengths.tolist())]
    return f1_score(gold, pred)


def main(device="cuda", epochs=40):
    vocab, char_vocab, train, dev = load_conll("data/conll2003", splits=("train", "dev"))
    glove = load_glove("data/glove.6B.100d.txt", vocab)
    model = BiLSTMTagger(glove, len(char_vocab), len(TAGS)).to(device)
    criterion = nn.CrossEntropyLoss(ignore_index=IGNORE)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.015, momentum=0.9)
    best_f1 = 0.0
    for epoch in range(epochs):
        model.train()
        for words, chars, lengths, tags in make_batches(train, batch_size=10, shuffle=True):
            words, chars, tags = words.to(device), chars.to(device), tags.to(device)
            scores = model(words, chars, lengths)
            loss = criterion(scores.flatten(0, 1), tags.flatten())
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
        for group in optimizer.param_groups:
            group["lr"] = 0.015 / (1 + 0.05 * (epoch + 1))
        dev_f1 = evaluate(model, make_batches(dev, batch_size=64, shuffle=False), device)
        print(f"epoch {epoch:2d}  dev F1 {dev_f1:.4f}")
        if dev_f1 > best_f1:
            best_f1 = dev_f1
            torch.save(model.state_dict(), "ner_bilstm_best.pt")


if __name__ == "__main__":
    main()
