"""PTF102 (torch-six-removed): importing torch._six, removed in torch 2.0."""
PITFALL = {
    "from_six_import_inf": "from torch._six import inf\n\ndef clip(total):\n    return total if total != inf else 0.0\n",
    "string_classes": "from torch._six import string_classes\n\ndef is_key(x):\n    return isinstance(x, string_classes)\n",
    "container_abcs_in_collate": "import torch\nfrom torch._six import container_abcs, int_classes\n\ndef collate(batch):\n    if isinstance(batch[0], container_abcs.Mapping):\n        return {k: collate([d[k] for d in batch]) for k in batch[0]}\n    return torch.stack(batch)\n",
    "import_module": "import torch._six\n\nINF = torch._six.inf\n",
    "inside_function": "def norm_type(value):\n    from torch._six import inf\n    return inf if value == 'inf' else float(value)\n",
}
NEAR_MISS = {
    "import_error_fallback": "try:\n    from torch._six import inf\nexcept ImportError:\n    from math import inf\n",
    "broad_except_fallback": "try:\n    from torch._six import container_abcs\nexcept Exception:\n    from collections import abc as container_abcs\n",
    "math_inf": "from math import inf\nimport collections.abc as container_abcs\n",
    "six_library": "from six import string_types\n\ndef is_key(x):\n    return isinstance(x, string_types)\n",
    "version_guarded": "import torch\nif torch.__version__ < '2':\n    from torch._six import inf\nelse:\n    from math import inf\n",
}
SEEN = {
    "from_six_import_inf": "code search 'from torch._six import inf': pytorch/pytorch torch/_six.py (what the module held); util/compat.py shims",
    "string_classes": "https://github.com/rom1504/clip-retrieval (issues about torch._six after 2.0); code search: compat.py 'from torch._six import string_classes'",
    "container_abcs_in_collate": "code search: 'ensure_torch_container_abcs' shim for timm==0.3.2 importing torch._six.container_abcs",
    "import_module": "code search: modify_torch_six_import() (sys.modules['torch._six'] shim, Amazon-licensed repo)",
    "inside_function": "code search: util/compat.py (torch._six imports inside try)",
}
