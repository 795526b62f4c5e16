"""Evaluate fine-tuned sentiment checkpoints on the held-out review set and write a report."""

import argparse
import json
from pathlib import Path

import torch
from sklearn.metrics import classification_report, f1_score, roc_auc_score
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from reviews import load_reviews

LABELS = ["negative", "positive"]


def make_loader(tokenizer, texts, labels, batch_size, max_length):
    def collate(rows):
        batch = tokenizer(
            [t for t, _ in rows],
            padding=True,
            truncation=True,
            max_length=max_length,
            return_tensors="pt",
        )
        batch["labels"] = torch.tensor([y for _, y in rows])
        return batch

    return DataLoader(list(zip(texts, labels)), batch_size=batch_size, shuffle=False, collate_fn=collate)


def predict(model, loader, device):
    model.eval()
    preds, scores, golds = [], [], []
    for batch in loader:
        labels = batch.pop("labels")
        inputs = {k: v.to(device) for k, v in batch.items()}
        logits = model(**inputs).logits
        preds.extend(logits.argmax(dim=-1).tolist())
        scores.extend(logits.softmax(dim=-1)[:, 1].tolist())
        golds.extend(labels.tolist())
    return preds, scores, golds


def evaluate_checkpoint(path, texts, labels, args, device):
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).to(device)
    loader = make_loader(tokenizer, texts, labels, args.batch_size, args.max_length)
    preds, scores, golds = predict(model, loader, device)
    return {
        "checkpoint": str(path),
        "macro_f1": f1_score(golds, preds, average="macro"),
        "auc": roc_auc_score(golds, scores),
        "report": classification_report(golds, preds, target_names=LABELS, output_dict=True),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoints", nargs="+", type=Path)
    parser.add_argument("--split", default="test")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--out", type=Path, default=Path("eval_report.json"))
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    texts, labels = load_reviews(args.split)
    print(f"{len(texts)} reviews, {sum(labels)} positive")

    results = []
    for ckpt in args.checkpoints:
        res = evaluate_checkpoint(ckpt, texts, labels, args, device)
        print(f"{ckpt.name:40s} macro-F1 {res['macro_f1']:.4f}  AUC {res['auc']:.4f}")
        results.append(res)
        if device.type == "cuda":
            torch.cuda.empty_cache()

    best = max(results, key=lambda r: r["macro_f1"])
    print(f"best: {best['checkpoint']}")
    args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
