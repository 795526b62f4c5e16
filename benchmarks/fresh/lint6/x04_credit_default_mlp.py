"""Credit default prediction from loan application features (tabular MLP)."""

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

NUMERIC = ["income", "loan_amount", "term_months", "debt_to_income", "credit_age_years",
           "open_accounts", "delinquencies_2y", "utilization"]
TARGET = "defaulted"
VAL_FRACTION = 0.15


def stratified_holdout(frame):
    """Keep the class ratio in both parts: the last VAL_FRACTION of each class is held out."""
    frame = frame.sort_values([TARGET, "application_id"]).reset_index(drop=True)
    rank_from_end = frame.groupby(TARGET).cumcount(ascending=False)
    class_size = frame.groupby(TARGET)[TARGET].transform("size")
    is_val = rank_from_end < (class_size * VAL_FRACTION).astype(int)
    return frame[~is_val], frame[is_val]


def to_tensors(frame, mean, std):
    x = (frame[NUMERIC].to_numpy(np.float32) - mean) / std
    y = frame[TARGET].to_numpy(np.float32)[:, None]
    return torch.from_numpy(x), torch.from_numpy(y)


class DefaultMLP(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_in, 128, bias=False), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(128, 64, bias=False), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(64, 1),
        )

    def forward(self, x):
        return self.net(x)


def main():
    frame = pd.read_parquet("data/applications.parquet")
    frame[NUMERIC] = frame[NUMERIC].fillna(frame[NUMERIC].median())
    train_frame, val_frame = stratified_holdout(frame)

    mean = train_frame[NUMERIC].to_numpy(np.float32).mean(axis=0)
    std = train_frame[NUMERIC].to_numpy(np.float32).std(axis=0) + 1e-6
    x_train, y_train = to_tensors(train_frame, mean, std)
    x_val, y_val = to_tensors(val_frame, mean, std)

    train_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=512, drop_last=True)
    val_loader = DataLoader(TensorDataset(x_val, y_val), batch_size=2048)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = DefaultMLP(len(NUMERIC)).to(device)
    positives = y_train.sum()
    pos_weight = ((len(y_train) - positives) / positives).to(device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)

    for epoch in range(40):
        model.train()
        for xb, yb in train_loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()

        model.eval()
        with torch.no_grad():
            scores, labels = [], []
            for xb, yb in val_loader:
                scores.append(torch.sigmoid(model(xb.to(device))).cpu())
                labels.append(yb)
            scores, labels = torch.cat(scores), torch.cat(labels)
        predicted = (scores > 0.5).float()
        recall = (predicted * labels).sum() / labels.sum()
        precision = (predicted * labels).sum() / predicted.sum().clamp(min=1)
        print(f"epoch {epoch}: precision {precision:.3f} recall {recall:.3f}")

    torch.save({"model": model.state_dict(), "mean": torch.from_numpy(mean), "std": torch.from_numpy(std)},
               "credit_mlp.pt")


if __name__ == "__main__":
    main()
