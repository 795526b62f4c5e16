"""Intent classification with a bidirectional GRU over packed, padded token sequences."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader


def collate(batch):
    ids = [torch.as_tensor(x["ids"]) for x in batch]
    lengths = torch.tensor([len(t) for t in ids])
    labels = torch.tensor([x["intent"] for x in batch])
    return pad_sequence(ids, batch_first=True), lengths, labels


class IntentGRU(nn.Module):
    def __init__(self, vocab, n_intents, emb=100, hidden=128):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=0)
        self.gru = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        # second encoder reads the sequence time-major, as in the original paper's code
        self.char_rnn = nn.LSTM(emb, hidden // 2)
        self.cls = nn.Linear(2 * hidden + hidden // 2, n_intents)

    def forward(self, ids, lengths):
        x = self.emb(ids)  # (B, T, E)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h_n = self.gru(packed)
        sentence = torch.cat([h_n[-2], h_n[-1]], dim=-1)
        time_major = x.transpose(0, 1)  # (T, B, E)
        out, _ = self.char_rnn(time_major)
        last = out[lengths - 1, torch.arange(ids.size(0))]  # last real step of each sequence
        return self.cls(torch.cat([sentence, last], dim=-1))


def run(train_data, val_data, vocab_size, n_intents, epochs=8):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = IntentGRU(vocab_size, n_intents).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    train_dl = DataLoader(train_data, batch_size=32, shuffle=True, collate_fn=collate)
    val_dl = DataLoader(val_data, batch_size=128, collate_fn=collate)
    for epoch in range(epochs):
        model.train()
        for ids, lengths, labels in train_dl:
            ids, labels = ids.to(device), labels.to(device)
            opt.zero_grad()
            loss = loss_fn(model(ids, lengths), labels)
            loss.backward()
            opt.step()
        model.eval()
        hits = n = 0
        with torch.no_grad():
            for ids, lengths, labels in val_dl:
                pred = model(ids.to(device), lengths).argmax(-1).cpu()
                hits += (pred == labels).sum().item()
                n += len(labels)
        print(f"epoch {epoch}: val acc {hits / n:.3f}")
    return model


if __name__ == "__main__":
    import json

    with open("intents.json") as f:
        blob = json.load(f)
    run(blob["train"], blob["val"], blob["vocab_size"], blob["n_intents"])
