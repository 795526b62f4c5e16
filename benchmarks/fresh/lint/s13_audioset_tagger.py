"""Multi-label audio event tagging (AudioSet-style clips, 527 classes) on precomputed log-mel features."""
import h5py
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset
from sklearn.metrics import average_precision_score

N_CLASSES = 527


class MelClips(Dataset):
    def __init__(self, h5_path):
        self.h5_path = h5_path
        with h5py.File(h5_path, "r") as f:
            self.length = len(f["targets"])
        self.file = None

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        if self.file is None:
            self.file = h5py.File(self.h5_path, "r")
        mel = torch.from_numpy(self.file["logmel"][i].astype(np.float32))  # (frames, 64)
        target = torch.from_numpy(self.file["targets"][i].astype(np.float32))  # multi-hot (527,)
        return mel, target


class CRNNTagger(nn.Module):
    def __init__(self, n_mels=64, hidden=256):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(n_mels, hidden, 5, padding=2), nn.BatchNorm1d(hidden), nn.ReLU(),
            nn.Conv1d(hidden, hidden, 5, padding=2), nn.BatchNorm1d(hidden), nn.ReLU(),
        )
        self.rnn = nn.GRU(hidden, hidden // 2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(hidden, N_CLASSES)
        self.p_drop = 0.3

    def forward(self, mel):  # (B, T, n_mels)
        h = self.conv(mel.transpose(1, 2)).transpose(1, 2)
        h, _ = self.rnn(h)
        h = h.max(dim=1).values
        h = F.dropout(h, p=self.p_drop)
        return torch.sigmoid(self.head(h))


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    train_dl = DataLoader(MelClips("balanced_train.h5"), batch_size=32, shuffle=True, num_workers=4)
    eval_dl = DataLoader(MelClips("eval.h5"), batch_size=64, num_workers=4)
    model = CRNNTagger().to(device)
    pos_weight = torch.full((N_CLASSES,), 5.0, device=device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    for epoch in range(30):
        model.train()
        for mel, target in train_dl:
            mel, target = mel.to(device), target.to(device)
            optimizer.zero_grad()
            loss = criterion(model(mel), target)
            loss.backward()
            optimizer.step()

        model.eval()
        scores, targets = [], []
        with torch.no_grad():
            for mel, target in eval_dl:
                scores.append(model(mel.to(device)).cpu())
                targets.append(target)
        mAP = average_precision_score(torch.cat(targets).numpy(), torch.cat(scores).numpy(), average="macro")
        print(f"epoch {epoch}: last loss {loss.item():.4f}  eval mAP {mAP:.4f}")


if __name__ == "__main__":
    main()
