"""Character-level LSTM language model on a lyrics corpus, with truncated BPTT and sampling."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", default="data/lyrics/all_lyrics.txt")
    p.add_argument("--streams", type=int, default=64)
    p.add_argument("--bptt", type=int, default=200)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--dropout", type=float, default=0.25)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--clip", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=1111)
    return p.parse_args()


def batchify(ids, streams):
    n = ids.numel() // streams
    return ids[: n * streams].view(streams, n)


class CharLM(nn.Module):
    def __init__(self, vocab, hidden, layers, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, layers, batch_first=True, dropout=dropout)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        h, state = self.lstm(self.drop(self.embed(x)), state)
        return self.out(self.drop(h)), state


def optimizer_update(model, opt, loss, max_norm):
    """Backward + step; returns the gradient norm for the training log."""
    loss.backward()
    opt.step()
    return nn.utils.clip_grad_norm_(model.parameters(), max_norm).item()


def evaluate(model, data, bptt):
    model.eval()
    total, count, state = 0.0, 0, None
    with torch.no_grad():
        for i in range(0, data.size(1) - 1, bptt):
            x, y = data[:, i:i + bptt], data[:, i + 1:i + 1 + bptt]
            x = x[:, : y.size(1)]
            logits, state = model(x, state)
            total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
            count += y.numel()
    return total / count


@torch.no_grad()
def sample(model, stoi, itos, prompt, length, device, temperature=0.8):
    model.eval()
    ids = torch.tensor([[stoi[c] for c in prompt]], device=device)
    logits, state = model(ids)
    out = list(prompt)
    for _ in range(length):
        probs = F.softmax(logits[:, -1] / temperature, dim=-1)
        nxt = torch.multinomial(probs, 1)
        out.append(itos[nxt.item()])
        logits, state = model(nxt, state)
    return "".join(out)


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    text = open(args.corpus, encoding="utf-8").read()
    itos = sorted(set(text))
    stoi = {c: i for i, c in enumerate(itos)}
    ids = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    split = int(0.95 * len(ids))
    train = batchify(ids[:split], args.streams).to(device)
    valid = batchify(ids[split:], 8).to(device)

    model = CharLM(len(itos), args.hidden, args.layers, args.dropout).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    best = float("inf")
    for epoch in range(args.epochs):
        model.train()
        state, norms = None, []
        for i in range(0, train.size(1) - 1 - args.bptt, args.bptt):
            x, y = train[:, i:i + args.bptt], train[:, i + 1:i + 1 + args.bptt]
            if state is not None:
                state = tuple(s.detach() for s in state)
            logits, state = model(x, state)
            loss = F.cross_entropy(logits.reshape(-1, len(itos)), y.reshape(-1))
            opt.zero_grad()
            norms.append(optimizer_update(model, opt, loss, args.clip))
        val = evaluate(model, valid, args.bptt)
        print(f"epoch {epoch:2d}  val bpc {val / math.log(2):.3f}  median grad norm {sorted(norms)[len(norms) // 2]:.2f}")
        print(sample(model, stoi, itos, "\n", 200, device))
        if val < best:
            best = val
            torch.save({"model": model.state_dict(), "itos": itos}, "char_lstm_best.pt")


if __name__ == "__main__":
    main()
