"""Fine-tune a small pretrained text encoder for banking-chat intents, then quantize for CPU serving."""
import json
import os
import random
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CFG = {
    "pretrained": "pretrained/chat_encoder.pt",
    "train": "data/banking/train.jsonl",
    "test": "data/banking/test.jsonl",
    "intents": "data/banking/intents.json",
    "vocab": 30000,
    "max_len": 48,
    "dim": 192,
    "layers": 4,
    "train_modules": ["pooler", "classifier"],
    "epochs": 6,
    "batch_size": 64,
    "lr": 5e-4,
    "export": "serving/intent_int8.pt",
}


def encode(text, vocab, max_len):
    ids = [2 + zlib.adler32(t.encode()) % (vocab - 2) for t in text.lower().split()][: max_len - 1]
    ids = [1] + ids
    return ids + [0] * (max_len - len(ids))


class IntentSet(Dataset):
    def __init__(self, path, intents, cfg):
        with open(path) as fh:
            rows = [json.loads(l) for l in fh if l.strip()]
        self.ids = torch.tensor([encode(r["text"], cfg["vocab"], cfg["max_len"]) for r in rows])
        self.labels = torch.tensor([intents.index(r["intent"]) for r in rows])

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.ids[i], self.labels[i]


class ChatEncoder(nn.Module):
    def __init__(self, vocab, dim, layers, max_len):
        super().__init__()
        self.max_len = max_len
        self.embeddings = nn.Embedding(vocab, dim, padding_idx=0)
        self.encoder = nn.GRU(dim, dim // 2, num_layers=layers, batch_first=True, bidirectional=True)
        self.pooler = nn.Sequential(nn.Linear(dim, dim), nn.Tanh())

    def forward(self, ids):
        lengths = (ids != 0).sum(dim=1).clamp_min(1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(self.embeddings(ids), lengths, batch_first=True,
                                                   enforce_sorted=False)
        _, h = self.encoder(packed)
        return self.pooler(torch.cat([h[-2], h[-1]], dim=1))


class IntentModel(nn.Module):
    def __init__(self, cfg, num_intents):
        super().__init__()
        self.backbone = ChatEncoder(cfg["vocab"], cfg["dim"], cfg["layers"], cfg["max_len"])
        self.dropout = nn.Dropout(0.1)
        self.intent_head = nn.Linear(cfg["dim"], num_intents)

    def forward(self, ids):
        return self.intent_head(self.dropout(self.backbone(ids)))


def configure_trainable(model, patterns):
    for name, param in model.named_parameters():
        param.requires_grad = any(p in name for p in patterns)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    print(f"{len(trainable)} trainable tensors")
    return [p for p in model.parameters() if p.requires_grad]


@torch.no_grad()
def accuracy(model, loader):
    model.eval()
    correct = seen = 0
    for ids, y in loader:
        correct += (model(ids).argmax(1) == y).sum().item()
        seen += y.numel()
    return correct / max(seen, 1)


def main(cfg=CFG):
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    with open(cfg["intents"]) as fh:
        intents = json.load(fh)
    train_dl = DataLoader(IntentSet(cfg["train"], intents, cfg), batch_size=cfg["batch_size"], shuffle=True)
    test_dl = DataLoader(IntentSet(cfg["test"], intents, cfg), batch_size=256)

    model = IntentModel(cfg, len(intents))
    state = torch.load(cfg["pretrained"], map_location="cpu", weights_only=True)
    model.backbone.load_state_dict(state)
    params = configure_trainable(model, cfg["train_modules"])
    optimizer = torch.optim.AdamW(params, lr=cfg["lr"], weight_decay=0.0)

    for epoch in range(cfg["epochs"]):
        model.train()
        for ids, y in train_dl:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(ids), y)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: test accuracy {accuracy(model, test_dl):.3f}")

    model.eval()
    quantized = torch.ao.quantization.quantize_dynamic(model, {nn.Linear, nn.GRU}, dtype=torch.qint8)
    print(f"int8 test accuracy {accuracy(quantized, test_dl):.3f}")
    os.makedirs(os.path.dirname(cfg["export"]) or ".", exist_ok=True)
    torch.save(quantized.state_dict(), cfg["export"])


if __name__ == "__main__":
    main()
