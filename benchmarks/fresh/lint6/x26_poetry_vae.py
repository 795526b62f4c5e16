"""Sentence VAE (Bowman et al. style) over single lines of poetry: a GRU encoder maps a line to
a 32-d Gaussian latent, a GRU decoder reconstructs it. KL annealing and word dropout keep the
decoder from ignoring the latent."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader

from poetry_data import PoetryLines, Vocab  # tokenised lines, BOS/EOS added

PAD, BOS, EOS, UNK = 0, 1, 2, 3
EMB, HID, LATENT = 256, 512, 32


class LineVAE(nn.Module):
    def __init__(self, vocab_size, word_dropout=0.25):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, EMB, padding_idx=PAD)
        self.encoder = nn.GRU(EMB, HID, batch_first=True, bidirectional=True)
        self.to_stats = nn.Linear(2 * HID, 2 * LATENT)
        self.latent_to_h = nn.Linear(LATENT, HID)
        self.decoder = nn.GRU(EMB, HID, batch_first=True)
        self.vocab_out = nn.Linear(HID, vocab_size)
        self.word_dropout = word_dropout

    def encode(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h_n = self.encoder(packed)                       # (2, B, HID): last valid step per direction
        mu, logvar = self.to_stats(torch.cat([h_n[0], h_n[1]], dim=1)).chunk(2, dim=1)
        return mu, logvar

    def decode(self, z, dec_in):
        if self.training and self.word_dropout > 0:
            drop = (torch.rand(dec_in.shape, device=dec_in.device) < self.word_dropout) & (dec_in > EOS)
            dec_in = dec_in.masked_fill(drop, UNK)
        h0 = torch.tanh(self.latent_to_h(z)).unsqueeze(0)
        out, _ = self.decoder(self.embed(dec_in), h0)
        return self.vocab_out(out)

    def forward(self, tokens, lengths):
        mu, logvar = self.encode(tokens, lengths)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        logits = self.decode(z, tokens[:, :-1])
        return logits, mu, logvar


def collate(batch):
    lengths = torch.tensor([len(x) for x in batch])
    return pad_sequence(batch, batch_first=True, padding_value=PAD), lengths


def kl_weight(step, warmup=20_000):
    return min(1.0, step / warmup)


@torch.no_grad()
def sample_lines(model, vocab, n=5, max_len=30, device="cpu"):
    model.eval()
    z = torch.randn(n, LATENT, device=device)
    h = torch.tanh(model.latent_to_h(z)).unsqueeze(0)
    tok = torch.full((n, 1), BOS, dtype=torch.long, device=device)
    lines = [[] for _ in range(n)]
    for _ in range(max_len):
        out, h = model.decoder(model.embed(tok), h)
        tok = model.vocab_out(out[:, -1]).argmax(dim=-1, keepdim=True)
        for i, t in enumerate(tok.squeeze(1).tolist()):
            lines[i].append(t)
    model.train()
    return [vocab.decode(line, stop_at=EOS) for line in lines]


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    vocab = Vocab.load("data/poetry_vocab.json")
    loader = DataLoader(PoetryLines("data/poetry_lines.txt", vocab), batch_size=128, shuffle=True,
                        collate_fn=collate, drop_last=True)
    model = LineVAE(len(vocab)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = 0
    for epoch in range(30):
        model.train()
        for tokens, lengths in loader:
            tokens = tokens.to(device)
            logits, mu, logvar = model(tokens, lengths)
            targets = tokens[:, 1:]
            recon = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1),
                                    ignore_index=PAD, reduction="sum") / tokens.size(0)
            kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / tokens.size(0)
            loss = recon + kl_weight(step) * kl
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            step += 1
            if step % 500 == 0:
                print(f"step {step}: recon {recon.item():.2f} kl {kl.item():.2f} beta {kl_weight(step):.2f}")
        for line in sample_lines(model, vocab, device=device):
            print("   ", line)
    torch.save(model.state_dict(), "poetry_vae.pt")


if __name__ == "__main__":
    main()
