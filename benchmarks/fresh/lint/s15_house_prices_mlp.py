"""House price regression from a CSV of numeric and one-hot features."""
import numpy as np
import pandas as pd
import torch
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

SEED = 42
torch.manual_seed(SEED)
np.random.seed(SEED)


def load_frame(path):
    df = pd.read_csv(path)
    df = df.dropna(subset=["SalePrice"])
    df = pd.get_dummies(df, columns=["Neighborhood", "HouseStyle"], dtype=float)
    df = df.fillna(df.median(numeric_only=True))
    return df


class PriceMLP(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(n_in, 256),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(256, 64),
            nn.ReLU(),
        )
        self.regressor = nn.Linear(64, 1)

    def forward(self, x):
        return self.regressor(self.body(x))


def main():
    df = load_frame("train.csv")
    target = np.log1p(df.pop("SalePrice").to_numpy(dtype=np.float32))
    features = df.select_dtypes("number").to_numpy(dtype=np.float32)
    x_tr, x_va, y_tr, y_va = train_test_split(features, target, test_size=0.2, random_state=SEED)
    scaler = StandardScaler().fit(x_tr)
    x_tr, x_va = scaler.transform(x_tr).astype(np.float32), scaler.transform(x_va).astype(np.float32)

    train_dl = DataLoader(TensorDataset(torch.from_numpy(x_tr), torch.from_numpy(y_tr)), batch_size=64, shuffle=True)
    val_dl = DataLoader(TensorDataset(torch.from_numpy(x_va), torch.from_numpy(y_va)), batch_size=256)

    model = PriceMLP(x_tr.shape[1])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = nn.SmoothL1Loss(beta=0.5)

    for epoch in range(200):
        model.train()
        running = 0.0
        for xb, yb in train_dl:
            opt.zero_grad()
            pred = model(xb)
            loss = criterion(pred, yb)
            loss.backward()
            opt.step()
            running = running + loss
        model.eval()
        with torch.no_grad():
            val_err = torch.cat([(model(xb).squeeze(1) - yb).abs() for xb, yb in val_dl]).mean()
        if epoch % 20 == 0:
            print(f"epoch {epoch}: train {running / len(train_dl):.4f}  val MAE(log) {val_err:.4f}")

    torch.save(model.state_dict(), "price_mlp.pt")


if __name__ == "__main__":
    main()
