"""BiLSTM named-entity tagger on CoNLL-2003 style files (one token per line, blank line between sentences)."""

import argparse
import logging
from collections import Counter

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger(__name__)
PAD, UNK = "<pad>", "<unk>"
IGNORE = -100


def read_conll(path):
    sentences, tokens, tags = [], [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("-DOCSTART-"):
                if tokens:
                    sentences.append((tokens, tags))
                    tokens, tags = [], []
                continue
            parts = line.split()
            tokens.append(parts[0])
            tags.append(parts[-1])
    if tokens:
        sentences.append((tokens, tags))
    return sentences


class TaggingDataset(Dataset):
    def __init__(self, sentences, word2id, tag2id):
        self.items = []
        for tokens, tags in sentences:
            ids = [word2id.get(t.lower(), word2id[UNK]) for t in tokens]
            self.items.append((torch.tensor(ids), torch.tensor([tag2id[t] for t in tags])))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch):
    words, tags = zip(*batch)
    words = pad_sequence(words, batch_first=True, padding_value=0)
    tags = pad_sequence(tags, batch_first=True, padding_value=IGNORE)
    return words, tags


class BiLSTMTagger(nn.Module):
    def __init__(self, vocab_size, n_tags, emb_dim=100, hidden=200, dropout=0.33):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb_dim, padding_idx=0)
        self.lstm = nn.LSTM(emb_dim, hidden, num_layers=2, bidirectional=True, dropout=dropout)
        self.drop = nn.Dropout(dropout)
        self.proj = nn.Linear(2 * hidden, n_tags)

    def forward(self, words):
        x = self.drop(self.embed(words))
        out, _ = self.lstm(x)
        return self.proj(self.drop(out))


def token_accuracy(logits, tags):
    mask = tags != IGNORE
    return ((logits.argmax(-1) == tags) & mask).sum().item() / mask.sum().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/conll/train.txt")
    ap.add_argument("--dev", default="data/conll/dev.txt")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    train_sents, dev_sents = read_conll(args.train), read_conll(args.dev)
    counts = Counter(t.lower() for toks, _ in train_sents for t in toks)
    itos = [PAD, UNK] + [w for w, c in counts.most_common() if c >= 2]
    word2id = {w: i for i, w in enumerate(itos)}
    tag2id = {t: i for i, t in enumerate(sorted({t for _, tags in train_sents for t in tags}))}

    train_dl = DataLoader(TaggingDataset(train_sents, word2id, tag2id), args.batch_size, shuffle=True,
                          collate_fn=collate)
    dev_dl = DataLoader(TaggingDataset(dev_sents, word2id, tag2id), 128, collate_fn=collate)

    model = BiLSTMTagger(len(itos), len(tag2id)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss(ignore_index=IGNORE)

    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for words, tags in train_dl:
            words, tags = words.to(device), tags.to(device)
            logits = model(words)
            loss = loss_fn(logits.reshape(-1, logits.size(-1)), tags.reshape(-1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            total += loss.item()
        model.eval()
        accs = []
        with torch.no_grad():
            for words, tags in dev_dl:
                words, tags = words.to(device), tags.to(device)
                accs.append(token_accuracy(model(words), tags))
        logger.info("epoch %d loss %.4f dev acc %.4f", epoch, total / len(train_dl), sum(accs) / len(accs))

    torch.save({"model": model.state_dict(), "itos": itos, "tags": list(tag2id)}, "ner_bilstm.pt")


if __name__ == "__main__":
    main()
