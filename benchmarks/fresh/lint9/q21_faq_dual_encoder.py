"""Dual-encoder FAQ retrieval for a customer-support bot.

Questions and answers are embedded by one shared Transformer encoder (trained from scratch on
our FAQ logs) and matched by cosine similarity; in-batch negatives with an InfoNCE loss.
Recipe follows the paper we reproduce: weight decay 0.1, warm-up, cosine decay.
"""
import math
import re
from collections import Counter

import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

CONFIG = {
    "pairs_csv": "data/support_faq/pairs.csv",
    "max_len": 64,
    "vocab_size": 30_000,
    "d_model": 256,
    "heads": 4,
    "layers": 4,
    "batch_size": 128,
    "epochs": 10,
    "lr": 5e-4,
    "weight_decay": 0.1,
    "warmup_frac": 0.05,
    "temperature": 0.05,
}
PAD, UNK, CLS = 0, 1, 2


def words(text):
    return re.findall(r"\w+|[^\w\s]", str(text).lower())


class Tokenizer:
    def __init__(self, texts, size, max_len):
        common = Counter(w for t in texts for w in words(t)).most_common(size - 3)
        self.stoi = {w: i + 3 for i, (w, _) in enumerate(common)}
        self.max_len = max_len

    def __call__(self, batch):
        ids = [[CLS] + [self.stoi.get(w, UNK) for w in words(t)][: self.max_len - 1] for t in batch]
        width = max(len(x) for x in ids)
        input_ids = torch.tensor([x + [PAD] * (width - len(x)) for x in ids])
        return input_ids, (input_ids != PAD).long()


class TextEncoder(nn.Module):
    def __init__(self, vocab, d, heads, layers, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, d, padding_idx=PAD)
        self.pos = nn.Embedding(max_len, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, batch_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d)

    def forward(self, input_ids, attention_mask):
        positions = torch.arange(input_ids.size(1), device=input_ids.device)
        h = self.tok(input_ids) + self.pos(positions)[None]
        h = self.encoder(h, src_key_padding_mask=attention_mask == 0)
        return pool(self.norm(h), attention_mask)


def pool(hidden, attention_mask):
    return hidden.mean(dim=1)


def build_optimizer(model, cfg):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "norm" in name else decay).append(p)
    groups = [{"params": decay, "weight_decay": cfg["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.Adam(groups, lr=cfg["lr"], betas=(0.9, 0.98), eps=1e-6)


def warmup_cosine(total, warmup):
    return lambda s: (s + 1) / warmup if s < warmup else 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup)))


def info_nce(q, a, temperature):
    q, a = F.normalize(q, dim=-1), F.normalize(a, dim=-1)
    logits = q @ a.t() / temperature
    labels = torch.arange(len(q), device=q.device)
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


@torch.no_grad()
def recall_at_1(model, tok, questions, answers, device):
    model.eval()
    embed = lambda texts: torch.cat([
        F.normalize(model(*(t.to(device) for t in tok(texts[i:i + 256]))), dim=-1)
        for i in range(0, len(texts), 256)])
    q, a = embed(questions), embed(answers)
    hits = (q @ a.t()).argmax(dim=1) == torch.arange(len(q), device=device)
    return hits.float().mean().item()


def main(cfg=CONFIG):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    df = pd.read_csv(cfg["pairs_csv"]).dropna(subset=["question", "answer"]).drop_duplicates("question")
    df = df.sample(frac=1.0, random_state=0).reset_index(drop=True)
    val, train = df.iloc[:2000], df.iloc[2000:]
    tok = Tokenizer(pd.concat([train["question"], train["answer"]]), cfg["vocab_size"], cfg["max_len"])
    pairs = list(zip(train["question"], train["answer"]))
    loader = DataLoader(pairs, batch_size=cfg["batch_size"], shuffle=True, drop_last=True,
                        collate_fn=lambda b: (tok([q for q, _ in b]), tok([a for _, a in b])))

    model = TextEncoder(cfg["vocab_size"], cfg["d_model"], cfg["heads"], cfg["layers"], cfg["max_len"]).to(device)
    optimizer = build_optimizer(model, cfg)
    total = cfg["epochs"] * len(loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_cosine(total, int(cfg["warmup_frac"] * total)))

    for epoch in range(cfg["epochs"]):
        model.train()
        running = 0.0
        for (q_ids, q_mask), (a_ids, a_mask) in loader:
            q = model(q_ids.to(device), q_mask.to(device))
            a = model(a_ids.to(device), a_mask.to(device))
            loss = info_nce(q, a, cfg["temperature"])
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            running += loss.item()
        r1 = recall_at_1(model, tok, val["question"].tolist(), val["answer"].tolist(), device)
        print(f"epoch {epoch + 1} loss {running / len(loader):.4f} val R@1 {r1:.4f}")
    torch.save({"model": model.state_dict(), "vocab": tok.stoi}, "faq_dual_encoder.pt")


if __name__ == "__main__":
    main()
