"""PTF255 (masked-fill-uint8-mask): masked_fill and its kin given a uint8 (byte) mask, an error from 2.1."""

PITFALL = {
    "triu_of_new_ones_byte_sliced": """
import torch
def scores_with_memory(attn_score, word_emb, qlen, klen, mlen):
    dec_attn_mask = torch.triu(word_emb.new_ones(qlen, klen), diagonal=1 + mlen).byte()[:, :, None]
    return attn_score.float().masked_fill(dec_attn_mask[:, :, :, None], -float("inf"))
""",
    "one_minus_byte_mask": """
import torch
def pointer_scores(logits, visited):
    mask = torch.zeros(logits.size(), dtype=torch.uint8)
    mask[visited] = 1
    one_minus_mask = 1 - mask
    return logits.masked_fill(one_minus_mask, float("-inf"))
""",
    "registered_byte_buffer": """
import torch
from torch import nn
class CausalSelfAttention(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("causal", torch.tril(torch.ones(n, n)).to(torch.uint8).view(1, 1, n, n))
    def forward(self, att, t):
        return att.masked_fill_(1 - self.causal[:, :, :t, :t], float("-inf"))
""",
    "bytetensor_lengths_mask": """
import torch
def pad_mask(lengths, max_len):
    mask = torch.ByteTensor(len(lengths), max_len).zero_()
    for i, n in enumerate(lengths):
        mask[i, n:] = 1
    return mask
def mask_scores(scores, lengths):
    mask = torch.ByteTensor(scores.size()).zero_()
    return scores.masked_fill_(mask, -1e9)
""",
    "masked_select_type_byte": """
import torch
def gather_valid(pred, target):
    valid = (target != 255).type(torch.ByteTensor)
    return torch.masked_select(pred, valid), target.masked_select(valid)
""",
    "mask_passed_to_helper": """
import torch
def fill(scores, mask):
    return scores.masked_fill(mask, 0.0)
def run(scores, n):
    keep = torch.eye(n, dtype=torch.uint8)
    return fill(scores, keep)
""",
}

NEAR_MISS = {
    "byte_then_bool": """
import torch
def causal(scores, n):
    future = torch.triu(torch.ones(n, n, dtype=torch.uint8), diagonal=1).bool()
    return scores.masked_fill(future, float("-inf"))
""",
    "compared_byte_mask": """
import torch
from torch import nn
class Attn(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones(n, n)).byte().view(1, 1, n, n))
    def forward(self, att, t):
        return att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
""",
    "bool_dtype_factory": """
import torch
def pad(scores, lengths, n):
    mask = torch.zeros(len(lengths), n, dtype=torch.bool)
    for i, k in enumerate(lengths):
        mask[i, k:] = True
    return scores.masked_fill(mask.unsqueeze(1), -1e4)
""",
    "byte_image_not_a_mask": """
import torch
def quantize(img, invalid):
    pixels = (img * 255).to(torch.uint8)
    return pixels.masked_fill(invalid, 0)
""",
    "byte_mask_indexing_only": """
import torch
def select(x):
    keep = (x > 0).byte()
    return x[keep.bool()], keep.sum()
""",
}

SEEN = {
    "triu_of_new_ones_byte_sliced": "https://github.com/kimiyoung/transformer-xl/issues/115 (dec_attn_mask = torch.triu(word_emb.new_ones(qlen, klen), diagonal=1+mlen).byte()[:,:,None], then masked_fill; the answer: .bool())",
    "one_minus_byte_mask": "https://github.com/ast0414/pointer-networks-pytorch/issues/1 and PR #2 (one_minus_mask built as torch.uint8 and given to masked_fill)",
    "bytetensor_lengths_mask": "https://github.com/by2101/OpenASR/pull/9 (a byte padding mask to masked_fill_ printing the deprecation warning all through training)",
    "masked_select_type_byte": "https://github.com/pytorch/pytorch/pull/96112 (masked_select: byte masks removed in 2.1)",
    "compared_byte_mask": "karpathy/minGPT-style causal masks: a registered tril buffer compared with == 0 (bool) before masked_fill",
}

# The mask made by a helper of the file and handed down through the blocks' forward calls (a ModuleList of blocks
# built from a generator, each calling its attention module) to the masked_fill.
_STACK = """
import math
import torch
from torch import nn
def causal_mask(n, device):
    return torch.triu(torch.ones(n, n, dtype={dtype}, device=device), diagonal=1)
class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
    def forward(self, x, mask):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])).masked_fill(mask, float("-inf"))
        return scores.softmax(-1) @ v
class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attn = Attention(dim)
        self.norm = nn.LayerNorm(dim)
    def forward(self, x, mask):
        return x + self.attn(self.norm(x), mask)
class Decoder(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
    def forward(self, x):
        mask = causal_mask(x.shape[1], x.device)
        for block in self.blocks:
            x = block(x, mask)
        return x
"""
PITFALL["byte_mask_from_a_helper_down_the_blocks"] = _STACK.format(dtype="torch.uint8")
NEAR_MISS["bool_mask_from_a_helper_down_the_blocks"] = _STACK.format(dtype="torch.bool")
SEEN["byte_mask_from_a_helper_down_the_blocks"] = (
    "fresh set 15's j23 (tuning half): causal_mask() building torch.triu(torch.ones(n, n, dtype=torch.uint8)), "
    "passed from the model's forward through each block of a ModuleList to the attention's masked_fill; the same "
    "byte triu mask in public GPT code (find_string 'dtype=torch.uint8), diagonal=1')"
)
SEEN["bool_mask_from_a_helper_down_the_blocks"] = "the same decoder with the mask built as bool, the fix"
