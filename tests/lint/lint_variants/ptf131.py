"""PTF131 (mha-uint8-attn-mask): a uint8 attention mask, refused since torch 2.0."""
PITFALL = {
    "byte_method": "import torch\n\ndef attend(mha, q, k, v, L):\n    mask = torch.triu(torch.ones(L, L), diagonal=1).byte()\n    return mha(q, k, v, attn_mask=mask)\n",
    "dtype_uint8_factory": "import torch\n\nmask = torch.zeros(4, 4, dtype=torch.uint8)\nout, _ = mha(q, k, v, attn_mask=mask)\n",
    "to_uint8_inline": "def forward(self, src, mask):\n    return self.encoder(src, mask=None, src_key_padding_mask=None, src_mask=None) if mask is None else self.layer(src, src_mask=mask.to(torch.uint8))\n",
    "tgt_mask_transformer": "import torch\n\ndef decode(model, src, tgt, n):\n    tgt_mask = (torch.triu(torch.ones(n, n)) == 1).transpose(0, 1).byte()\n    return model(src, tgt, tgt_mask=tgt_mask)\n",
    "bytetensor": "import torch\n\nm = torch.ByteTensor([[0, 1], [0, 0]])\ny = attn(x, x, x, attn_mask=m)\n",
}
NEAR_MISS = {
    "bool_mask": "import torch\n\nmask = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)\nout = mha(q, k, v, attn_mask=mask)\n",
    "float_mask": "import torch.nn as nn\n\nmask = nn.Transformer.generate_square_subsequent_mask(8)\nout = model(src, tgt, tgt_mask=mask)\n",
    "byte_image_not_mask": "import torch\n\nimg = (x * 255).byte()\nout = model(img, attn_mask=None)\n",
}
SEEN = {name: "not found by search; the byte-mask spellings of pre-1.2 Transformer tutorials" for name in PITFALL}
SEEN.update({
    "tgt_mask_transformer": "https://github.com/kimiyoung/transformer-xl/issues/115 (dec_attn_mask = torch.triu(word_emb.new_ones(qlen, klen), diagonal=1+mlen).byte())",
    "byte_method": "https://github.com/huggingface/transformers/pull/21384 (uint8 masks replaced by bool)",
})
