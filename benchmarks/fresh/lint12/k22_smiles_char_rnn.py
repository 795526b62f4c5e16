"""Character-level GRU language model over ChEMBL SMILES strings, then sampling of new strings.

Input: one SMILES per line in data/chembl/smiles_train.txt (canonical, length <= 100).
"""
import math
import random
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

warnings.filterwarnings("ignore", category=UserWarning)

DATA = "data/chembl/smiles_train.txt"
MAX_LEN = 100
EMBED, HIDDEN, LAYERS = 64, 512, 3
BATCH, EPOCHS, LR, CLIP = 128, 10, 1e-3, 5.0
SEED = 123
BOS, EOS, PAD = "^", "$", " "


class SmilesSet(Dataset):
    def __init__(self, lines, stoi):
        self.seqs = [torch.tensor([stoi[c] for c in BOS + s + EOS]) for s in lines]

    def __len__(self):
        return len(self.seqs)

    def __getitem__(self, i):
        return self.seqs[i]


def make_collate(pad_id):
    def collate(seqs):
        batch = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=pad_id)
        return batch[:, :-1], batch[:, 1:]
    return collate


class CharGRU(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab, EMBED)
        self.gru = nn.GRU(EMBED, HIDDEN, LAYERS, batch_first=True, dropout=0.2)
        self.out = nn.Linear(HIDDEN, vocab)

    def forward(self, x, h=None):
        y, h = self.gru(self.embed(x), h)
        return self.out(y), h


@torch.no_grad()
def sample(model, stoi, itos, n, device, temperature=1.0):
    model.eval()
    x = torch.full((n, 1), stoi[BOS], device=device)
    h, done = None, torch.zeros(n, dtype=torch.bool, device=device)
    chars = []
    for _ in range(MAX_LEN + 1):
        logits, h = model(x, h)
        probs = torch.softmax(logits[:, -1] / temperature, dim=-1)
        x = torch.multinomial(probs, 1)
        chars.append(x.squeeze(1))
        done |= x.squeeze(1) == stoi[EOS]
        if done.all():
            break
    out = []
    for row in torch.stack(chars, 1).tolist():
        s = "".join(itos[i] for i in row)
        out.append(s.split(EOS)[0])
    return out


def main():
    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    lines = [l.strip() for l in open(DATA) if 0 < len(l.strip()) <= MAX_LEN]
    random.shuffle(lines)
    n_valid = len(lines) // 50
    itos = [PAD, BOS, EOS] + sorted({c for s in lines for c in s})
    stoi = {c: i for i, c in enumerate(itos)}
    pad_id = stoi[PAD]
    collate = make_collate(pad_id)
    train_dl = DataLoader(SmilesSet(lines[n_valid:], stoi), batch_size=BATCH, shuffle=True, collate_fn=collate)
    valid_dl = DataLoader(SmilesSet(lines[:n_valid], stoi), batch_size=512, collate_fn=collate)

    model = CharGRU(len(itos)).to(device)
    criterion = nn.CrossEntropyLoss(ignore_index=pad_id)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)

    for epoch in range(EPOCHS):
        model.train()
        t0, tokens, nll = time.time(), 0, 0.0
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            logits, _ = model(x)
            loss = criterion(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm(model.parameters(), CLIP)
            optimizer.step()
            n_tok = int((y != pad_id).sum())
            nll, tokens = nll + loss.item() * n_tok, tokens + n_tok
        scheduler.step()

        model.eval()
        v_nll, v_tok = 0.0, 0
        with torch.no_grad():
            for x, y in valid_dl:
                logits, _ = model(x.to(device))
                v_nll += nn.functional.cross_entropy(logits.transpose(1, 2), y.to(device),
                                                     ignore_index=pad_id, reduction="sum").item()
                v_tok += int((y != pad_id).sum())
        print(f"epoch {epoch}: train ppl {math.exp(nll / tokens):.3f} valid ppl {math.exp(v_nll / v_tok):.3f} "
              f"({time.time() - t0:.0f}s)")

    smiles = sample(model, stoi, itos, 1000, device)
    unique = len(set(smiles))
    print(f"sampled 1000 strings, {unique} unique, {len(set(smiles) - set(lines))} not in the training set")
    torch.save({"model": model.state_dict(), "itos": itos}, "smiles_gru.pt")


if __name__ == "__main__":
    main()
