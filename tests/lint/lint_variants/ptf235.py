"""PTF235 (attention-mask-ignored): a padding mask handed in, and attention or pooling run without it."""

PITFALL = {
    "mean_pool_ignores_attention_mask": """
import torch
def mean_pooling(token_embeddings, attention_mask):
    return token_embeddings.mean(dim=1)
""",
    "encoder_without_padding_mask_mask_only_pools": """
import torch
from torch import nn
class TopicTagger(nn.Module):
    def __init__(self, vocab, n_topics, d=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d, padding_idx=0)
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.out = nn.Linear(d, n_topics)
    def forward(self, ids, attention_mask):
        h = self.encoder(self.tok(ids))
        m = attention_mask.unsqueeze(-1).float()
        return self.out((h * m).sum(1) / m.sum(1).clamp(min=1.0))
""",
    "self_attention_drops_key_padding_mask": """
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm = nn.LayerNorm(d)
    def forward(self, x, key_padding_mask=None):
        h = self.norm(x)
        out, _ = self.attn(h, h, h, need_weights=False)
        return x + out
""",
    "sdpa_with_mask_parameter_unread": """
import torch
import torch.nn.functional as F
from torch import nn
class SelfAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
    def forward(self, x, mask=None):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)
        return y.transpose(1, 2).reshape(b, n, d)
""",
    "encoder_layer_called_bare": """
import torch
from torch import nn
class SetEncoder(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=d, nhead=2, batch_first=True)
    def forward(self, points, src_key_padding_mask):
        return self.layer(points).max(dim=1).values
""",
    "sentence_embedding_torch_mean": """
import torch
def embed(last_hidden_state, input_mask):
    return torch.mean(last_hidden_state, dim=1)
""",
}

NEAR_MISS = {
    "masked_mean_pool": """
import torch
def mean_pooling(token_embeddings, attention_mask):
    m = attention_mask.unsqueeze(-1).to(token_embeddings.dtype)
    return (token_embeddings * m).sum(dim=1) / m.sum(dim=1).clamp(min=1e-9)
""",
    "encoder_given_the_padding_mask": """
import torch
from torch import nn
class TopicTagger(nn.Module):
    def __init__(self, vocab, d=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d, padding_idx=0)
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
    def forward(self, ids, attention_mask):
        h = self.encoder(self.tok(ids), src_key_padding_mask=~attention_mask.bool())
        m = attention_mask.unsqueeze(-1).float()
        return (h * m).sum(1) / m.sum(1).clamp(min=1.0)
""",
    "mask_handed_to_a_sublayer": """
import torch
from torch import nn
class Stack(nn.Module):
    def __init__(self, blocks, d):
        super().__init__()
        self.blocks = blocks
        self.attn = nn.MultiheadAttention(d, 2, batch_first=True)
    def forward(self, x, mask):
        for block in self.blocks:
            x = block(x, mask)
        return self.attn(x, x, x)[0]
""",
    "causal_decoder_with_its_own_mask": """
import torch
from torch import nn
class Decoder(nn.Module):
    def __init__(self, d):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d, 4, batch_first=True)
        self.body = nn.TransformerEncoder(layer, 2)
    def forward(self, x, padding_mask):
        causal = nn.Transformer.generate_square_subsequent_mask(x.size(1))
        return self.body(x, mask=causal, src_key_padding_mask=padding_mask, is_causal=True)
""",
    "mask_ratio_is_not_a_mask": """
import torch
def random_masking(x, mask_ratio):
    keep = int(x.size(1) * (1 - mask_ratio))
    noise = torch.rand(x.size(0), x.size(1))
    idx = noise.argsort(dim=1)[:, :keep]
    return torch.gather(x, 1, idx.unsqueeze(-1).expand(-1, -1, x.size(2))).mean(dim=1)
""",
    "mask_passed_through_kwargs": """
from torch import nn
class Wrapper(nn.Module):
    def __init__(self, inner, d):
        super().__init__()
        self.inner = inner
        self.attn = nn.MultiheadAttention(d, 2)
    def forward(self, x, attention_mask=None, **kwargs):
        h = self.inner(x, attention_mask=attention_mask, **kwargs)
        return self.attn(h, h, h)[0]
""",
    "lengths_used_to_pack": """
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(8, 8, batch_first=True)
    def forward(self, x, lengths):
        out, _ = self.rnn(pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False))
        out, _ = pad_packed_sequence(out, batch_first=True)
        return out.sum(dim=1) / lengths.unsqueeze(-1)
""",
}

SEEN = {
    "mean_pool_ignores_attention_mask": "https://github.com/jsboige/CoursIA/issues/15045 (last_hidden_state.mean(dim=1) with padding=True and no attention_mask: an embedding depends on its batch neighbours)",
    "sentence_embedding_torch_mean": "https://github.com/autoliuweijie/BERT-whitening-pytorch/issues/13 ((hidden_states[-1] + hidden_states[1]).mean(dim=1) ignoring att_mask)",
    "self_attention_drops_key_padding_mask": "https://github.com/facebookresearch/fairseq/issues/537 (a decoder layer's self_attn_padding_mask never reaches self-attention)",
    "encoder_without_padding_mask_mask_only_pools": "https://github.com/pytorch/pytorch/issues/22374 (TransformerEncoder attends to padded positions unless given a key padding mask) and benchmarks/fresh/lint3/u08_news_multilabel.py (tuning material)",
    "masked_mean_pool": "https://github.com/huggingface/sentence-transformers/issues/230 (sum(token_embeddings * input_mask_expanded, 1) / mask sum: the masked mean)",
}

# fresh set 7's held-out half (a miss at its first score; tuning material since): the mask reaches the
# encoder, which hides the pads from attention, but the mean over the sequence still averages their outputs
PITFALL["mask_given_to_the_encoder_not_to_the_mean"] = """
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, batch_first=True), 2)
    def forward(self, x, attention_mask):
        h = self.encoder(x, src_key_padding_mask=attention_mask == 0)
        return h.mean(dim=1)
"""
NEAR_MISS["mask_given_to_the_encoder_and_to_the_mean"] = """
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 4, batch_first=True), 2)
    def forward(self, x, attention_mask):
        h = self.encoder(x, src_key_padding_mask=attention_mask == 0)
        m = attention_mask.unsqueeze(-1).float()
        return (h * m).sum(dim=1) / m.sum(dim=1).clamp(min=1)
"""
SEEN["mask_given_to_the_encoder_not_to_the_mean"] = (
    "benchmarks/fresh/lint7 y02_headline_topic_classifier.py; the masked mean of UKPLab/sentence-transformers "
    "(models/Pooling.py: token embeddings multiplied by the expanded attention mask, summed, divided by the "
    "mask's sum), the form the fix takes"
)
NEAR_MISS["mask_given_to_a_model_of_its_own_then_mean"] = """
import torch
from torch import nn
class Classifier(nn.Module):
    def __init__(self, backbone, d=64):
        super().__init__()
        self.backbone = backbone  # a model of its own: what it outputs at the pads is its business
        self.head = nn.Linear(d, 2)
    def forward(self, input_ids, attention_mask):
        h = self.backbone(input_ids, attention_mask=attention_mask)
        return self.head(h.mean(dim=1))
"""
