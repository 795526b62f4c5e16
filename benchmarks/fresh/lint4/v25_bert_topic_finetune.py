"""Fine-tune bert-base-uncased on the 20-topic news dataset (CSV with text,label columns).

Effective batch 64 = 16 per step x 4 accumulation steps; linear warm-up then linear decay,
stepped once per optimizer update.
"""

import argparse

import pandas as pd
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup


class TopicDataset(Dataset):
    def __init__(self, frame, tokenizer, max_len):
        self.enc = tokenizer(frame["text"].tolist(), truncation=True, max_length=max_len)
        self.labels = frame["label"].astype("int64").tolist()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        item = {k: self.enc[k][i] for k in ("input_ids", "attention_mask")}
        item["labels"] = self.labels[i]
        return item


def collate_with(tokenizer):
    def collate(items):
        labels = torch.tensor([it.pop("labels") for it in items], dtype=torch.long)
        batch = tokenizer.pad(items, return_tensors="pt")
        batch["labels"] = labels
        return batch
    return collate


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if name.endswith("bias") or "LayerNorm" in name else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    loss_sum, correct, n = 0.0, 0, 0
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        loss_sum += F.cross_entropy(logits, batch["labels"], reduction="sum").item()
        correct += (logits.argmax(-1) == batch["labels"]).sum().item()
        n += batch["labels"].numel()
    return loss_sum / n, correct / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/news_train.csv")
    ap.add_argument("--valid", default="data/news_valid.csv")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--accum", type=int, default=4)
    ap.add_argument("--lr", type=float, default=3e-5)
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tok = AutoTokenizer.from_pretrained("bert-base-uncased")
    train_df, valid_df = pd.read_csv(args.train), pd.read_csv(args.valid)
    collate = collate_with(tok)
    train_dl = DataLoader(TopicDataset(train_df, tok, 256), batch_size=16, shuffle=True, collate_fn=collate)
    valid_dl = DataLoader(TopicDataset(valid_df, tok, 256), batch_size=64, collate_fn=collate)

    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=20).to(device)
    optimizer = torch.optim.AdamW(param_groups(model, 0.01), lr=args.lr)
    updates = args.epochs * ((len(train_dl) + args.accum - 1) // args.accum)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(0.1 * updates), updates)

    best_acc = 0.0
    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        for step, batch in enumerate(train_dl, start=1):
            batch = {k: v.to(device) for k, v in batch.items()}
            out = model(**batch)
            (out.loss / args.accum).backward()
            if step % args.accum == 0 or step == len(train_dl):
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
        val_loss, val_acc = evaluate(model, valid_dl, device)
        print(f"epoch {epoch}: valid loss {val_loss:.4f} acc {val_acc:.4f} lr {scheduler.get_last_lr()[0]:.2e}")
        if val_acc > best_acc:
            best_acc = val_acc
            model.save_pretrained("checkpoints/bert-news-best")
            tok.save_pretrained("checkpoints/bert-news-best")
    print(f"best valid accuracy {best_acc:.4f}")


if __name__ == "__main__":
    main()
