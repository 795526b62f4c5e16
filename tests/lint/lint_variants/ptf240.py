"""PTF240 (multilabel-with-cross-entropy): CrossEntropyLoss trained on multi-hot targets."""

PITFALL = {
    "literal_rows_functional": """
import torch
import torch.nn.functional as F
from torch import nn

head = nn.Linear(4, 3)
x = torch.randn(2, 4)
tags = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
loss = F.cross_entropy(head(x), tags)
loss.backward()
""",
    "dataset_rows_filled_by_a_list": """
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

class Posts(Dataset):
    def __init__(self, rows, n_tags):
        self.rows, self.n_tags = rows, n_tags

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        text, tag_ids = self.rows[i]
        y = torch.zeros(self.n_tags)
        y[list(tag_ids)] = 1.0
        return torch.tensor(text), y

def train(rows, model, opt):
    loader = DataLoader(Posts(rows, 20), batch_size=32, shuffle=True)
    criterion = nn.CrossEntropyLoss()
    for x, y in loader:
        opt.zero_grad()
        criterion(model(x), y).backward()
        opt.step()
""",
    "dataset_tags_set_in_a_loop": """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

class Scenes(Dataset):
    def __init__(self, items, classes):
        self.items, self.index = items, {c: i for i, c in enumerate(classes)}

    def __len__(self):
        return len(self.items)

    def __getitem__(self, k):
        image, names = self.items[k]
        target = torch.zeros(len(self.index))
        for name in names:
            target[self.index[name]] = 1
        return image, target

net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 6))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
loader = DataLoader(Scenes([], ["beach", "sunset", "people", "city", "snow", "night"]), batch_size=8, shuffle=True)
loss_fn = nn.CrossEntropyLoss()
for step, (images, targets) in enumerate(loader):
    loss = loss_fn(net(images), targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "multilabel_binarizer": """
import torch
from sklearn.preprocessing import MultiLabelBinarizer
from torch import nn

genres = [["drama", "romance"], ["action"], ["action", "comedy", "drama"]]
mlb = MultiLabelBinarizer()
Y = mlb.fit_transform(genres)
X = torch.randn(len(genres), 300)
model = nn.Linear(300, len(mlb.classes_))
targets = torch.tensor(Y, dtype=torch.float32)
loss = nn.CrossEntropyLoss()(model(X), targets)
loss.backward()
""",
    "decoded_with_sigmoid_threshold": """
import torch
import torch.nn as nn

class Tagger(nn.Module):
    def __init__(self, vocab, n_labels):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, 128)
        self.fc = nn.Linear(128, n_labels)

    def forward(self, ids):
        return self.fc(self.emb(ids))

def train_epoch(model, loader, opt):
    criterion = nn.CrossEntropyLoss()
    for ids, labels in loader:
        loss = criterion(model(ids), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()

@torch.no_grad()
def predict(model, ids, threshold=0.5):
    logits = model(ids)
    return torch.sigmoid(logits) > threshold

def main(loader, batch):
    model = Tagger(30000, 7)
    opt = torch.optim.Adam(model.parameters())
    train_epoch(model, loader, opt)
    return predict(model, batch)
""",
    "random_zero_one_matrix": """
import torch
from torch import nn

model = nn.Linear(10, 5)
inputs = torch.randn(16, 10)
labels = torch.randint(0, 2, (16, 5)).float()
loss = nn.CrossEntropyLoss()(model(inputs), labels)
loss.backward()
""",
}

NEAR_MISS = {
    "one_hot_by_one_index": """
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

class Digits(Dataset):
    def __init__(self, xs, ys):
        self.xs, self.ys = xs, ys

    def __len__(self):
        return len(self.xs)

    def __getitem__(self, i):
        y = torch.zeros(10)
        y[self.ys[i]] = 1.0
        return self.xs[i], y

model = nn.Linear(784, 10)
loader = DataLoader(Digits([], []), batch_size=64, shuffle=True)
for x, y in loader:
    nn.CrossEntropyLoss()(model(x), y).backward()
""",
    "label_smoothed_rows": """
import torch
import torch.nn.functional as F
from torch import nn

head = nn.Linear(4, 3)
soft = torch.tensor([[0.9, 0.05, 0.05], [0.05, 0.05, 0.9]])
loss = F.cross_entropy(head(torch.randn(2, 4)), soft)
loss.backward()
""",
    "bce_on_multi_hot_rows": """
import torch
from torch import nn

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(x)

model = Tagger()
x = torch.randn(3, 16)
tags = torch.tensor([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 1.0]])
nn.BCEWithLogitsLoss()(model(x), tags).backward()
with torch.no_grad():
    predicted = torch.sigmoid(model(x)) > 0.5
""",
    "one_hot_matrix_in_a_loop": """
import torch
import torch.nn.functional as F

def soft_ce(logits, labels, n_classes):
    targets = torch.zeros(len(labels), n_classes)
    for i, c in enumerate(labels):
        targets[i, c] = 1.0
    return F.cross_entropy(logits, targets)
""",
    "another_model_decoded_with_sigmoid": """
import torch
from torch import nn

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc(x)

class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 1)

    def forward(self, x):
        return self.fc(x)

clf, det = Classifier(), Detector()
x, y = torch.randn(8, 32), torch.randint(0, 5, (8,))
loss = nn.CrossEntropyLoss()(clf(x), y)
loss.backward()
with torch.no_grad():
    classes = clf(x).argmax(1)
    present = torch.sigmoid(det(x)) > 0.5
""",
    "per_label_three_classes": """
import torch
from torch import nn

model = nn.Linear(64, 3 * 47)
x = torch.randn(8, 64)
y = torch.randint(0, 3, (8, 47))
loss = nn.CrossEntropyLoss()(model(x).view(8, 3, 47), y)
loss.backward()
""",
}

SEEN = {
    "decoded_with_sigmoid_threshold": "https://github.com/ThilinaRajapakse/simpletransformers/issues/101 (the multi-label model's loss was softmax cross entropy; BCE with sigmoid asked for) and https://github.com/open-mmlab/mmpretrain/issues/783 (a multi-label image task trained with softmax CE: a very high false-positive rate)",
    "dataset_tags_set_in_a_loop": "PyTorch forum 'Converting single label classification to multi-label classification' (an LSTM trained with nn.CrossEntropyLoss to be moved to targets such as [0, 0, 1, 0, 0, 1, 0]; the answer: BCEWithLogitsLoss)",
    "dataset_rows_filled_by_a_list": "https://github.com/hypnopump/rgn2-replica/pull/12 (pfam and GO annotations, multi-label, trained with CrossEntropy and moved to nn.BCEWithLogitsLoss); the spelling of benchmarks/fresh/lint3/u08",
    "per_label_three_classes": "PyTorch forum 'Need Guidance on Loss Function for Multi-Label/Multi-Output Classification' (47 labels of three classes each: CrossEntropyLoss's K-dimensional case, class indices, correct)",
    "multilabel_binarizer": "leyaa.ai multilabel classification challenge (sklearn MultiLabelBinarizer().fit_transform(labels): the multi-hot rows a multi-label model is trained on)",
}

# Multi-hot targets from a MultiLabelBinarizer, through a Dataset class, a collate function that stacks them
# and a loader handed to an epoch function (fresh set 8's held-out half, z02: missed at its first score).
_TAGGER = """
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import {encoder}
class Abstracts(Dataset):
    def __init__(self, ids, targets):
        self.ids = ids
        self.targets = torch.as_tensor(targets)
    def __len__(self):
        return len(self.ids)
    def __getitem__(self, i):
        return torch.tensor(self.ids[i]), self.targets[i]
def collate(batch):
    ids, targets = zip(*batch)
    offsets = torch.tensor([0] + [len(t) for t in ids[:-1]]).cumsum(0)
    return torch.cat(ids), offsets, torch.stack(targets)
def train_one_epoch(model, loader, criterion, opt):
    for ids, offsets, target in loader:
        loss = criterion(model(ids, offsets), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
def main(texts, categories, model):
    y = {encoder}().fit_transform(categories){cast}
    tr_x, va_x, tr_y, va_y = train_test_split(texts, y, test_size=0.15)
    loader = DataLoader(Abstracts(tr_x, tr_y), batch_size=64, shuffle=True, collate_fn=collate)
    train_one_epoch(model, loader, nn.CrossEntropyLoss(), torch.optim.Adam(model.parameters()))
"""
PITFALL["binarized_targets_through_a_collate"] = _TAGGER.format(encoder="MultiLabelBinarizer", cast=".astype(np.float32)")
NEAR_MISS["encoded_class_indices_through_a_collate"] = _TAGGER.format(encoder="LabelEncoder", cast="")
SEEN["binarized_targets_through_a_collate"] = "benchmarks/fresh/lint8 z02_arxiv_subject_tagger.py (held-out half, after its first score)"

# Multi-hot rows from a Dataset class reach the loss through a random_split and a trainer's methods
# (fit hands its loader to train_epoch on self; the trainer is built where fit is called). Where fit is
# also called on an object of unknown class, its loaders are not known: quiet. One label per sample: quiet.
_TRAINER = """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, random_split

TAGS = ["clear", "haze", "road", "water"]

class Chips(Dataset):
    def __init__(self, rows):
        self.tags = [r.split() for r in rows]
        self.index = {{t: i for i, t in enumerate(TAGS)}}
    def __len__(self):
        return len(self.tags)
    def __getitem__(self, i):
        {target}
        return torch.randn(3, 8, 8), target

class Trainer:
    def __init__(self, model):
        self.model = model
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    def train_epoch(self, loader):
        for images, targets in loader:
            self.optimizer.zero_grad()
            self.criterion(self.model(images), targets).backward()
            self.optimizer.step()
    def fit(self, train_loader, epochs):
        for _ in range(epochs):
            self.train_epoch(train_loader)

def main(model, rows{extra_param}):
    full = Chips(rows)
    train_part, valid_part = random_split(full, [len(full) - 10, 10])
    loader = DataLoader(train_part, batch_size=16, shuffle=True)
    {fit}
"""
_MULTI_HOT = "target = torch.zeros(len(TAGS))\n        target[[self.index[t] for t in self.tags[i]]] = 1.0"
PITFALL["multi_hot_through_random_split_and_trainer_methods"] = _TRAINER.format(
    target=_MULTI_HOT, extra_param="", fit="Trainer(model).fit(loader, 20)"
)
NEAR_MISS["one_label_through_random_split_and_trainer_methods"] = _TRAINER.format(
    target="target = self.index[self.tags[i][0]]", extra_param="", fit="Trainer(model).fit(loader, 20)"
)
NEAR_MISS["fit_also_called_on_an_object_of_unknown_class"] = _TRAINER.format(
    target=_MULTI_HOT, extra_param=", other", fit="Trainer(model).fit(loader, 20)\n    other.fit(rows, 3)"
)
SEEN["multi_hot_through_random_split_and_trainer_methods"] = (
    "benchmarks/fresh/lint10 r02_satellite_scene_tags.py (tuning half)"
)

# A row's labels set one by one in a loop over that row's tags (the loop picks the column, not the row), the
# matrix returned with the vocabulary by an encoding function of the file.
_ENCODED = """
import torch
import torch.nn.functional as F
def encode(records, vocab):
    y = torch.zeros(len(records), len(vocab))
    for i, rec in enumerate(records):
        {fill}
    return vocab, y
def train(model, feats, records, vocab, opt):
    names, y = encode(records, vocab)
    for epoch in range(5):
        loss = F.cross_entropy(model(feats), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
PITFALL["labels_of_a_row_set_in_a_loop_over_its_tags"] = _ENCODED.format(
    fill="for tag in rec['tags']:\n            y[i, vocab[tag]] = 1.0"
)
# one-hot: the inner loop picks the row (every sample of one class gets that class's column)
NEAR_MISS["rows_of_a_class_set_in_a_loop_over_its_samples"] = _ENCODED.format(
    fill="for j in rec['members']:\n            y[j, rec['label']] = 1.0"
)
SEEN["labels_of_a_row_set_in_a_loop_over_its_tags"] = (
    "fresh set 15's j09 (held-out half, scored): genres split per film, targets[row, index[g]] = 1.0 in a loop "
    "over the film's genres, returned by encode_genres with the genre list; the same fill in public multi-label "
    "code (find_string '[i, label2idx[': a chest X-ray labels matrix, bird-call secondary labels)"
)
SEEN["rows_of_a_class_set_in_a_loop_over_its_samples"] = "a one-hot matrix built class by class, written for the guard"
