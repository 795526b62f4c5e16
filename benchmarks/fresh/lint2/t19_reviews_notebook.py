#!/usr/bin/env python
# coding: utf-8

# # Movie-review sentiment with a bag-of-embeddings baseline
# Exported from `reviews_baseline.ipynb`.

# In[1]:


import re
from collections import Counter

import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

CONFIG = {"csv": "data/imdb_reviews.csv", "min_freq": 3, "dim": 64, "batch": 64, "epochs": 8, "lr": 5.0}
torch.manual_seed(42)


# In[2]:


df = pd.read_csv(CONFIG["csv"])  # columns: review, sentiment ("positive" / "negative")
df["label"] = (df["sentiment"] == "positive").astype(int)
df = df.sample(frac=1.0, random_state=42).reset_index(drop=True)
train_df, valid_df = df.iloc[:40000], df.iloc[40000:]
TOKEN = re.compile(r"[a-z0-9']+")


def tokenize(text):
    return TOKEN.findall(text.lower().replace("<br />", " "))


counts = Counter(tok for text in train_df["review"] for tok in tokenize(text))
vocab = {"<unk>": 0}
for tok, c in counts.most_common():
    if c >= CONFIG["min_freq"]:
        vocab[tok] = len(vocab)
print(len(vocab), "tokens in the vocabulary")


# In[3]:


def encode(text):
    return torch.tensor([vocab.get(t, 0) for t in tokenize(text)] or [0], dtype=torch.long)


def collate(batch):
    labels = torch.tensor([label for _, label in batch], dtype=torch.long)
    ids = [encode(text) for text, _ in batch]
    offsets = torch.tensor([0] + [len(x) for x in ids[:-1]]).cumsum(dim=0)
    return torch.cat(ids), offsets, labels


train_loader = DataLoader(list(zip(train_df["review"], train_df["label"])), batch_size=CONFIG["batch"],
                          shuffle=True, collate_fn=collate)
valid_loader = DataLoader(list(zip(valid_df["review"], valid_df["label"])), batch_size=256, collate_fn=collate)


# In[4]:


class BagClassifier(nn.Module):
    def __init__(self, vocab_size, dim, n_classes=2):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.fc = nn.Linear(dim, n_classes)
        nn.init.uniform_(self.embedding.weight, -0.5, 0.5)
        nn.init.zeros_(self.fc.bias)

    def forward(self, ids, offsets):
        return self.fc(self.embedding(ids, offsets))


model = BagClassifier(len(vocab), CONFIG["dim"])


# In[5]:


# quick look at one batch before training
ids, offsets, labels = iter(train_loader).next()
logits = model(ids, offsets)
loss = nn.CrossEntropyLoss(logits, labels)
print(logits.shape, loss)


# In[6]:


criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=CONFIG["lr"])
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)

for epoch in range(CONFIG["epochs"]):
    model.train()
    for ids, offsets, labels in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(ids, offsets), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
    scheduler.step()

    model.eval()
    correct = 0
    with torch.no_grad():
        for ids, offsets, labels in valid_loader:
            correct += (model(ids, offsets).argmax(dim=1) == labels).sum().item()
    print(f"epoch {epoch}: valid accuracy {correct / len(valid_df):.4f}")


# In[7]:


torch.save({"model": model.state_dict(), "vocab": vocab}, "reviews_bag.pt")
