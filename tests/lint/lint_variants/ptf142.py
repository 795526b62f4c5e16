"""PTF142 (mha-mismatched-mask-types): a float attention mask beside a bool key padding mask."""

PITFALL = {
    "tutorial_causal_mask_and_pad_comparison": """
import torch
from torch import nn
def causal(n):
    mask = (torch.triu(torch.ones(n, n)) == 1).transpose(0, 1)
    return mask.float().masked_fill(mask == 0, float("-inf")).masked_fill(mask == 1, float(0.0))
class Decoder(nn.Module):
    def __init__(self, d, pad):
        super().__init__()
        self.pad = pad
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
    def forward(self, x, tokens):
        attn_mask = causal(x.size(1)).to(x.device)
        pad_mask = tokens == self.pad
        out, _ = self.attn(x, x, x, attn_mask=attn_mask, key_padding_mask=pad_mask)
        return out
""",
    "transformer_generate_mask": """
import torch
import torch.nn as nn
model = nn.Transformer(d_model=32, nhead=4, batch_first=True)
def step(src, tgt, src_tokens, tgt_tokens, pad_id):
    tgt_mask = model.generate_square_subsequent_mask(tgt.size(1))
    return model(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=src_tokens.eq(pad_id) == 1,
                 tgt_key_padding_mask=(tgt_tokens == pad_id))
""",
    "encoder_with_zeros_mask": """
import torch
from torch import nn
layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, batch_first=True)
encoder = nn.TransformerEncoder(layer, num_layers=2)
def encode(x, lengths):
    n = x.size(1)
    mask = torch.zeros(n, n)
    padding = torch.arange(n)[None, :] >= lengths[:, None]
    return encoder(x, mask=mask, src_key_padding_mask=padding)
""",
    "positional_masks": """
import torch
from torch import nn
attn = nn.MultiheadAttention(8, 2)
def run(q, k, v, lengths):
    kpm = torch.arange(k.size(0))[None, :] >= lengths[:, None]
    bias = torch.full((q.size(0), k.size(0)), float("-inf")).triu(1)
    return attn(q, k, v, kpm, True, bias)
""",
    "decoder_layer_bool_causal_float_padding": """
import torch
from torch import nn
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(d_model=16, nhead=2, batch_first=True)
    def forward(self, tgt, memory, tgt_pad):
        n = tgt.size(1)
        causal = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        padding = torch.zeros(tgt_pad.shape, dtype=torch.float).masked_fill(tgt_pad, float("-inf"))
        return self.layer(tgt, memory, tgt_mask=causal, tgt_key_padding_mask=padding)
""",
    "self_method_float_mask": """
import torch
from torch import nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
    def generate_square_subsequent_mask(self, sz):
        return torch.triu(torch.full((sz, sz), float("-inf")), diagonal=1)
    def forward(self, x, pad):
        m = self.generate_square_subsequent_mask(x.size(1))
        return self.attn(x, x, x, attn_mask=m, key_padding_mask=pad.bool())[0]
""",
}

NEAR_MISS = {
    "both_bool": """
import torch
from torch import nn
attn = nn.MultiheadAttention(8, 2, batch_first=True)
def run(x, tokens, pad):
    n = x.size(1)
    causal = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    return attn(x, x, x, attn_mask=causal, key_padding_mask=tokens == pad)
""",
    "both_float": """
import torch
from torch import nn
model = nn.Transformer(d_model=32, nhead=4)
def step(src, tgt, pad):
    tgt_mask = model.generate_square_subsequent_mask(tgt.size(0))
    padding = torch.zeros(pad.shape).masked_fill(pad, float("-inf"))
    return model(src, tgt, tgt_mask=tgt_mask, tgt_key_padding_mask=padding)
""",
    "padding_mask_of_unknown_type": """
import torch
from torch import nn
attn = nn.MultiheadAttention(8, 2, batch_first=True)
def run(x, key_padding_mask):
    mask = torch.triu(torch.full((x.size(1), x.size(1)), float("-inf")), diagonal=1)
    return attn(x, x, x, attn_mask=mask, key_padding_mask=key_padding_mask)
""",
    "user_attention_with_its_own_semantics": """
import torch
from torch import nn
class MyAttention(nn.Module):
    def forward(self, x, attn_mask=None, key_padding_mask=None):
        return x
attn = MyAttention()
def run(x, tokens):
    bias = torch.zeros(x.size(1), x.size(1))
    return attn(x, attn_mask=bias, key_padding_mask=tokens == 0)
""",
    "memory_mask_and_tgt_padding_are_not_a_pair": """
import torch
from torch import nn
layer = nn.TransformerDecoderLayer(d_model=16, nhead=2, batch_first=True)
def run(tgt, memory, tgt_tokens):
    m = torch.zeros(tgt.size(1), memory.size(1))
    n = tgt.size(1)
    causal = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    return layer(tgt, memory, tgt_mask=causal, memory_mask=m, tgt_key_padding_mask=tgt_tokens == 0)
""",
}

PITFALL["masks_handed_to_blocks_of_a_module_list"] = """
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mha = nn.MultiheadAttention(d, 4, batch_first=True)
    def forward(self, h, future, padded):
        out, _ = self.mha(h, h, h, attn_mask=future, key_padding_mask=padded)
        return h + out
class Decoder(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.layers = nn.ModuleList([Block(d) for _ in range(n)])
    def forward(self, h, lengths):
        t = h.size(1)
        future, padded = torch.triu(torch.full((t, t), float('-inf')), 1), torch.arange(t)[None, :] >= lengths[:, None]
        for layer in self.layers:
            h = layer(h, future, padded)
        return h
"""
NEAR_MISS["bool_masks_handed_to_blocks_of_a_module_list"] = """
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mha = nn.MultiheadAttention(d, 4, batch_first=True)
    def forward(self, h, future, padded):
        out, _ = self.mha(h, h, h, attn_mask=future, key_padding_mask=padded)
        return h + out
class Decoder(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.layers = nn.ModuleList([Block(d) for _ in range(n)])
    def forward(self, h, lengths):
        t = h.size(1)
        future, padded = torch.ones(t, t, dtype=torch.bool).triu(1), torch.arange(t)[None, :] >= lengths[:, None]
        for layer in self.layers:
            h = layer(h, future, padded)
        return h
"""

SEEN = {
    "masks_handed_to_blocks_of_a_module_list": "benchmarks/fresh/lint14 n28_lyrics_decoder_lm.py (tuning half, missed at its first run: the masks built in the model's forward, handed to each DecoderBlock of a ModuleList, which calls nn.MultiheadAttention)",
    "tutorial_causal_mask_and_pad_comparison": "https://github.com/wfondrie/depthcharge/pull/30 (the old tutorial's 0/-inf target mask beside a bool padding mask; made bool to silence the warning, Noble-Lab/casanovo#174)",
    "self_method_float_mask": "https://github.com/baudm/parseq/issues/130 (PARSeq's permutation masks built with torch.zeros and float('-inf'), its padding mask (tgt_in == pad_id) | ...)",
    "decoder_layer_bool_causal_float_padding": "https://github.com/pytorch/pytorch/issues/96103 (TransformerDecoder masks and the mismatched-mask warning)",
    "both_bool": "https://github.com/pytorch/pytorch/issues/96103 (bool tgt_mask with bool padding masks)",
}

NEAR_MISS["subsequent_mask_asked_for_as_bool"] = """
import torch
from torch import nn
PAD = 0
class Decoder(nn.Module):
    def __init__(self, vocab, d_model=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_model, padding_idx=PAD)
        layer = nn.TransformerDecoderLayer(d_model, 8, batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, 3)
    def forward(self, tgt, memory):
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.size(1), device=tgt.device, dtype=torch.bool)
        return self.decoder(self.emb(tgt), memory, tgt_mask=causal, tgt_key_padding_mask=tgt == PAD)
"""
SEEN["subsequent_mask_asked_for_as_bool"] = (
    "benchmarks/fresh/lint5/w19_translation_transformer.py (fresh set 5's tuning half: "
    "generate_square_subsequent_mask(..., dtype=torch.bool) beside a bool key padding mask)"
)
