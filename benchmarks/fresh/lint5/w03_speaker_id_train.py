"""Speaker identification on VoxCeleb-style utterances: MFCC frames -> BiLSTM -> speaker logits."""

import random

import torch
import torch.nn as nn
import torchaudio
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset

SAMPLE_RATE = 16000
N_MFCC = 40


class UtteranceSet(Dataset):
    def __init__(self, items, max_seconds=6.0):
        self.items = items  # list of (wav_path, speaker_index)
        self.max_len = int(max_seconds * SAMPLE_RATE)
        self.mfcc = torchaudio.transforms.MFCC(sample_rate=SAMPLE_RATE, n_mfcc=N_MFCC)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, speaker = self.items[i]
        wav, sr = torchaudio.load(path)
        if sr != SAMPLE_RATE:
            wav = torchaudio.functional.resample(wav, sr, SAMPLE_RATE)
        wav = wav.mean(0)[: self.max_len]
        feats = self.mfcc(wav).transpose(0, 1)  # (frames, n_mfcc)
        feats = (feats - feats.mean(0)) / (feats.std(0) + 1e-5)
        return feats, speaker


def collate(batch):
    feats, speakers = zip(*batch)
    lengths = torch.tensor([f.shape[0] for f in feats])
    return pad_sequence(feats, batch_first=True), lengths, torch.tensor(speakers)


class SpeakerNet(nn.Module):
    def __init__(self, n_speakers, hidden=256):
        super().__init__()
        self.rnn = nn.LSTM(N_MFCC, hidden, num_layers=2, batch_first=True, bidirectional=True, dropout=0.2)
        self.proj = nn.Sequential(nn.Linear(2 * hidden, 256), nn.ReLU(), nn.Dropout(0.3))
        self.classify = nn.Linear(256, n_speakers)

    def forward(self, x, lengths):
        _, (h_n, _) = self.rnn(x)
        utterance = torch.cat([h_n[-2], h_n[-1]], dim=1)
        return self.classify(self.proj(utterance))


def validate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, lengths, y in loader:
            logits = model(x.to(device), lengths)
            correct += (logits.argmax(dim=1).cpu() == y).sum().item()
            total += y.numel()
    return correct / total


def run(train_items, val_items, n_speakers, epochs=30, device="cuda"):
    random.shuffle(train_items)
    train_loader = DataLoader(UtteranceSet(train_items), batch_size=64, shuffle=True,
                              num_workers=6, collate_fn=collate)
    val_loader = DataLoader(UtteranceSet(val_items), batch_size=64, num_workers=6, collate_fn=collate)
    model = SpeakerNet(n_speakers).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    model.train()
    for epoch in range(epochs):
        total_loss, seen = 0.0, 0
        for x, lengths, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x, lengths), y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
            optimizer.step()
            total_loss += loss.item() * y.size(0)
            seen += y.size(0)
        acc = validate(model, val_loader, device)
        print(f"epoch {epoch}: train loss {total_loss / seen:.3f}, val acc {acc:.3%}")
    torch.save(model.state_dict(), "speaker_net.pt")
    return model
