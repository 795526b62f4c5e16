"""PTF111 (weight-norm-deprecated): torch.nn.utils.weight_norm, deprecated since 2.1."""
PITFALL = {
    "from_utils_import": "from torch import nn\nfrom torch.nn.utils import weight_norm\n\ndef WNConv1d(*args, **kwargs):\n    return weight_norm(nn.Conv1d(*args, **kwargs))\n",
    "full_path": "import torch\n\ndef WNConv1d(*args, **kwargs):\n    return torch.nn.utils.weight_norm(torch.nn.Conv1d(*args, **kwargs))\n",
    "nn_alias_on_self": "import torch.nn as nn\n\nclass NormConv(nn.Conv1d):\n    def __init__(self, i, o, k):\n        super().__init__(i, o, k)\n        nn.utils.weight_norm(self)\n",
    "submodule_import": "from torch.nn import Conv1d, ConvTranspose1d\nfrom torch.nn.utils.weight_norm import weight_norm\n\ndef Conv1dWN(*args, **kwargs):\n    return weight_norm(Conv1d(*args, **kwargs))\n",
    "in_module_list_loop": "import torch.nn as nn\nfrom torch.nn.utils import weight_norm\n\nclass Gen(nn.Module):\n    def __init__(self, chans):\n        super().__init__()\n        self.ups = nn.ModuleList()\n        for c in chans:\n            self.ups.append(weight_norm(nn.ConvTranspose1d(c, c // 2, 4, 2, 1)))\n",
}
NEAR_MISS = {
    "parametrizations": "from torch import nn\nfrom torch.nn.utils.parametrizations import weight_norm\n\nconv = weight_norm(nn.Conv1d(1, 1, 3))\n",
    "hasattr_guard": "from torch import nn\n\nif hasattr(nn.utils.parametrizations, 'weight_norm'):\n    weight_norm = nn.utils.parametrizations.weight_norm\nelse:\n    weight_norm = nn.utils.weight_norm\n",
    "spectral_norm": "from torch import nn\nfrom torch.nn.utils import spectral_norm\n\nconv = spectral_norm(nn.Conv2d(3, 3, 3))\n",
    "remove_weight_norm": "from torch.nn.utils import remove_weight_norm\n\ndef strip(m):\n    remove_weight_norm(m)\n",
}
SEEN = {
    "from_utils_import": "tgritsaev/hifi-gan src/model/utils.py; spencersutton/index-tts indextts/s2mel/dac/nn/layers.py (weight_norm(nn.Conv1d(*args, **kwargs)))",
    "full_path": "code search 'from torch.nn.utils import weight_norm Conv1d' rank 12 (torch.nn.utils.weight_norm(torch.nn.Conv1d(...)))",
    "nn_alias_on_self": "leetemil/thesis src/models/wavenet/norm_conv.py (nn.utils.weight_norm(self))",
    "submodule_import": "code search rank 8: from torch.nn.utils.weight_norm import weight_norm; Conv1dWN",
    "in_module_list_loop": "diffusers/models/autoencoders/autoencoder_oobleck.py (weight_norm per block, in build/realcode/untuned)",
}
