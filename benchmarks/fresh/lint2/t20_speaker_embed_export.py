"""Export the speaker-embedding network (x-vector style) for the verification service.

The log-mel front end stays in the service (it runs on the CPU next to the audio decoder); only the
network that maps features to a unit-length embedding is exported with torch.export.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def log_mel(wav, n_fft=512, hop=160, n_mels=64, sample_rate=16000):
    window = torch.hann_window(n_fft, device=wav.device)
    spec = torch.stft(wav, n_fft, hop_length=hop, window=window, return_complex=True)
    power = spec.abs().pow(2)  # (batch, freq, frames)
    mel = torch.linspace(0.0, 2595.0 * torch.log10(torch.tensor(1.0 + sample_rate / 2 / 700.0)).item(), n_mels + 2)
    hz = 700.0 * (10.0 ** (mel / 2595.0) - 1.0)
    freqs = torch.linspace(0.0, sample_rate / 2, n_fft // 2 + 1)
    lo, mid, hi = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    fb = torch.clamp(torch.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)), min=0.0)
    return torch.log(fb.to(wav.device) @ power + 1e-6)  # (batch, mels, frames)


class TDNN(nn.Module):
    def __init__(self, cin, cout, context, dilation):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, context, dilation=dilation, bias=False)
        self.bn = nn.BatchNorm1d(cout)

    def forward(self, x):
        return self.bn(F.relu(self.conv(x)))


class XVector(nn.Module):
    def __init__(self, n_mels=64, channels=512, emb_dim=192):
        super().__init__()
        self.frames = nn.Sequential(
            TDNN(n_mels, channels, 5, 1), TDNN(channels, channels, 3, 2), TDNN(channels, channels, 3, 3),
            TDNN(channels, channels, 1, 1), TDNN(channels, 3 * channels, 1, 1),
        )
        self.segment = nn.Linear(6 * channels, emb_dim)

    def forward(self, feats):  # (batch, mels, frames)
        h = self.frames(feats)
        stats = torch.cat([h.mean(dim=2), h.std(dim=2)], dim=1)
        return F.normalize(self.segment(stats), dim=1)


def load_trained(path):
    model = XVector()
    state = torch.load(path, map_location="cpu", weights_only=True)["model"]
    state = {k.removeprefix("module."): v for k, v in state.items() if not k.startswith("aam_head.")}
    model.load_state_dict(state)
    return model.eval()


@torch.no_grad()
def check_parity(model, exported, feats):
    expected = model(feats)
    actual = exported.module()(feats)
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-5)
    return F.cosine_similarity(expected[0:1], expected[1:2]).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkpoint")
    ap.add_argument("--out", default="xvector.pt2")
    args = ap.parse_args()

    model = load_trained(args.checkpoint)
    wav = torch.randn(4, 3 * 16000)
    feats = log_mel(wav)
    batch = torch.export.Dim("batch", min=1, max=64)
    frames = torch.export.Dim("frames", min=50, max=6000)
    exported = torch.export.export(model, (feats,), dynamic_shapes={"feats": {0: batch, 2: frames}})
    cos = check_parity(model, exported, feats)
    torch.export.save(exported, args.out)
    torch.save(model.state_dict(), args.out.replace(".pt2", "_state_dict.pt"))
    print(f"exported to {args.out}; cosine(utt0, utt1) = {cos:.3f}")


if __name__ == "__main__":
    main()
