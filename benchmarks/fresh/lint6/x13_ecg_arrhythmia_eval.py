"""Evaluate a trained beat classifier on the MIT-BIH inter-patient test records (DS2).

Beats are grouped into the five AAMI classes N, S, V, F, Q. Prints a per-record summary,
the confusion matrix and per-class sensitivity / positive predictive value."""

import argparse

import numpy as np
import torch
import torch.nn as nn

AAMI = ["N", "S", "V", "F", "Q"]
DS2 = [100, 103, 105, 111, 113, 117, 121, 123, 200, 202, 210, 212, 213, 214, 219, 221, 222, 228,
       231, 232, 233, 234]


class BeatNet(nn.Module):
    def __init__(self, n_classes=len(AAMI)):
        super().__init__()

        def block(c_in, c_out):
            return nn.Sequential(nn.Conv1d(c_in, c_out, 7, padding=3, bias=False), nn.BatchNorm1d(c_out),
                                 nn.ReLU(), nn.MaxPool1d(2))

        self.features = nn.Sequential(block(1, 32), block(32, 64), block(64, 128), nn.AdaptiveAvgPool1d(1))
        self.dropout = nn.Dropout(0.5)
        self.fc = nn.Linear(128 + 2, n_classes)

    def forward(self, beat, rr):
        # beat: (B, 1, 256) samples around the R peak; rr: (B, 2) pre/post RR intervals
        h = self.features(beat).flatten(1)
        return self.fc(torch.cat([self.dropout(h), rr], dim=1))


def load_record(folder, record):
    data = np.load(f"{folder}/{record}.npz")
    beats = torch.from_numpy(data["beats"]).float().unsqueeze(1)
    rr = torch.from_numpy(data["rr"]).float()
    labels = torch.from_numpy(data["aami"]).long()
    return beats, rr, labels


def evaluate_record(model, beats, rr, labels, device, confusion, batch=512):
    with torch.no_grad():
        for start in range(0, len(labels), batch):
            logits = model(beats[start:start + batch].to(device), rr[start:start + batch].to(device))
            predicted = logits.argmax(0).cpu()
            for truth, guess in zip(labels[start:start + batch].tolist(), predicted.tolist()):
                confusion[truth, guess] += 1


def report(confusion):
    print("confusion (rows = truth):")
    print("     " + "".join(f"{c:>8}" for c in AAMI))
    for i, c in enumerate(AAMI):
        print(f"{c:>5}" + "".join(f"{int(v):>8}" for v in confusion[i]))
    for i, c in enumerate(AAMI):
        se = confusion[i, i] / max(confusion[i].sum(), 1)
        ppv = confusion[i, i] / max(confusion[:, i].sum(), 1)
        print(f"{c}: Se {se:.3f}  +P {ppv:.3f}")
    print(f"overall accuracy {np.trace(confusion) / confusion.sum():.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights", default="checkpoints/beatnet_ds1.pt")
    parser.add_argument("--records", default="data/mitbih_beats")
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = BeatNet()
    model.load_state_dict(torch.load(args.weights, map_location="cpu", weights_only=True))
    model = model.to(device)

    confusion = np.zeros((len(AAMI), len(AAMI)), dtype=np.int64)
    for record in DS2:
        beats, rr, labels = load_record(args.records, record)
        before = confusion.sum()
        evaluate_record(model, beats, rr, labels, device, confusion)
        print(f"record {record}: {len(labels)} beats, {confusion.sum() - before} scored")
    report(confusion)


if __name__ == "__main__":
    main()
