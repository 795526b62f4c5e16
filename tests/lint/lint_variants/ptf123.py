"""PTF123 (named-tensors-removed): named tensors, removed in torch 2.13."""
PITFALL = {
    "factory_names": "import torch\n\nimgs = torch.randn(2, 3, 8, 8, names=('N', 'C', 'H', 'W'))\n",
    "refine_names": "def to_named(x):\n    return x.refine_names('N', 'C', 'H', 'W')\n",
    "align_to": "def channels_last(x):\n    return x.align_to('N', 'H', 'W', 'C')\n",
    "rename_inplace": "def label(x):\n    x.rename_(None)\n    return x\n",
    "read_names_of_a_tensor": "def check(t):\n    if t.dim() == 4 and t.names[1] == 'C':\n        return t.shape[1]\n",
}
NEAR_MISS = {
    "dataframe_names": "import pandas as pd\n\ndef cols(df):\n    return df.columns.names\n",
    "argparse_names": "def flags(args):\n    return args.names\n",
    "other_library_names_kw": "import numpy as np\n\nrec = np.rec.fromarrays([[1], [2]], names='a,b')\n",
}
SEEN = {
    "factory_names": "not found by search; named-tensor tutorial spelling",
    "refine_names": "not found by search",
    "align_to": "not found by search",
    "rename_inplace": "not found by search",
    "read_names_of_a_tensor": "not found by search",
}
