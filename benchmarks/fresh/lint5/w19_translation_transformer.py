"""German -> English translation with a small encoder-decoder Transformer (Multi30k-sized data)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from mt_data import BOS, EOS, PAD, build_loaders, detokenize

D_MODEL = 512


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=512, dropout=0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return self.dropout(x + self.pe[:, : x.size(1)])


class Translator(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, layers=3, heads=8):
        super().__init__()
        self.src_emb = nn.Embedding(src_vocab, D_MODEL, padding_idx=PAD)
        self.tgt_emb = nn.Embedding(tgt_vocab, D_MODEL, padding_idx=PAD)
        self.pos = PositionalEncoding(D_MODEL)
        enc_layer = nn.TransformerEncoderLayer(D_MODEL, heads, 2048, dropout=0.1, batch_first=True)
        dec_layer = nn.TransformerDecoderLayer(D_MODEL, heads, 2048, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(enc_layer, layers, enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(dec_layer, layers)
        self.out = nn.Linear(D_MODEL, tgt_vocab)

    def encode(self, src):
        return self.encoder(self.pos(self.src_emb(src) * math.sqrt(D_MODEL)), src_key_padding_mask=src == PAD)

    def decode(self, tgt_in, memory, src):
        causal = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1), device=tgt_in.device, dtype=torch.bool)
        h = self.decoder(self.pos(self.tgt_emb(tgt_in) * math.sqrt(D_MODEL)), memory, tgt_mask=causal,
                         tgt_key_padding_mask=tgt_in == PAD, memory_key_padding_mask=src == PAD)
        return self.out(h)

    def forward(self, src, tgt_in):
        return self.decode(tgt_in, self.encode(src), src)


@torch.no_grad()
def greedy_translate(model, src, max_len=60):
    model.eval()
    memory = model.encode(src)
    ys = torch.full((src.size(0), 1), BOS, dtype=torch.long, device=src.device)
    finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        next_tok = model.decode(ys, memory, src)[:, -1].argmax(dim=-1)
        next_tok = next_tok.masked_fill(finished, PAD)
        ys = torch.cat([ys, next_tok.unsqueeze(1)], dim=1)
        finished |= next_tok == EOS
        if finished.all():
            break
    model.train()
    return ys[:, 1:]


def train(epochs=20, device="cuda", warmup=4000):
    train_loader, valid_loader, src_vocab, tgt_vocab = build_loaders(batch_size=128)
    model = Translator(len(src_vocab), len(tgt_vocab)).to(device)
    criterion = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1, reduction="sum")
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    noam = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda step: D_MODEL ** -0.5 * min((step + 1) ** -0.5, (step + 1) * warmup ** -1.5))

    for epoch in range(epochs):
        model.train()
        loss_sum, n_tokens = 0.0, 0
        for src, tgt in train_loader:
            src, tgt = src.to(device), tgt.to(device)
            tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
            logits = model(src, tgt_in)
            tokens = (tgt_out != PAD).sum()
            loss = criterion(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1)) / tokens
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            noam.step()
            loss_sum += loss.item() * tokens.item()
            n_tokens += tokens.item()
        src, _ = next(iter(valid_loader))
        sample = greedy_translate(model, src[:2].to(device))
        print(f"epoch {epoch}: token loss {loss_sum / n_tokens:.3f} | {detokenize(sample[0], tgt_vocab)}")
    torch.save(model.state_dict(), "translator.pt")


if __name__ == "__main__":
    train()
