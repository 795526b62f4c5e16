# Adapted from pytorch/examples (https://github.com/pytorch/examples), super_resolution/model.py and
# super_resolution/main.py, at commit 77f55b9 (BSD 3-Clause License, (c) 2017 PyTorch
# contributors). Edits for the watch false-positive study: BSDS300 replaced by random Y-channel
# images (32x32 inputs, 96x96 targets for an upscale factor of 3; no download, no torchvision),
# argparse replaced by constants, 2 epochs of 3 batches, no checkpoint file. Net, train() and
# test() as the original.
from math import log10

import torch
import torch.nn as nn
import torch.nn.init as init
import torch.optim as optim


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


torch.manual_seed(123)
device = torch.device("cpu")
upscale_factor = 3


def pairs(n, size):
    return [(torch.rand(size, 1, 32, 32), torch.rand(size, 1, 96, 96)) for _ in range(n)]


training_data_loader, testing_data_loader = pairs(3, 4), pairs(2, 4)
model = Net(upscale_factor=upscale_factor).to(device)
criterion = nn.MSELoss()
optimizer = optim.Adam(model.parameters(), lr=0.01)


def train(epoch):
    epoch_loss = 0
    for iteration, batch in enumerate(training_data_loader, 1):
        input, target = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.item()
        loss.backward()
        optimizer.step()
        print("===> Epoch[{}]({}/{}): Loss: {:.4f}".format(epoch, iteration, len(training_data_loader), loss.item()))
    print("===> Epoch {} Complete: Avg. Loss: {:.4f}".format(epoch, epoch_loss / len(training_data_loader)))


def test():
    avg_psnr = 0
    with torch.no_grad():
        for batch in testing_data_loader:
            input, target = batch[0].to(device), batch[1].to(device)
            prediction = model(input)
            mse = criterion(prediction, target)
            psnr = 10 * log10(1 / mse.item())
            avg_psnr += psnr
    print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))


for epoch in range(1, 3):
    train(epoch)
    test()
