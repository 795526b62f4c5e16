"""FastSpeech-style non-autoregressive acoustic model: phonemes -> 80-bin mel frames.

Used by train_tts.py; durations come from the forced aligner (integer frame counts per phoneme).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=4000):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe, persistent=False)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class FFTStack(nn.Module):
    def __init__(self, d_model, n_layers, n_heads, d_ff, dropout):
        super().__init__()
        self.pos = PositionalEncoding(d_model)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout, batch_first=True) for _ in range(n_layers)
        )

    def forward(self, x, pad_mask):
        x = self.pos(x)
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=pad_mask)
        return x.masked_fill(pad_mask.unsqueeze(-1), 0.0)


class DurationPredictor(nn.Module):
    def __init__(self, d_model, hidden=256, dropout=0.1):
        super().__init__()
        self.conv1 = nn.Conv1d(d_model, hidden, 3, padding=1)
        self.conv2 = nn.Conv1d(hidden, hidden, 3, padding=1)
        self.norm1, self.norm2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):  # (B, T, d) -> log-duration (B, T)
        h = self.drop(self.norm1(F.relu(self.conv1(x.transpose(1, 2))).transpose(1, 2)))
        h = self.drop(self.norm2(F.relu(self.conv2(h.transpose(1, 2))).transpose(1, 2)))
        return self.out(h).squeeze(-1)


class LengthRegulator(nn.Module):
    """Repeats each phoneme's hidden vector for as many frames as it lasts."""

    @torch.no_grad()
    def forward(self, x, durations):
        expanded = [torch.repeat_interleave(seq, dur, dim=0) for seq, dur in zip(x, durations)]
        mel_lens = durations.sum(dim=1)
        return pad_sequence(expanded, batch_first=True), mel_lens


def lengths_to_mask(lengths, max_len=None):
    max_len = max_len or int(lengths.max())
    return torch.arange(max_len, device=lengths.device)[None, :] >= lengths[:, None]  # True = padding


class FastSpeech(nn.Module):
    def __init__(self, n_symbols, n_mels=80, d_model=256, n_layers=4, n_heads=2, d_ff=1024, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(n_symbols, d_model, padding_idx=0)
        self.encoder = FFTStack(d_model, n_layers, n_heads, d_ff, dropout)
        self.duration = DurationPredictor(d_model)
        self.regulate = LengthRegulator()
        self.decoder = FFTStack(d_model, n_layers, n_heads, d_ff, dropout)
        self.to_mel = nn.Linear(d_model, n_mels)

    def forward(self, phonemes, phoneme_lens, durations=None, speed=1.0):
        src_mask = lengths_to_mask(phoneme_lens, phonemes.size(1))
        h = self.encoder(self.embed(phonemes), src_mask)
        log_dur = self.duration(h).masked_fill(src_mask, 0.0)
        if durations is None:  # inference: use the predicted durations
            durations = torch.clamp(torch.round(torch.exp(log_dur) / speed) - 1, min=0).long()
            durations = durations.masked_fill(src_mask, 0)
        frames, mel_lens = self.regulate(h, durations)
        mel_mask = lengths_to_mask(mel_lens, frames.size(1))
        mel = self.to_mel(self.decoder(frames, mel_mask))
        return mel, log_dur, mel_mask


def fastspeech_loss(mel_pred, mel_true, log_dur_pred, dur_true, phoneme_mask, mel_mask):
    """L1 on the valid mel frames + MSE on log(1 + duration) of the valid phonemes."""
    valid_frames = ~mel_mask
    mel_loss = F.l1_loss(mel_pred[valid_frames], mel_true[valid_frames])
    valid_ph = ~phoneme_mask
    dur_target = torch.log1p(dur_true.float())
    dur_loss = F.mse_loss(log_dur_pred[valid_ph], dur_target[valid_ph])
    return mel_loss + dur_loss, {"mel": mel_loss.item(), "dur": dur_loss.item()}


if __name__ == "__main__":
    model = FastSpeech(n_symbols=80)
    ph = torch.randint(1, 80, (2, 12))
    ph_lens = torch.tensor([12, 9])
    ph[1, 9:] = 0
    dur = torch.randint(1, 6, (2, 12)).masked_fill(lengths_to_mask(ph_lens, 12), 0)
    mel, log_dur, mel_mask = model(ph, ph_lens, dur)
    target = torch.randn_like(mel)
    loss, parts = fastspeech_loss(mel, target, log_dur, dur, lengths_to_mask(ph_lens, 12), mel_mask)
    loss.backward()
    print(mel.shape, parts)
