"""Evaluate a trained keyword-spotting model on the Speech Commands v2 test list.

Prints the test loss, top-1 accuracy and the per-keyword recall, and writes the confusion
matrix to kws_confusion.csv.
"""

import argparse
import csv

import torch
import torch.nn.functional as F
import torchaudio
from torch import nn
from torch.utils.data import DataLoader

from kws.data import SpeechCommandsSubset, KEYWORDS
from kws.model import DSCNN

SAMPLE_RATE = 16000


class LogMel(nn.Module):
    def __init__(self, n_mels=40):
        super().__init__()
        self.mel = torchaudio.transforms.MelSpectrogram(
            sample_rate=SAMPLE_RATE, n_fft=480, hop_length=160, n_mels=n_mels
        )

    def forward(self, wav):
        return torch.log(self.mel(wav) + 1e-6)


def pad_to_one_second(batch):
    waves, labels = zip(*batch)
    fixed = []
    for w in waves:
        w = w[..., :SAMPLE_RATE]
        fixed.append(F.pad(w, (0, SAMPLE_RATE - w.shape[-1])))
    return torch.stack(fixed), torch.tensor(labels)


def run_test(model, frontend, loader, device, num_classes):
    model.eval()
    total_loss = 0.0
    confusion = torch.zeros(num_classes, num_classes, dtype=torch.long)
    all_probs = []
    for waves, labels in loader:
        waves, labels = waves.to(device), labels.to(device)
        logits = model(frontend(waves))
        total_loss += F.cross_entropy(logits, labels).item()
        all_probs.append(logits.softmax(dim=-1))
        pred = logits.argmax(dim=-1)
        for t, p in zip(labels.tolist(), pred.tolist()):
            confusion[t, p] += 1
    mean_loss = total_loss / len(loader)
    return mean_loss, confusion, torch.cat(all_probs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/speech_commands_v2")
    ap.add_argument("--ckpt", default="runs/dscnn/best.pt")
    ap.add_argument("--batch-size", type=int, default=200)
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    test_set = SpeechCommandsSubset(args.root, subset="testing")
    loader = DataLoader(test_set, batch_size=args.batch_size, collate_fn=pad_to_one_second,
                        num_workers=4)

    ckpt = torch.load(args.ckpt, map_location=device, weights_only=True)
    model = DSCNN(num_classes=len(KEYWORDS)).to(device)
    model.load_state_dict(ckpt["model"])
    frontend = LogMel().to(device)

    loss, confusion, probs = run_test(model, frontend, loader, device, len(KEYWORDS))
    accuracy = confusion.diag().sum().item() / confusion.sum().item()
    recall = confusion.diag().float() / confusion.sum(dim=1).clamp(min=1).float()
    print(f"test loss {loss:.4f}  accuracy {accuracy:.4f}  ({len(test_set)} clips)")
    for word, r in zip(KEYWORDS, recall.tolist()):
        print(f"  {word:>8s}  recall {r:.3f}")
    print("mean max-probability:", probs.max(dim=-1).values.mean().item())

    with open("kws_confusion.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["true\\pred", *KEYWORDS])
        for word, row in zip(KEYWORDS, confusion.tolist()):
            writer.writerow([word, *row])


if __name__ == "__main__":
    main()
