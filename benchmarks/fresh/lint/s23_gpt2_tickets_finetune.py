"""Causal LM fine-tuning (GPT-2 small) on a support-ticket corpus with gradient accumulation."""
import math

import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling
from datasets import load_dataset

MODEL = "gpt2"
MICRO_BATCH = 4
ACCUM_STEPS = 8  # effective batch 32
MAX_NORM = 1.0
LR = 5e-5


def build_loader(tokenizer):
    ds = load_dataset("json", data_files={"train": "tickets.jsonl"})["train"]
    ds = ds.map(lambda b: tokenizer(b["text"], truncation=True, max_length=512), batched=True, remove_columns=["text"])
    collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)
    return DataLoader(ds, batch_size=MICRO_BATCH, shuffle=True, collate_fn=collator)


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(MODEL).to(device)
    loader = build_loader(tokenizer)

    no_decay = ("bias", "ln_", "LayerNorm")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=LR)
    total_updates = math.ceil(len(loader) / ACCUM_STEPS) * 2
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=LR, total_steps=total_updates, pct_start=0.1)

    model.train()
    update = 0
    for epoch in range(2):
        optimizer.zero_grad()
        for i, batch in enumerate(loader):
            batch = {k: v.to(device) for k, v in batch.items()}
            out = model(**batch)
            out.loss.backward()
            if (i + 1) % ACCUM_STEPS == 0:
                torch.nn.utils.clip_grad_norm(model.parameters(), MAX_NORM)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
                update += 1
                if update % 20 == 0:
                    print(f"epoch {epoch} update {update} loss {out.loss.item():.3f} ppl {math.exp(out.loss.item()):.1f}")
    model.save_pretrained("gpt2-tickets")
    tokenizer.save_pretrained("gpt2-tickets")


if __name__ == "__main__":
    main()
