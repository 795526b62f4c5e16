"""PTF128 (transformer-norm-first-nested-tensor): TransformerEncoder over norm_first layers without
enable_nested_tensor=False warns."""
PITFALL = {
    "layer_then_encoder": "import torch.nn as nn\n\nlayer = nn.TransformerEncoderLayer(d_model=256, nhead=8, batch_first=True, norm_first=True)\nencoder = nn.TransformerEncoder(layer, num_layers=6)\n",
    "inline_layer": "import torch.nn as nn\n\nenc = nn.TransformerEncoder(nn.TransformerEncoderLayer(512, 8, norm_first=True), 4)\n",
    "in_module_init": "import torch\nfrom torch import nn\n\nclass Model(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n        layer = nn.TransformerEncoderLayer(d, 4, dim_feedforward=4 * d, norm_first=True, batch_first=True)\n        self.encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(d))\n",
    "from_import": "from torch.nn import TransformerEncoder, TransformerEncoderLayer\n\nenc = TransformerEncoder(TransformerEncoderLayer(128, 4, norm_first=True), num_layers=3)\n",
    "full_path": "import torch\n\nenc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(64, 2, norm_first=True), 2)\n",
}
NEAR_MISS = {
    "nested_off": "import torch.nn as nn\n\nlayer = nn.TransformerEncoderLayer(256, 8, norm_first=True)\nencoder = nn.TransformerEncoder(layer, 6, enable_nested_tensor=False)\n",
    "post_norm": "import torch.nn as nn\n\nencoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(256, 8), 6)\n",
    "other_library": "from x_transformers import Encoder\n\nenc = Encoder(dim=256, depth=6, heads=8, pre_norm=True)\n",
}
SEEN = {name: "not found by search; nn.TransformerEncoderLayer(norm_first=True) spellings from the torch docs" for name in PITFALL}
