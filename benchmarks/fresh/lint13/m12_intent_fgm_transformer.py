"""Intent classification (SNIPS / ATIS style) with a small Transformer encoder, trained with
FGM adversarial perturbations on the word embeddings (Miyato et al., 2017) for robustness to
ASR noise. Attention pooling over tokens with dropout on the pooling weights.
"""
import json
import random
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Cfg:
    data_dir: str = "data/snips"
    max_len: int = 48
    d_model: int = 256
    heads: int = 4
    layers: int = 3
    pool_dropout: float = 0.2
    adv_eps: float = 1.0
    adv_weight: float = 1.0
    batch_size: int = 64
    epochs: int = 15
    lr: float = 3e-4
    warmup_steps: int = 500
    seed: int = 17


def load_split(path, vocab, intents, max_len):
    rows = [json.loads(line) for line in Path(path).read_text().splitlines()]
    ids = torch.zeros(len(rows), max_len, dtype=torch.long)
    for i, r in enumerate(rows):
        toks = [vocab.get(w, 1) for w in r["tokens"]][:max_len]
        ids[i, :len(toks)] = torch.tensor(toks)
    return ids, torch.tensor([intents[r["intent"]] for r in rows])


class AttentionPool(nn.Module):
    def __init__(self, d, p):
        super().__init__()
        self.score = nn.Linear(d, 1)
        self.p = p

    def forward(self, h, pad_mask):
        scores = self.score(h).squeeze(-1).masked_fill(pad_mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        weights = F.dropout(weights, self.p)
        return torch.einsum("bt,btd->bd", weights, h)


class IntentEncoder(nn.Module):
    def __init__(self, n_vocab, n_intents, cfg):
        super().__init__()
        self.tok = nn.Embedding(n_vocab, cfg.d_model, padding_idx=0)
        self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
        layer = nn.TransformerEncoderLayer(cfg.d_model, cfg.heads, 4 * cfg.d_model, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, cfg.layers, enable_nested_tensor=False)
        self.pool = AttentionPool(cfg.d_model, cfg.pool_dropout)
        self.head = nn.Linear(cfg.d_model, n_intents)

    def embed(self, ids):
        return self.tok(ids)

    def classify(self, embeddings, ids):
        pad_mask = ids == 0
        pos = torch.arange(ids.shape[1], device=ids.device)
        h = self.encoder(embeddings + self.pos(pos), src_key_padding_mask=pad_mask)
        return self.head(self.pool(h, pad_mask))

    def forward(self, ids):
        return self.classify(self.embed(ids), ids)


def fgm_step(model, ids, labels, cfg):
    emb = model.embed(ids)
    clean_loss = F.cross_entropy(model.classify(emb, ids), labels)
    clean_loss.backward()
    grad = emb.grad
    delta = cfg.adv_eps * grad / (grad.norm(dim=-1, keepdim=True) + 1e-12)
    adv_loss = F.cross_entropy(model.classify(model.embed(ids) + delta.detach(), ids), labels)
    (cfg.adv_weight * adv_loss).backward()
    return clean_loss.item(), adv_loss.item()


@torch.no_grad()
def evaluate(model, ids, labels, device):
    model.eval()
    preds = torch.cat([model(ids[i:i + 256].to(device)).argmax(-1).cpu() for i in range(0, len(ids), 256)])
    return (preds == labels).float().mean().item()


def main(cfg=Cfg()):
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    vocab = json.loads(Path(f"{cfg.data_dir}/vocab.json").read_text())
    intents = {name: i for i, name in enumerate(json.loads(Path(f"{cfg.data_dir}/intents.json").read_text()))}
    tr_ids, tr_y = load_split(f"{cfg.data_dir}/train.jsonl", vocab, intents, cfg.max_len)
    te_ids, te_y = load_split(f"{cfg.data_dir}/test.jsonl", vocab, intents, cfg.max_len)

    model = IntentEncoder(len(vocab), len(intents), cfg).to(device)
    decay = [p for n, p in model.named_parameters() if p.dim() > 1 and "tok" not in n and "pos" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() > 1 and "tok" not in n and "pos" not in n)]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / cfg.warmup_steps))

    for epoch in range(cfg.epochs):
        model.train()
        perm = torch.randperm(len(tr_ids))
        for i in range(0, len(perm), cfg.batch_size):
            idx = perm[i:i + cfg.batch_size]
            ids, labels = tr_ids[idx].to(device), tr_y[idx].to(device)
            optimizer.zero_grad(set_to_none=True)
            clean, adv = fgm_step(model, ids, labels, cfg)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
        acc = evaluate(model, te_ids, te_y, device)
        print(f"epoch {epoch:2d}  clean {clean:.4f}  adv {adv:.4f}  test acc {acc:.4f}")
    torch.save(model.state_dict(), "intent_fgm.pt")


if __name__ == "__main__":
    main()
