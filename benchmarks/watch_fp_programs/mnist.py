# Adapted from pytorch/examples (https://github.com/pytorch/examples), mnist/main.py, at commit
# 77f55b9 (BSD 3-Clause License, (c) 2017 PyTorch contributors). Edits for the watch false-positive
# study: MNIST replaced by random normalised images and labels of its shape (no download), argparse
# replaced by constants, 2 epochs of 3 batches, no model file. Net, train(), test() and the
# Adadelta + StepLR schedule as the original.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(model, device, train_loader, optimizer, epoch, log_interval=1):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % log_interval == 0:
            print('Train Epoch: {} [{}]\tLoss: {:.6f}'.format(epoch, batch_idx * len(data), loss.item()))


def test(model, device, test_loader, n_test):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= n_test
    print('Test set: Average loss: {:.4f}, Accuracy: {}/{}'.format(test_loss, correct, n_test))


def main():
    torch.manual_seed(1)
    device = torch.device("cpu")

    def batches(n, size):
        return [((torch.rand(size, 1, 28, 28) - 0.1307) / 0.3081, torch.randint(0, 10, (size,))) for _ in range(n)]

    train_loader, test_loader = batches(3, 16), batches(2, 32)
    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    for epoch in range(1, 3):
        train(model, device, train_loader, optimizer, epoch)
        test(model, device, test_loader, 64)
        scheduler.step()


if __name__ == '__main__':
    main()
