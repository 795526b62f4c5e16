"""Multi-GPU fine-tuning of bert-base-uncased on a support-ticket intent dataset.

Launch with: torchrun --nproc_per_node=4 w24_bert_finetune_trainer.py --data data/tickets
"""

import argparse
import os

import torch
import torch.distributed as dist
from datasets import load_from_disk
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding
from transformers import get_linear_schedule_with_warmup


def setup():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return dist.get_rank(), dist.get_world_size(), torch.device("cuda", local_rank)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--model", default="bert-base-uncased")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--out", default="checkpoints/intent_bert.pt")
    args = ap.parse_args()
    rank, world, device = setup()

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    data = load_from_disk(args.data)
    data = data.map(lambda b: tokenizer(b["text"], truncation=True, max_length=128), batched=True)
    data = data.remove_columns(["text"]).rename_column("intent", "labels").with_format("torch")
    collate = DataCollatorWithPadding(tokenizer)
    train_sampler = DistributedSampler(data["train"], num_replicas=world, rank=rank, shuffle=True, seed=17)
    val_sampler = DistributedSampler(data["validation"], num_replicas=world, rank=rank, shuffle=False)
    train_loader = DataLoader(data["train"], batch_size=args.batch_size, sampler=train_sampler,
                              collate_fn=collate, num_workers=4, pin_memory=True)
    val_loader = DataLoader(data["validation"], batch_size=128, sampler=val_sampler, collate_fn=collate)

    num_labels = int(data["train"]["labels"].max()) + 1
    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=num_labels).to(device)
    model = DDP(model, device_ids=[device.index])
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if n.endswith(no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=args.lr)
    total_steps = args.epochs * len(train_loader)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(0.06 * total_steps), total_steps)

    for epoch in range(args.epochs):
        model.train()
        for step, batch in enumerate(train_loader):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            loss = model(**batch).loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            if rank == 0 and step % 100 == 0:
                print(f"epoch {epoch} step {step}/{len(train_loader)} loss {loss.item():.4f}")

        model.eval()
        correct = torch.zeros(2, device=device)
        with torch.no_grad():
            for batch in val_loader:
                batch = {k: v.to(device) for k, v in batch.items()}
                preds = model(**batch).logits.argmax(dim=-1)
                correct[0] += (preds == batch["labels"]).sum()
                correct[1] += batch["labels"].numel()
        dist.all_reduce(correct)
        if rank == 0:
            print(f"epoch {epoch}: validation accuracy {(correct[0] / correct[1]).item():.4f}")
            os.makedirs(os.path.dirname(args.out), exist_ok=True)
            torch.save(model.module.state_dict(), args.out)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
