"""PTF108 (stateless-functional-call): torch.nn.utils.stateless.functional_call, deprecated in 2.0."""
PITFALL = {
    "module_path": "import torch\n\ndef f(model, params, x):\n    return torch.nn.utils.stateless.functional_call(model, params, (x,))\n",
    "from_import": "from torch.nn.utils.stateless import functional_call\n\ndef f(model, params, x):\n    return functional_call(model, params, x)\n",
    "module_alias": "from torch.nn.utils import stateless\n\ndef f(model, params, x):\n    return stateless.functional_call(model, params, (x,))\n",
    "import_as": "import torch.nn.utils.stateless as stateless\n\ndef loss(model, p, x, y):\n    out = stateless.functional_call(model, p, (x,))\n    return ((out - y) ** 2).mean()\n",
    "in_loop": "from torch.nn.utils import stateless\n\ndef maml(model, tasks, fast):\n    return [stateless.functional_call(model, fast, (x,)) for x, _ in tasks]\n",
}
NEAR_MISS = {
    "torch_func": "from torch.func import functional_call\n\ndef f(model, params, x):\n    return functional_call(model, params, (x,))\n",
    "import_fallback": "try:\n    from torch.func import functional_call\nexcept ImportError:\n    from torch.nn.utils.stateless import functional_call\n",
    "own_helper": "def functional_call(module, params, args):\n    return module(*args)\n\nout = functional_call(None, {}, ())\n",
}
SEEN = {
    "module_path": "code search rank 10 of 'from functorch import ...': torch/_functorch exports (torch.func.functional_call is the replacement); spelling as in the torch 1.12-1.13 docs",
    "from_import": "code search (functorch/torch.func migration results): functional_call imported by name",
    "module_alias": "not found by search; the module-alias spelling of the two above",
    "import_as": "not found by search; the import-as spelling of the two above",
    "in_loop": "not found by search; MAML-style inner loop",
}
