"""PTF104 (stft-return-complex-false-deprecated): stft(return_complex=False), deprecated since 2.0."""
PITFALL = {
    "torch_stft_keyword": "import torch\n\ndef spec(x, n_fft=512):\n    window = torch.hann_window(n_fft)\n    return torch.stft(x, n_fft, hop_length=128, window=window, return_complex=False)\n",
    "method_form": "import torch\n\ndef spec(wav):\n    return wav.stft(n_fft=512, return_complex=False)\n",
    "input_keyword_in_loss": "import torch\n\nclass STFTLoss(torch.nn.Module):\n    def forward(self, x):\n        x_stft = torch.stft(input=x, n_fft=self.n_fft, hop_length=self.hop, win_length=self.win,\n                            window=self.window, return_complex=False)\n        real, imag = x_stft[..., 0], x_stft[..., 1]\n        return (real ** 2 + imag ** 2).sqrt()\n",
    "aliased_torch": "import torch as th\n\nmag = th.stft(th.randn(16000), 400, return_complex=False).pow(2).sum(-1)\n",
    "in_loop": "import torch\n\ndef multi_res(x, sizes):\n    out = []\n    for n in sizes:\n        out.append(torch.stft(x, n, return_complex=False))\n    return out\n",
}
NEAR_MISS = {
    "return_complex_true_view_as_real": "import torch\n\ndef spec(x):\n    return torch.view_as_real(torch.stft(x, 512, return_complex=True))\n",
    "version_guarded": "import torch\nfrom packaging.version import parse as V\n\ndef spec(x):\n    if V(torch.__version__) >= V('1.7'):\n        return torch.view_as_real(torch.stft(x, 512, return_complex=True))\n    else:\n        return torch.stft(x, 512, return_complex=False)\n",
    "librosa_stft": "import librosa\n\ndef spec(y):\n    return librosa.stft(y, n_fft=512)\n",
    "paddle_signal": "import paddle\n\ny = paddle.signal.stft(paddle.rand((512, 512)), n_fft=512)\n",
}
SEEN = {
    "torch_stft_keyword": "cschaefer26/StyleMelGAN stylemelgan/losses.py (torch.stft(..., return_complex=False))",
    "method_form": "PaddlePaddle/docs docs/guides/model_convert/convert_from_pytorch/api_difference/Tensor/torch.Tensor.stft.md (torch.rand(512,512).stft(n_fft=512, return_complex=False))",
    "input_keyword_in_loss": "cschaefer26/StyleMelGAN stylemelgan/losses.py (adapted from ParallelWaveGAN stft_loss.py)",
    "aliased_torch": "code search 'import torch as th' beside stft (ComplexTensor helper, search result rank 10 of 'torch.stft return_complex=False')",
    "in_loop": "cschaefer26/StyleMelGAN stylemelgan/losses.py (multi-resolution STFT loss)",
}
