"""PTF133 (pytree-register-private-deprecated): torch.utils._pytree._register_pytree_node, deprecated
since torch 2.2."""
PITFALL = {
    "full_path": "import torch.utils._pytree\n\ndef register(cls):\n    torch.utils._pytree._register_pytree_node(cls, lambda x: (list(x.values()), list(x.keys())), lambda v, c: cls(zip(c, v)))\n",
    "from_import": "from torch.utils._pytree import _register_pytree_node\n\n_register_pytree_node(MyOutput, flatten, unflatten)\n",
    "module_alias": "import torch.utils._pytree as pytree\n\npytree._register_pytree_node(Point, lambda p: ([p.x, p.y], None), lambda v, _: Point(*v))\n",
    "in_init_subclass": "import torch.utils._pytree as _torch_pytree\n\nclass ModelOutput(dict):\n    def __init_subclass__(cls):\n        _torch_pytree._register_pytree_node(cls, _flatten, _unflatten)\n",
    "from_utils_import": "from torch.utils import _pytree\n\n_pytree._register_pytree_node(Box, flat, unflat)\n",
}
NEAR_MISS = {
    "public_api": "import torch.utils._pytree as pytree\n\npytree.register_pytree_node(Point, flat, unflat, serialized_type_name='mod.Point')\n",
    "version_helper_else": "import torch.utils._pytree\nfrom diffusers.utils import is_torch_version\n\ndef register(cls):\n    if is_torch_version('<', '2.2'):\n        torch.utils._pytree._register_pytree_node(cls, flat, unflat)\n    else:\n        torch.utils._pytree.register_pytree_node(cls, flat, unflat)\n",
    "hasattr_guard": "import torch.utils._pytree as pytree\n\nif hasattr(pytree, 'register_pytree_node'):\n    pytree.register_pytree_node(Box, flat, unflat)\nelse:\n    pytree._register_pytree_node(Box, flat, unflat)\n",
    "jax_tree_util": "import jax\n\njax.tree_util.register_pytree_node(Box, flat, unflat)\n",
}
SEEN = {
    "full_path": "diffusers/utils/outputs.py (torch.utils._pytree._register_pytree_node(cls, ...) behind is_torch_version('<', '2.2'), in build/realcode/untuned)",
    "from_import": "not found by search",
    "module_alias": "not found by search",
    "in_init_subclass": "diffusers/utils/outputs.py (ModelOutput.__init_subclass__)",
    "from_utils_import": "not found by search",
}
