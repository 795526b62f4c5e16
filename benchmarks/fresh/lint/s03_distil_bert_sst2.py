"""Distil a fine-tuned BERT teacher into a 4-layer student on SST-2."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

TEACHER = "textattack/bert-base-uncased-SST-2"
STUDENT = "google/bert_uncased_L-4_H-256_A-4"


class DistillationLoss(nn.Module):
    def __init__(self, temperature=4.0, alpha=0.7):
        super().__init__()
        self.T = temperature
        self.alpha = alpha
        self.kd = nn.KLDivLoss(reduction="batchmean")
        self.ce = nn.CrossEntropyLoss()

    def forward(self, student_logits, teacher_logits, labels):
        student_probs = F.softmax(student_logits / self.T, dim=-1)
        teacher_probs = F.softmax(teacher_logits / self.T, dim=-1)
        soft = self.kd(student_probs, teacher_probs) * self.T**2
        hard = self.ce(student_logits, labels)
        return self.alpha * soft + (1 - self.alpha) * hard


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tok = AutoTokenizer.from_pretrained(TEACHER)
    raw = load_dataset("glue", "sst2")

    def encode(batch):
        return tok(batch["sentence"], truncation=True, max_length=64, padding="max_length")

    ds = raw.map(encode, batched=True).rename_column("label", "labels")
    ds.set_format("torch", columns=["input_ids", "attention_mask", "labels"])
    train_dl = DataLoader(ds["train"], batch_size=64, shuffle=True)

    teacher = AutoModelForSequenceClassification.from_pretrained(TEACHER).to(device).eval()
    student = AutoModelForSequenceClassification.from_pretrained(STUDENT, num_labels=2).to(device)
    criterion = DistillationLoss()
    optimizer = torch.optim.AdamW(student.parameters(), lr=5e-5)
    epochs = 3
    scheduler = get_linear_schedule_with_warmup(optimizer, 200, epochs * len(train_dl))

    for epoch in range(epochs):
        student.train()
        for step, batch in enumerate(train_dl):
            input_ids = batch["input_ids"]
            input_ids.to(device)
            mask = batch["attention_mask"].to(device)
            labels = batch["labels"].to(device)
            with torch.no_grad():
                t_logits = teacher(input_ids=input_ids, attention_mask=mask).logits
            s_logits = student(input_ids=input_ids, attention_mask=mask).logits
            loss = criterion(s_logits, t_logits, labels)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            if step % 200 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.2e}")
    student.save_pretrained("sst2-student")


if __name__ == "__main__":
    main()
