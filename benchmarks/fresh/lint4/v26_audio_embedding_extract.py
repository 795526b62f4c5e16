"""Extract one speaker embedding per utterance with the trained LSTM speaker encoder.

Writes embeddings.npy (float32, L2-normalised rows) and utterances.txt (one path per row).
"""

import argparse
from pathlib import Path

import numpy as np
import torch
import torchaudio
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset

SR = 16000


class SpeakerEncoder(nn.Module):
    def __init__(self, n_mels=40, hidden=256, layers=3, emb=256):
        super().__init__()
        self.lstm = nn.LSTM(n_mels, hidden, num_layers=layers, batch_first=True)
        self.proj = nn.Linear(hidden, emb)

    def forward(self, feats, lengths):
        packed = pack_padded_sequence(feats, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, (h_n, _) = self.lstm(packed)
        return nn.functional.normalize(torch.relu(self.proj(h_n[-1])), dim=-1)


class Utterances(Dataset):
    def __init__(self, root):
        self.paths = sorted(Path(root).rglob("*.flac"))
        self.mel = torchaudio.transforms.MelSpectrogram(SR, n_fft=400, hop_length=160, n_mels=40)

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        wav, sr = torchaudio.load(str(self.paths[i]))
        if sr != SR:
            wav = torchaudio.functional.resample(wav, sr, SR)
        feats = torch.log(self.mel(wav.mean(0)) + 1e-6).T
        return feats, i


def collate(batch):
    feats, idx = zip(*batch)
    lengths = torch.tensor([f.shape[0] for f in feats])
    return pad_sequence(list(feats), batch_first=True), lengths, torch.tensor(idx)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--weights", default="speaker_encoder.pt")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--bf16", action="store_true")
    args = ap.parse_args()

    ds = Utterances(args.root)
    loader = DataLoader(ds, batch_size=32, collate_fn=collate, num_workers=args.workers,
                        prefetch_factor=4 if args.workers > 0 else None)
    model = SpeakerEncoder()
    model.load_state_dict(torch.load(args.weights, map_location="cpu", weights_only=True))
    model.eval()

    out = np.zeros((len(ds), 256), dtype=np.float32)
    with torch.inference_mode(), torch.amp.autocast("cpu", dtype=torch.bfloat16, enabled=args.bf16):
        for feats, lengths, idx in loader:
            emb = model(feats, lengths)
            out[idx.numpy()] = emb.float().cpu().numpy()

    norms = np.linalg.norm(out, axis=1)
    print(f"{len(ds)} utterances, embedding norms in [{norms.min():.3f}, {norms.max():.3f}]")
    np.save("embeddings.npy", out)
    Path("utterances.txt").write_text("\n".join(str(p) for p in ds.paths) + "\n")


if __name__ == "__main__":
    main()
