"""PTF131 (mha-uint8-attn-mask): a uint8 attention mask, refused since torch 2.0."""
PITFALL = {
    "byte_method": "import torch\nimport torch.nn as nn\nmha = nn.MultiheadAttention(16, 4)\ndef attend(q, k, v, L):\n    mask = torch.triu(torch.ones(L, L), diagonal=1).byte()\n    return mha(q, k, v, attn_mask=mask)\n",
    "dtype_uint8_factory": "import torch\nfrom torch import nn\nmha = nn.MultiheadAttention(8, 2, batch_first=True)\nmask = torch.zeros(4, 4, dtype=torch.uint8)\nout, _ = mha(q, k, v, attn_mask=mask)\n",
    "to_uint8_inline": "import torch\nimport torch.nn as nn\nclass Enc(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.layer = nn.TransformerEncoderLayer(32, 4)\n    def forward(self, src, mask):\n        return self.layer(src, src_mask=mask.to(torch.uint8))\n",
    "tgt_mask_transformer": "import torch\nimport torch.nn as nn\ndef decode(src, tgt, n):\n    model = nn.Transformer(d_model=32, nhead=4)\n    tgt_mask = (torch.triu(torch.ones(n, n)) == 1).transpose(0, 1).byte()\n    return model(src, tgt, tgt_mask=tgt_mask)\n",
    "bytetensor": "import torch\nimport torch.nn.functional as F\nm = torch.ByteTensor([[0, 1], [0, 0]])\ny = F.scaled_dot_product_attention(x, x, x, attn_mask=m)\n",
}
# the same masks handed to an object whose type the file does not show: --preview
PREVIEW = {
    "unknown_attention_parameter": "import torch\n\ndef attend(mha, q, k, v, L):\n    mask = torch.triu(torch.ones(L, L), diagonal=1).byte()\n    return mha(q, k, v, attn_mask=mask)\n",
}
NEAR_MISS = {
    "bool_mask": "import torch\n\nmask = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)\nout = mha(q, k, v, attn_mask=mask)\n",
    "float_mask": "import torch.nn as nn\n\nmask = nn.Transformer.generate_square_subsequent_mask(8)\nout = model(src, tgt, tgt_mask=mask)\n",
    "byte_image_not_mask": "import torch\n\nimg = (x * 255).byte()\nout = model(img, attn_mask=None)\n",
    "own_attention_takes_bytes": "import torch\nimport torch.nn as nn\nclass MultiHeadedAttention(nn.Module):\n    def forward(self, q, k, v, attn_mask=None):\n        scores = q @ k.transpose(-1, -2)\n        return torch.where(attn_mask > 0, scores, torch.full_like(scores, -1e9)).softmax(-1) @ v\ndef step(q, k, v, n):\n    att = MultiHeadedAttention()\n    return att(q, k, v, attn_mask=torch.ones(n, n, dtype=torch.uint8))\n",
}
SEEN = {name: "not found by search; the byte-mask spellings of pre-1.2 Transformer tutorials" for name in PITFALL}
SEEN.update({
    "own_attention_takes_bytes": "joeynmt test/unit/test_decoder.py (a uint8 mask handed to joeynmt's own attention, which tests mask > 0; round 17's tuning half: wrong by default)",
    "tgt_mask_transformer": "https://github.com/kimiyoung/transformer-xl/issues/115 (dec_attn_mask = torch.triu(word_emb.new_ones(qlen, klen), diagonal=1+mlen).byte())",
    "byte_method": "https://github.com/huggingface/transformers/pull/21384 (uint8 masks replaced by bool)",
})

# A causal mask registered as a buffer, made as bytes with .to(torch.uint8) and sliced to the sequence at each
# call: read through the buffer and the slice (the mask reading PTF255 uses, shared/byte_masks.py).
_BUFFER = """
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self, dim, heads, max_len):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        future = torch.triu(torch.ones(max_len, max_len), diagonal=1).to({dtype})
        self.register_buffer("future", future, persistent=False)
    def forward(self, x):
        t = x.size(1)
        out, _ = self.attn(x, x, x, attn_mask=self.future[:t, :t], need_weights=False)
        return x + out
"""
PITFALL["byte_buffer_sliced_to_the_sequence"] = _BUFFER.format(dtype="torch.uint8")
NEAR_MISS["bool_buffer_sliced_to_the_sequence"] = _BUFFER.format(dtype="torch.bool")
SEEN["byte_buffer_sliced_to_the_sequence"] = (
    "fresh set 16's h09 (tuning half): Block registers triu(ones).to(torch.uint8) as the buffer 'future' and "
    "passes self.future[:T, :T] as attn_mask to nn.MultiheadAttention"
)
SEEN["bool_buffer_sliced_to_the_sequence"] = "the same block with the buffer made as bool, the fix"
