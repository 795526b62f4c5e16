"""PTF123 (named-tensors-removed): named tensors, removed in torch 2.13."""
PITFALL = {
    "factory_names": "import torch\n\nimgs = torch.randn(2, 3, 8, 8, names=('N', 'C', 'H', 'W'))\n",
    "refine_names": "def to_named(x):\n    return x.refine_names('N', 'C', 'H', 'W')\n",
    "align_to": "def channels_last(x):\n    return x.align_to('N', 'H', 'W', 'C')\n",
    "rename_inplace": "def label(x):\n    x.rename_(None)\n    return x\n",
    "read_names_of_a_tensor": "def check(t):\n    if t.dim() == 4 and t.names[1] == 'C':\n        return t.shape[1]\n",
    "refine_after_a_factory": "import torch\n\nbatch = torch.rand(8, 3, 32, 32)\nbatch = batch.refine_names('N', 'C', 'H', 'W')\n",
    "annotated_align_to": "import torch\n\ndef channels_last(x: torch.Tensor) -> torch.Tensor:\n    return x.align_to('N', 'H', 'W', 'C')\n",
    "names_of_a_model_output": 'import torch\nimport torch.nn as nn\n\nconv = nn.Conv2d(3, 8, 3)\nout = conv(torch.randn(1, 3, 16, 16))\nprint(out.names)\n',
    "parameter_passed_a_tensor": "import torch\n\ndef label(x):\n    x.rename_(None)\n    return x\n\nlabel(torch.zeros(2, 2, names=('a', 'b')))\n",
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

# the pitfall on an object whose type the file does not show: reported only with --preview
PREVIEW = {name: PITFALL.pop(name) for name in ("refine_names", "align_to", "rename_inplace", "read_names_of_a_tensor")}
