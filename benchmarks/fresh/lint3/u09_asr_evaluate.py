"""Evaluate a trained CTC speech recognizer (conv front-end + conformer) on LibriSpeech test-clean."""

import argparse
import csv
import logging
from collections import OrderedDict

import jiwer
import torch
import torch.nn.functional as F
import torchaudio
from torch.utils.data import DataLoader

from asr.model import ConformerCTC  # project model definition
from asr.text import CharVocab

log = logging.getLogger("asr.eval")


def collate(batch, featurizer):
    feats, lengths, texts = [], [], []
    for wav, sr, text, *_ in batch:
        assert sr == 16000
        f = featurizer(wav[0])  # (n_mels, frames)
        feats.append(f.clamp(min=1e-10).log().T)  # (frames, n_mels)
        lengths.append(f.shape[1])
        texts.append(text.lower())
    x = torch.nn.utils.rnn.pad_sequence(feats, batch_first=True)  # (B, T, n_mels)
    return x, torch.tensor(lengths), texts


def load_model(path, device):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    state = ckpt["model"]
    if next(iter(state)).startswith("module."):
        state = OrderedDict((k[len("module."):], v) for k, v in state.items())
    model = ConformerCTC(**ckpt["hparams"])
    model.load_state_dict(state, strict=True)
    model = model.to(device)
    model.eval()
    return model


def greedy_decode(log_probs, lengths, vocab):
    best = log_probs.argmax(dim=-1)  # (B, T): the best symbol at every frame
    out = []
    for seq, n in zip(best.cpu().numpy(), lengths.tolist()):
        prev, chars = -1, []
        for s in seq[:n]:
            if s != prev and s != vocab.blank:
                chars.append(vocab.itos[s])
            prev = s
        out.append("".join(chars).strip())
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkpoint")
    ap.add_argument("--root", default="/data/librispeech")
    ap.add_argument("--split", default="test-clean")
    ap.add_argument("--bs", type=int, default=16)
    ap.add_argument("--out", default="hyps.csv")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    vocab = CharVocab()
    featurizer = torchaudio.transforms.MelSpectrogram(16000, n_fft=400, hop_length=160, n_mels=80)
    ds = torchaudio.datasets.LIBRISPEECH(args.root, url=args.split, download=False)
    dl = DataLoader(ds, batch_size=args.bs, shuffle=False, num_workers=4,
                    collate_fn=lambda b: collate(b, featurizer))
    model = load_model(args.checkpoint, device)

    hyps, refs = [], []
    with torch.inference_mode():
        for x, lengths, texts in dl:
            x = x.to(device)
            logits, out_lengths = model(x, lengths.to(device))  # (B, T', vocab)
            log_probs = F.log_softmax(logits.float(), dim=-1)
            hyps += greedy_decode(log_probs, out_lengths, vocab)
            refs += texts
            if len(refs) % (20 * args.bs) == 0:
                log.info("%d utterances, running WER %.3f", len(refs), jiwer.wer(refs, hyps))

    wer = jiwer.wer(refs, hyps)
    cer = jiwer.cer(refs, hyps)
    log.info("%s: WER %.2f%%  CER %.2f%% over %d utterances", args.split, 100 * wer, 100 * cer, len(refs))
    with open(args.out, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["reference", "hypothesis"])
        writer.writerows(zip(refs, hyps))


if __name__ == "__main__":
    main()
