"""Distil a fine-tuned BERT-base intent classifier into a 4-layer student.

Loss = alpha * soft-target loss at temperature T + (1 - alpha) * cross-entropy on the labels.
"""

import torch
import torch.nn.functional as F
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

TEACHER = "checkpoints/bert-base-clinc150"
STUDENT_INIT = "google/bert_uncased_L-4_H-512_A-8"
TEMPERATURE, ALPHA = 4.0, 0.7
EPOCHS, BATCH, LR = 5, 64, 1e-4


def soft_target_loss(student_logits, teacher_logits, temperature):
    student = F.softmax(student_logits / temperature, dim=-1)
    teacher = F.softmax(teacher_logits / temperature, dim=-1)
    return F.kl_div(student, teacher, reduction="batchmean") * temperature ** 2


def make_loader(split, tokenizer, shuffle):
    ds = load_dataset("clinc_oos", "plus", split=split)
    ds = ds.map(lambda b: tokenizer(b["text"], truncation=True, max_length=64, padding="max_length"),
                batched=True)
    ds = ds.rename_column("intent", "labels")
    ds.set_format("torch", columns=["input_ids", "attention_mask", "labels"])
    return DataLoader(ds, batch_size=BATCH, shuffle=shuffle)


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer = AutoTokenizer.from_pretrained(TEACHER)
    teacher = AutoModelForSequenceClassification.from_pretrained(TEACHER).to(device).eval()
    teacher.requires_grad_(False)
    student = AutoModelForSequenceClassification.from_pretrained(
        STUDENT_INIT, num_labels=teacher.config.num_labels).to(device)

    train_dl = make_loader("train", tokenizer, shuffle=True)
    val_dl = make_loader("validation", tokenizer, shuffle=False)
    optimizer = torch.optim.AdamW(student.parameters(), lr=LR, weight_decay=0.01)
    total_steps = EPOCHS * len(train_dl)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(0.06 * total_steps), total_steps)

    for epoch in range(EPOCHS):
        student.train()
        for batch in train_dl:
            batch = {k: v.to(device) for k, v in batch.items()}
            labels = batch.pop("labels")
            with torch.no_grad():
                t_logits = teacher(**batch).logits
            s_logits = student(**batch).logits
            loss = (ALPHA * soft_target_loss(s_logits, t_logits, TEMPERATURE)
                    + (1 - ALPHA) * F.cross_entropy(s_logits, labels))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
            optimizer.step()
            scheduler.step()

        student.eval()
        agree = correct = seen = 0
        with torch.no_grad():
            for batch in val_dl:
                batch = {k: v.to(device) for k, v in batch.items()}
                labels = batch.pop("labels")
                s_pred = student(**batch).logits.argmax(-1)
                t_pred = teacher(**batch).logits.argmax(-1)
                correct += (s_pred == labels).sum().item()
                agree += (s_pred == t_pred).sum().item()
                seen += labels.numel()
        print(f"epoch {epoch}: val acc {correct / seen:.4f}, agreement with teacher {agree / seen:.4f}")

    student.save_pretrained("checkpoints/bert-l4-clinc150-distilled")
    tokenizer.save_pretrained("checkpoints/bert-l4-clinc150-distilled")


if __name__ == "__main__":
    main()
