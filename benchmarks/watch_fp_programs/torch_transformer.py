# torch's own nn.Transformer (torch/nn/modules/transformer.py), trained here for the watch
# false-positive study. The model is torch's, unchanged; the loop around it is written for this
# study in the usual form of pytorch/examples language_translation/main.py (at commit 77f55b9, BSD
# 3-Clause License): token embeddings, a causal target mask from
# nn.Transformer.generate_square_subsequent_mask, padding masks, CrossEntropyLoss with
# ignore_index, Adam, clip_grad_norm_, then evaluation in eval() under no_grad and greedy decoding
# under inference_mode. The task is copying random token sequences.
import math

import torch
from torch import nn

torch.manual_seed(0)
VOCAB, PAD, BOS, D_MODEL, SRC_LEN, BATCH = 20, 0, 1, 32, 9, 8


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(VOCAB, D_MODEL)
        self.tgt_emb = nn.Embedding(VOCAB, D_MODEL)
        self.transformer = nn.Transformer(d_model=D_MODEL, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                          dim_feedforward=64, dropout=0.1, batch_first=True)
        self.generator = nn.Linear(D_MODEL, VOCAB)

    def forward(self, src, tgt):
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt.size(1))
        out = self.transformer(self.src_emb(src) * math.sqrt(D_MODEL), self.tgt_emb(tgt) * math.sqrt(D_MODEL),
                               tgt_mask=tgt_mask, src_key_padding_mask=src == PAD, tgt_key_padding_mask=tgt == PAD,
                               memory_key_padding_mask=src == PAD, tgt_is_causal=True)
        return self.generator(out)


def batch():
    src = torch.randint(2, VOCAB, (BATCH, SRC_LEN))
    src[:, -2:] = PAD  # some padding, as real batches have
    tgt = torch.cat([torch.full((BATCH, 1), BOS), src], dim=1)
    return src, tgt


model = Seq2Seq()
loss_fn = nn.CrossEntropyLoss(ignore_index=PAD)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)

for step in range(4):
    model.train()
    src, tgt = batch()
    tgt_input, tgt_out = tgt[:, :-1], tgt[:, 1:]
    logits = model(src, tgt_input)
    optimizer.zero_grad()
    loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()

    model.eval()
    with torch.no_grad():
        val_losses = []
        for _ in range(2):
            src, tgt = batch()
            logits = model(src, tgt[:, :-1])
            val_losses.append(loss_fn(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1)).item())
    print(f"step {step}: train {loss.item():.3f} valid {sum(val_losses) / len(val_losses):.3f}")

with torch.inference_mode():
    src, _ = batch()
    ys = torch.full((BATCH, 1), BOS)
    for _ in range(SRC_LEN):
        prob = model(src, ys)[:, -1].softmax(dim=-1)
        ys = torch.cat([ys, prob.argmax(dim=-1, keepdim=True)], dim=1)
    print("decoded", ys[0].tolist())
