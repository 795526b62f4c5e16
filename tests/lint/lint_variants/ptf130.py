"""PTF130 (stft-without-return-complex): torch.stft on a real signal without return_complex, an
error since torch 2.0."""
PITFALL = {
    "positional": "import torch\n\ndef spec(x):\n    return torch.stft(x, 512, 128)\n",
    "keywords": "import torch\n\ndef spec(x, window):\n    return torch.stft(input=x, n_fft=1024, hop_length=256, win_length=1024, window=window)\n",
    "aliased": "import torch as th\n\nS = th.stft(th.randn(16000), n_fft=400, hop_length=160, window=th.hann_window(400))\n",
    "in_loop": "import torch\n\ndef multi(x, sizes):\n    return [torch.stft(x, n, n // 4, window=torch.hann_window(n, device=x.device)) for n in sizes]\n",
    "functional_module": "import torch.functional as tf\n\nS = tf.stft(signal, 256)\n",
}
NEAR_MISS = {
    "return_complex_true": "import torch\n\nS = torch.stft(x, 512, return_complex=True)\n",
    "kwargs_forwarded": "import torch\n\ndef stft(x, **kwargs):\n    return torch.stft(x, **kwargs)\n",
    "librosa": "import librosa\n\nS = librosa.stft(y, n_fft=512, hop_length=128)\n",
    "torchaudio_transform": "import torchaudio\n\nspec = torchaudio.transforms.Spectrogram(n_fft=512)\n",
}
SEEN = {
    "positional": "cschaefer26/StyleMelGAN stylemelgan/losses.py (the pre-1.7 branch: torch.stft(input=x, n_fft=..., ...) with no return_complex)",
    "keywords": "cschaefer26/StyleMelGAN stylemelgan/losses.py",
    "aliased": "not found by search",
    "in_loop": "not found by search",
    "functional_module": "not found by search",
}
