"""Product-review polarity with a small Transformer encoder.

The encoder is trained jointly with the classifier for the first epochs; for the last
`head_only_epochs` it is held fixed and only the classifier keeps learning.
Input: JSON lines {"ids": [token ids], "label": 0 or 1}, ids already produced by the tokenizer.
"""
import json
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

PAD = 0


@dataclass
class Hyper:
    vocab: int = 32000
    dim: int = 256
    layers: int = 4
    heads: int = 4
    max_len: int = 256
    head_dropout: float = 0.3
    epochs: int = 8
    head_only_epochs: int = 2
    batch: int = 64
    lr: float = 3e-4
    weight_decay: float = 0.01


class Reviews(Dataset):
    def __init__(self, path, max_len):
        with open(path) as f:
            self.rows = [json.loads(line) for line in f]
        self.max_len = max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        return torch.tensor(row["ids"][: self.max_len]), row["label"]


def collate(batch):
    ids, labels = zip(*batch)
    padded = nn.utils.rnn.pad_sequence(ids, batch_first=True, padding_value=PAD)
    return padded, torch.tensor(labels)


class ReviewClassifier(nn.Module):
    def __init__(self, hp: Hyper):
        super().__init__()
        self.hp = hp
        self.embed = nn.Embedding(hp.vocab, hp.dim, padding_idx=PAD)
        self.pos = nn.Parameter(torch.randn(1, hp.max_len, hp.dim) * 0.02)
        layer = nn.TransformerEncoderLayer(hp.dim, hp.heads, 4 * hp.dim, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, hp.layers)
        self.proj = nn.Linear(hp.dim, hp.dim)
        self.out = nn.Linear(hp.dim, 2)

    def pool(self, h, pad_mask):
        keep = (~pad_mask).unsqueeze(-1).float()
        return (h * keep).sum(1) / keep.sum(1).clamp(min=1.0)

    def forward(self, ids):
        pad_mask = ids.eq(PAD)
        h = self.embed(ids) * math.sqrt(self.hp.dim) + self.pos[:, : ids.size(1)]
        h = self.encoder(h, src_key_padding_mask=pad_mask)
        z = torch.tanh(self.proj(self.pool(h, pad_mask)))
        return self.out(F.dropout(z, p=self.hp.head_dropout))


class Trainer:
    def __init__(self, model, hp: Hyper, device):
        self.model, self.hp, self.device = model.to(device), hp, device
        decay, no_decay = [], []
        for name, p in model.named_parameters():
            (no_decay if p.ndim < 2 or name == "pos" else decay).append(p)
        self.optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": hp.weight_decay},
                                            {"params": no_decay, "weight_decay": 0.0}], lr=hp.lr)

    def on_epoch_start(self, epoch):
        if epoch == self.hp.epochs - self.hp.head_only_epochs:
            for module in (self.model.embed, self.model.encoder):
                module.requires_grad_(False)
            self.model.pos.requires_grad_(False)
            print(f"epoch {epoch}: encoder fixed, training the classifier only")
        self.model.train()

    def on_step_start(self):
        for group in self.optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.zero_()

    def step(self, ids, labels):
        self.on_step_start()
        loss = F.cross_entropy(self.model(ids.to(self.device)), labels.to(self.device))
        loss.backward()
        nn.utils.clip_grad_norm_([p for p in self.model.parameters() if p.requires_grad], 1.0)
        self.optimizer.step()
        return loss.item()

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        hits = total = 0
        for ids, labels in loader:
            logits = self.model(ids.to(self.device))
            hits += (logits.argmax(dim=1).cpu() == labels).sum().item()
            total += labels.numel()
        return hits / total

    def fit(self, train_loader, valid_loader):
        for epoch in range(self.hp.epochs):
            self.on_epoch_start(epoch)
            losses = [self.step(ids, labels) for ids, labels in train_loader]
            print(f"epoch {epoch} train loss {sum(losses) / len(losses):.4f} "
                  f"valid acc {self.evaluate(valid_loader):.4f}")


if __name__ == "__main__":
    torch.manual_seed(7)
    hp = Hyper()
    train = DataLoader(Reviews("data/reviews/train.jsonl", hp.max_len), hp.batch, shuffle=True,
                       collate_fn=collate, num_workers=2, drop_last=True)
    valid = DataLoader(Reviews("data/reviews/valid.jsonl", hp.max_len), 256, collate_fn=collate)
    trainer = Trainer(ReviewClassifier(hp), hp, "cuda" if torch.cuda.is_available() else "cpu")
    trainer.fit(train, valid)
    torch.save(trainer.model.state_dict(), "review_polarity.pt")
