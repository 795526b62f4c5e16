# Adapted from facebookresearch/moco (https://github.com/facebookresearch/moco), moco/builder.py and
# main_moco.py, at commit 132aea9 (MIT License, (c) Meta Platforms, Inc. and affiliates). Edits for
# the watch false-positive study: one process on the CPU (the DDP batch shuffle done locally, the
# all_gather an identity, no .cuda()), torchvision's ResNet-50 replaced by a small conv net with
# BatchNorm taking the same num_classes argument, ImageNet replaced by random pairs of 32x32
# "views", a queue of 64 keys, 4 steps; accuracy() uses reshape(-1) where the original's view(-1)
# raises on current torch for k > 1 (a view of a non-contiguous tensor). MoCo and train() otherwise
# as the original (the key encoder runs in training mode under no_grad, on purpose).
import torch
import torch.nn as nn


class MoCo(nn.Module):
    def __init__(self, base_encoder, dim: int = 128, K: int = 65536, m: float = 0.999, T: float = 0.07, mlp: bool = False) -> None:
        super(MoCo, self).__init__()
        self.K = K
        self.m = m
        self.T = T
        self.encoder_q = base_encoder(num_classes=dim)
        self.encoder_k = base_encoder(num_classes=dim)
        if mlp:
            dim_mlp = self.encoder_q.fc.weight.shape[1]
            self.encoder_q.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_q.fc)
            self.encoder_k.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_k.fc)
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)
            param_k.requires_grad = False
        self.register_buffer("queue", torch.randn(dim, K))
        self.queue = nn.functional.normalize(self.queue, dim=0)
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update_key_encoder(self) -> None:
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * self.m + param_q.data * (1.0 - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys) -> None:
        keys = concat_all_gather(keys)
        batch_size = keys.shape[0]
        ptr = int(self.queue_ptr)
        assert self.K % batch_size == 0
        self.queue[:, ptr : ptr + batch_size] = keys.T
        ptr = (ptr + batch_size) % self.K
        self.queue_ptr[0] = ptr

    @torch.no_grad()
    def _batch_shuffle_ddp(self, x):
        idx_shuffle = torch.randperm(x.shape[0])  # one process: the shuffle without the gather
        idx_unshuffle = torch.argsort(idx_shuffle)
        return x[idx_shuffle], idx_unshuffle

    @torch.no_grad()
    def _batch_unshuffle_ddp(self, x, idx_unshuffle):
        return x[idx_unshuffle]

    def forward(self, im_q, im_k):
        q = self.encoder_q(im_q)
        q = nn.functional.normalize(q, dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            im_k, idx_unshuffle = self._batch_shuffle_ddp(im_k)
            k = self.encoder_k(im_k)
            k = nn.functional.normalize(k, dim=1)
            k = self._batch_unshuffle_ddp(k, idx_unshuffle)
        l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", [q, self.queue.clone().detach()])
        logits = torch.cat([l_pos, l_neg], dim=1)
        logits /= self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long)
        self._dequeue_and_enqueue(k)
        return logits, labels


@torch.no_grad()
def concat_all_gather(tensor):
    return tensor  # one process


class SmallResNetStandIn(nn.Module):
    """Stands in for torchvision.models.resnet50(num_classes=dim): conv, BatchNorm, pooling, fc."""
    def __init__(self, num_classes=128):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
                                      nn.Conv2d(16, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.fc(self.features(x))


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


def train(train_loader, model, criterion, optimizer, epoch) -> None:
    model.train()
    for i, (images, _) in enumerate(train_loader):
        output, target = model(im_q=images[0], im_k=images[1])
        loss = criterion(output, target)
        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"Epoch [{epoch}][{i}] loss {loss.item():.4f} acc@1 {acc1.item():.1f} acc@5 {acc5.item():.1f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    model = MoCo(SmallResNetStandIn, dim=32, K=64, m=0.999, T=0.07, mlp=True)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), 0.03, momentum=0.9, weight_decay=1e-4)
    train_loader = [([torch.rand(8, 3, 32, 32), torch.rand(8, 3, 32, 32)], torch.zeros(8)) for _ in range(4)]
    train(train_loader, model, criterion, optimizer, 0)
