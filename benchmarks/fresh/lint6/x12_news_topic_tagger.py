"""Tag news articles with one or more of 18 desk topics (politics, markets, climate, ...)
by fine-tuning a DistilRoBERTa encoder with a linear head."""

import json

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModel, AutoTokenizer, get_linear_schedule_with_warmup

MODEL_NAME = "distilroberta-base"
TOPICS = ["politics", "markets", "climate", "health", "tech", "sport", "culture", "science",
          "crime", "education", "energy", "transport", "housing", "labour", "defence",
          "agriculture", "media", "religion"]
TOPIC_INDEX = {t: i for i, t in enumerate(TOPICS)}


class Articles(Dataset):
    def __init__(self, path, tokenizer, max_len=384):
        with open(path) as f:
            self.rows = [json.loads(line) for line in f]
        self.tok, self.max_len = tokenizer, max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        enc = self.tok(row["headline"], row["body"], truncation="only_second", max_length=self.max_len,
                       padding="max_length", return_tensors="pt")
        target = torch.zeros(len(TOPICS))
        for topic in row["topics"]:
            target[TOPIC_INDEX[topic]] = 1.0
        return enc["input_ids"][0], enc["attention_mask"][0], target


class TopicTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(MODEL_NAME)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(self.encoder.config.hidden_size, len(TOPICS))

    def forward(self, input_ids, attention_mask):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.head(self.drop(hidden[:, 0]))


def evaluate(model, loader, device, threshold=0.5):
    model.eval()
    tp = fp = fn = 0
    with torch.no_grad():
        for ids, mask, target in loader:
            logits = model(ids.to(device), mask.to(device))
            pred = (torch.sigmoid(logits) > threshold).float().cpu()
            tp += (pred * target).sum().item()
            fp += (pred * (1 - target)).sum().item()
            fn += ((1 - pred) * target).sum().item()
    return 2 * tp / max(2 * tp + fp + fn, 1)


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)
    train_dl = DataLoader(Articles("data/news_train.jsonl", tokenizer), batch_size=16, shuffle=True)
    dev_dl = DataLoader(Articles("data/news_dev.jsonl", tokenizer), batch_size=64)

    model = TopicTagger().to(device)
    loss_fn = nn.CrossEntropyLoss()
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if n.endswith(no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=3e-5)
    epochs = 4
    scheduler = get_linear_schedule_with_warmup(optimizer, int(0.06 * epochs * len(train_dl)),
                                                epochs * len(train_dl))
    for epoch in range(epochs):
        model.train()
        for step, (ids, mask, target) in enumerate(train_dl):
            ids, mask, target = ids.to(device), mask.to(device), target.to(device)
            loss = loss_fn(model(ids, mask), target)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            if step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        print(f"epoch {epoch}: dev micro-F1 {evaluate(model, dev_dl, device):.4f}")

    torch.save(model.state_dict(), "topic_tagger.pt")


if __name__ == "__main__":
    main()
