"""Word-level LSTM language model on WikiText-2 (pre-tokenised ids), truncated BPTT, resumable."""
import argparse
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class WordLM(nn.Module):
    def __init__(self, vocab, dim=400, hidden=1150, layers=3, dropout=0.3, tie=False):
        super().__init__()
        self.encoder = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, hidden, num_layers=layers, dropout=dropout, batch_first=True)
        self.proj = nn.Linear(hidden, dim)
        self.decoder = nn.Linear(dim, vocab)
        if tie:
            self.decoder.weight = self.encoder.weight
        self.drop = nn.Dropout(dropout)

    def forward(self, tokens, hidden=None):  # tokens: (batch, time)
        out, hidden = self.rnn(self.drop(self.encoder(tokens)), hidden)
        return self.decoder(self.drop(self.proj(out))), hidden


def detach_state(hidden):
    if hidden is None:
        return None
    return tuple(h.detach() for h in hidden)


def make_streams(ids, batch_size):
    n = ids.numel() // batch_size
    return ids[: n * batch_size].view(batch_size, n)  # (batch, time): row b is one contiguous stream


def train_epoch(model, streams, optimizer, bptt, clip):
    model.train()
    hidden, total, tokens = None, 0.0, 0
    for t in range(0, streams.size(1) - 1, bptt):
        x = streams[:, t : t + bptt]
        y = streams[:, t + 1 : t + 1 + bptt]
        x = x[:, : y.size(1)]
        hidden = detach_state(hidden)
        logits, hidden = model(x, hidden)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        total += loss.item() * y.numel()
        tokens += y.numel()
    return total / tokens


@torch.no_grad()
def evaluate(model, streams, bptt):
    model.eval()
    hidden, total, tokens = None, 0.0, 0
    for t in range(0, streams.size(1) - 1, bptt):
        x, y = streams[:, t : t + bptt], streams[:, t + 1 : t + 1 + bptt]
        logits, hidden = model(x[:, : y.size(1)], hidden)
        total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
        tokens += y.numel()
    return total / tokens


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/wikitext2_ids.pt")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--bptt", type=int, default=70)
    ap.add_argument("--ckpt", default="wordlm.pt")
    args = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(141)

    data = torch.load(args.data, weights_only=True)  # {"train": LongTensor, "valid": LongTensor, "vocab_size": int}
    train = make_streams(data["train"], 40).to(device)
    valid = make_streams(data["valid"], 10).to(device)
    model = WordLM(data["vocab_size"]).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=20.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.25)

    start = 0
    if os.path.exists(args.ckpt):
        state = torch.load(args.ckpt, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        start = state["epoch"] + 1

    for epoch in range(start, args.epochs):
        train_loss = train_epoch(model, train, optimizer, args.bptt, clip=0.25)
        val_loss = evaluate(model, valid, args.bptt)
        scheduler.step()
        print(f"epoch {epoch} lr {scheduler.get_last_lr()[0]:.3f} train ppl {math.exp(train_loss):.1f} "
              f"valid ppl {math.exp(val_loss):.1f}")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "epoch": epoch}, args.ckpt)


if __name__ == "__main__":
    main()
