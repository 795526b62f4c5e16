"""PTF129 (torch-load-pickle-args-ignored): pickle arguments to torch.load without weights_only=False."""
PITFALL = {
    "encoding_latin1": "import torch\n\nstate = torch.load('py2.pth', encoding='latin1')\n",
    "with_map_location": "import torch\n\ndef load(path):\n    return torch.load(path, map_location='cpu', encoding='bytes')\n",
    "aliased": "import torch as th\n\nckpt = th.load(f, encoding='latin1', map_location=lambda s, l: s)\n",
    "in_loop": "import torch\n\nmodels = [torch.load(p, encoding='latin1') for p in paths]\n",
    "serialization_module": "from torch.serialization import load\n\nstate = load('old.pt', encoding='latin1')\n",
}
NEAR_MISS = {
    "weights_only_false": "import torch\n\nstate = torch.load('py2.pth', encoding='latin1', weights_only=False)\n",
    "pickle_load": "import pickle\n\nwith open('x.pkl', 'rb') as f:\n    obj = pickle.load(f, encoding='latin1')\n",
    "numpy_load": "import numpy as np\n\narr = np.load('x.npy', allow_pickle=True, encoding='latin1')\n",
}
SEEN = {name: "not found by search; encoding='latin1' is how Python 2 checkpoints are read (torch.load docs)" for name in PITFALL}
