"""PTF263 (hard-coded-flatten-size): x.view(-1, N) with N written in, on a batch of feature maps."""

PITFALL = {
    "tutorial_lenet_pool_chain": """
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 10)
    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        return self.fc2(F.relu(self.fc1(x)))
""",
    "mnist_functional_pool_single_literal": """
import torch
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        return F.log_softmax(self.fc1(x), dim=1)
""",
    "sequential_features_reshape": """
from torch import nn
class SmallVGG(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(2),
        )
        self.classifier = nn.Linear(64 * 8 * 8, n_classes)
    def forward(self, images):
        feats = self.features(images)
        return self.classifier(feats.reshape(-1, 64 * 8 * 8))
""",
    "pool_module_built_inline": """
import torch.nn as nn
def scene_logits(conv_maps, linear_layer):
    return linear_layer(nn.AvgPool2d(kernel_size=14)(conv_maps).view(-1, 512))
""",
    "chained_on_the_pooled_call": """
import torch
import torch.nn.functional as F
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 8, 3)
        self.c2 = nn.Conv2d(8, 16, 3)
        self.out = nn.Linear(16 * 6 * 6, 32)
    def forward(self, x):
        h = torch.relu(self.c1(x))
        h = F.max_pool2d(torch.relu(self.c2(h)), 2).contiguous().view(-1, 16 * 6 * 6)
        return self.out(h)
""",
    "flatten_helper_handed_to_the_model": """
import torch
from torch import nn
class Classifier(nn.Module):
    def __init__(self, flatten):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Linear(32 * 16 * 16, 10)
        self.flatten = flatten
    def forward(self, x):
        return self.head(self.flatten(self.body(x)))
def to_rows(x):
    return x.view(-1, 32 * 16 * 16)
model = Classifier(to_rows)
""",
    "conv1d_audio_features": """
import torch.nn as nn
class KWS(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(40, 64, 5)
        self.pool = nn.MaxPool1d(4)
        self.fc = nn.Linear(64 * 24, 12)
    def forward(self, mfcc):
        z = self.pool(nn.functional.relu(self.conv(mfcc)))
        return self.fc(z.view(-1, 64 * 24))
""",
}

NEAR_MISS = {
    "flatten_keeping_the_batch": """
import torch
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 5)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 14 * 14, 10)
    def forward(self, x):
        x = self.pool(F.relu(self.conv(x)))
        a = x.view(x.size(0), -1)
        b = torch.flatten(x, 1)
        c = x.reshape(x.shape[0], 16 * 14 * 14)
        return self.fc(a) + self.fc(b) + self.fc(c)
""",
    "adaptive_pool_fixes_the_size": """
import torch.nn as nn
import torch.nn.functional as F
class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 512, 3)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, 100)
    def forward(self, x):
        x = self.avgpool(F.relu(self.conv(x)))
        x = x.view(-1, 512)
        return self.fc(x)
""",
    "global_pool_by_input_size": """
import torch.nn as nn
import torch.nn.functional as F
class TextCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(300, 100, 3)
        self.fc = nn.Linear(100, 2)
    def forward(self, emb):
        h = F.relu(self.conv(emb))
        h = F.max_pool1d(h, h.size(2))
        return self.fc(h.view(-1, 100))
""",
    "token_logits_for_cross_entropy": """
import torch.nn as nn
import torch.nn.functional as F
class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.rnn = nn.LSTM(64, 128, batch_first=True)
        self.out = nn.Linear(128, 1000)
    def forward(self, tokens, targets):
        h, _ = self.rnn(self.emb(tokens))
        logits = self.out(h)
        return F.cross_entropy(logits.view(-1, 1000), targets.view(-1))
""",
    "reshaping_labels_and_boxes": """
import torch
def targets(labels, boxes):
    return labels.view(-1, 1), boxes.reshape(-1, 4)
""",
    "lstm_outputs_per_step_in_a_cnn_model": """
import torch.nn as nn
class CRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.cnn = nn.Sequential(nn.Conv2d(1, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.rnn = nn.LSTM(64 * 16, 256, bidirectional=True)
        self.fc = nn.Linear(2 * 256, 37)
    def forward(self, x):
        f = self.cnn(x)
        b, c, h, w = f.size()
        seq = f.view(b, c * h, w).permute(2, 0, 1)
        out, _ = self.rnn(seq)
        return self.fc(out.view(-1, 2 * 256))
""",
    "features_made_flat_by_the_caller": """
import torch.nn as nn
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(128, 10)
    def forward(self, z):
        return self.fc(z.view(-1, 128))
""",
}

PREVIEW = {
    "image_batch_flattened_for_an_mlp": """
import torch
def flat_pixels(images):
    return images.view(-1, 3 * 32 * 32)
""",
}

SEEN = {
    "tutorial_lenet_pool_chain": "pytorch/tutorials beginner_source/blitz/cifar10_tutorial.py (before it moved to torch.flatten(x, 1)); "
    "pytorch/examples#210 (a comment: x.view(-1, 32 * 4 * 4) after three conv/pool steps, matched to fc1 by hand)",
    "mnist_functional_pool_single_literal": "pytorch/examples mnist/main.py of 2017-2018 (x.view(-1, 320) after F.max_pool2d)",
    "pool_module_built_inline": "ZhengyuZhao/Adi-Red-Scene#9 (linear_layer(nn.AvgPool2d(kernel_size=14)(conv_maps).view(-1, 512)): "
    "size mismatch once the network changed)",
    "flatten_keeping_the_batch": "pytorch/tutorials#703 (the fix suggested there: x.view(x.shape[0], -1)); "
    "clcarwin/convert_torch_to_pytorch#1 (View fixed to x.view(x.size(0), -1))",
    "chained_on_the_pooled_call": "benchmarks/fresh/lint4/v11_tile_classifier_predict.py (x.view(-1, 128 * 4 * 4) after "
    "F.max_pool2d(F.relu(self.bn3(self.conv3(x))), 2); tuning material)",
}
