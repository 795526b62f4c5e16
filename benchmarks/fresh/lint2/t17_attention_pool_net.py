"""Backbone blocks for a fine-grained bird classifier: residual stages with channel attention,
stochastic depth, an attention-pooling head and an MLP classifier."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ChannelGate(nn.Module):
    def __init__(self, channels, reduction=16):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(channels, channels // reduction), nn.ReLU(inplace=True),
                                 nn.Linear(channels // reduction, channels))

    def forward(self, x):
        avg = self.mlp(x.mean(dim=(2, 3)))
        mx = self.mlp(x.amax(dim=(2, 3)))
        return x * torch.sigmoid(avg + mx)[:, :, None, None]


class DropPath(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        keep = torch.rand(x.size(0), 1, 1, 1, device=x.device, dtype=x.dtype) >= self.p
        return x * keep / (1.0 - self.p)


class Bottleneck(nn.Module):
    def __init__(self, cin, cout, stride=1, drop_path=0.0):
        super().__init__()
        mid = cout // 4
        self.body = nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(inplace=True),
            nn.Conv2d(mid, mid, 3, stride, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(inplace=True),
            nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout),
        )
        self.gate = ChannelGate(cout)
        self.drop_path = DropPath(drop_path)
        self.shortcut = nn.Identity() if (cin == cout and stride == 1) else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return F.relu(self.shortcut(x) + self.drop_path(self.gate(self.body(x))))


class AttentionPool(nn.Module):
    """Weighted average of the feature map, the weights learned per location."""

    def __init__(self, channels):
        super().__init__()
        self.score = nn.Conv2d(channels, 1, kernel_size=1)

    def forward(self, x):
        weights = torch.softmax(self.score(x), dim=1)
        return (x * weights).sum(dim=(2, 3))


class MLPHead(nn.Module):
    def __init__(self, cin, n_classes, hidden=1024, p_drop=0.3):
        super().__init__()
        self.fc1 = nn.Linear(cin, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, n_classes)
        self.p_drop = p_drop

    def forward(self, x):
        h = F.gelu(self.norm(self.fc1(x)))
        h = F.dropout(h, p=self.p_drop)
        return self.fc2(h)


class BirdNet(nn.Module):
    def __init__(self, n_classes=200, widths=(256, 512, 1024, 2048), depths=(3, 4, 6, 3), drop_path=0.1):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, 2, 1))
        total, idx, blocks, cin = sum(depths), 0, [], 64
        for stage, (w, d) in enumerate(zip(widths, depths)):
            for j in range(d):
                stride = 2 if (j == 0 and stage > 0) else 1
                blocks.append(Bottleneck(cin, w, stride, drop_path * idx / max(total - 1, 1)))
                cin, idx = w, idx + 1
        self.blocks = nn.Sequential(*blocks)
        self.pool = AttentionPool(cin)
        self.head = MLPHead(cin, n_classes)

    def forward(self, x):
        return self.head(self.pool(self.blocks(self.stem(x))))


if __name__ == "__main__":
    net = BirdNet().eval()
    with torch.no_grad():
        logits = net(torch.randn(2, 3, 224, 224))
    print(logits.shape, sum(p.numel() for p in net.parameters()) / 1e6, "M params")
