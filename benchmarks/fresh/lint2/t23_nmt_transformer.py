"""German -> English translation with a small encoder-decoder Transformer (pre-tokenised BPE ids)."""
import json
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

PAD, BOS, EOS = 0, 1, 2


@dataclass
class TrainConfig:
    train_path: str = "data/wmt_de_en.train.jsonl"
    valid_path: str = "data/wmt_de_en.valid.jsonl"
    vocab: int = 16000
    d_model: int = 512
    layers: int = 6
    batch_size: int = 96
    warmup: int = 4000
    epochs: int = 20
    clip_norm: float = 1.0


def read_pairs(path):
    with open(path) as fh:
        return [(torch.tensor(r["src"]), torch.tensor([BOS] + r["tgt"] + [EOS])) for r in map(json.loads, fh)]


def collate(batch):
    src, tgt = zip(*batch)
    return pad_sequence(src, batch_first=True, padding_value=PAD), pad_sequence(tgt, batch_first=True, padding_value=PAD)


class Seq2Seq(nn.Module):
    def __init__(self, cfg, max_len=512):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.d_model, padding_idx=PAD)
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, cfg.d_model, 2) * (-math.log(10000.0) / cfg.d_model))
        pe = torch.zeros(max_len, cfg.d_model)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        self.register_buffer("pe", pe)
        self.transformer = nn.Transformer(cfg.d_model, nhead=8, num_encoder_layers=cfg.layers,
                                          num_decoder_layers=cfg.layers, dropout=0.1, batch_first=True)
        self.out = nn.Linear(cfg.d_model, cfg.vocab)
        self.scale = math.sqrt(cfg.d_model)

    def embed_tokens(self, ids):
        return self.embed(ids) * self.scale + self.pe[: ids.size(1)]

    def forward(self, src, tgt_in):
        causal = torch.triu(torch.ones(tgt_in.size(1), tgt_in.size(1), dtype=torch.bool, device=src.device), 1)
        h = self.transformer(
            self.embed_tokens(src), self.embed_tokens(tgt_in), tgt_mask=causal,
            src_key_padding_mask=src == PAD, tgt_key_padding_mask=tgt_in == PAD, memory_key_padding_mask=src == PAD,
        )
        return self.out(h)


def inverse_sqrt(warmup):
    return lambda step: min((step + 1) ** -0.5, (step + 1) * warmup**-1.5) * warmup**0.5


def token_loss(model, src, tgt):
    logits = model(src, tgt[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1),
                           ignore_index=PAD, label_smoothing=0.1)


def main(cfg=TrainConfig()):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(read_pairs(cfg.train_path), batch_size=cfg.batch_size, shuffle=True, collate_fn=collate)
    valid_loader = DataLoader(read_pairs(cfg.valid_path), batch_size=128, collate_fn=collate)
    model = Seq2Seq(cfg).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=7e-4, betas=(0.9, 0.98), eps=1e-9)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, inverse_sqrt(cfg.warmup))

    step = 0
    for epoch in range(cfg.epochs):
        model.train()
        for src, tgt in train_loader:
            src, tgt = src.to(device), tgt.to(device)
            loss = token_loss(model, src, tgt)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_norm)
            scheduler.step()
            step += 1
            if step % 500 == 0:
                print(f"step {step} loss {loss.item():.3f} grad-norm {grad_norm:.2f} lr {scheduler.get_last_lr()[0]:.2e}")

        model.eval()
        total, tokens = 0.0, 0
        with torch.no_grad():
            for src, tgt in valid_loader:
                n_tok = (tgt[:, 1:] != PAD).sum().item()
                total += token_loss(model, src.to(device), tgt.to(device)).item() * n_tok
                tokens += n_tok
        print(f"epoch {epoch}: valid loss per token {total / tokens:.3f}")
        torch.save(model.state_dict(), f"nmt_epoch{epoch}.pt")


if __name__ == "__main__":
    main()
