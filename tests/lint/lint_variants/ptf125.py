"""PTF125 (state-dict-positional-args): Module.state_dict(destination, prefix) positionally, a
FutureWarning since torch 2.4."""
PITFALL = {
    "override_forwarding_positionally": "import torch.nn as nn\n\nclass Wrapper(nn.Module):\n    def state_dict(self, destination=None, prefix='', keep_vars=False):\n        return self.module.state_dict(destination, prefix, keep_vars)\n",
    "two_positional": "def collect(model, out):\n    return model.state_dict(out, 'model.')\n",
    "in_loop_over_children": "from collections import OrderedDict\n\ndef gather(modules):\n    dest = OrderedDict()\n    for name, m in modules.items():\n        m.state_dict(dest, name + '.')\n    return dest\n",
    "ema_module": "import torch.nn as nn\n\nclass EMA(nn.Module):\n    def state_dict(self, destination=None, prefix='', keep_vars=False):\n        return self.shadow.state_dict(destination, prefix + 'shadow.', keep_vars)\n",
    "self_module_chained": "def export(self, dest):\n    return self.model.module.state_dict(dest, '')\n",
    "built_module": "import torch.nn as nn\nfrom collections import OrderedDict\n\nencoder = nn.Sequential(nn.Linear(8, 8), nn.ReLU())\nstate = encoder.state_dict(OrderedDict(), 'encoder.')\n",
    "annotated_parameter": "import torch.nn as nn\n\ndef collect(model: nn.Module, out: dict) -> dict:\n    return model.state_dict(out, 'model.')\n",
    "children_of_a_module": "from collections import OrderedDict\nimport torchvision\n\nnet = torchvision.models.resnet18()\ndest = OrderedDict()\nfor child in net.children():\n    child.state_dict(dest, 'part.')\n",
}
NEAR_MISS = {
    "keywords": "import torch.nn as nn\n\nclass Wrapper(nn.Module):\n    def state_dict(self, destination=None, prefix='', keep_vars=False):\n        return self.module.state_dict(destination=destination, prefix=prefix, keep_vars=keep_vars)\n",
    "no_arguments": "def save(model, opt):\n    return {'model': model.state_dict(), 'opt': opt.state_dict()}\n",
    "plain_class_with_own_state_dict": "class Tracker:\n    def state_dict(self, full):\n        return dict(self.stats) if full else {}\n\n    def save(self):\n        return self.state_dict(True)\n",
    "accelerator_get_state_dict": "def save(accelerator, model):\n    return accelerator.get_state_dict(model, unwrap=True)\n",
}
SEEN = {
    "override_forwarding_positionally": "https://github.com/deepspeedai/DeepSpeed/pull/5408 (engine.py module_state_dict: self.module.state_dict(destination, prefix, keep_vars))",
    "two_positional": "not found by search",
    "in_loop_over_children": "not found by search",
    "ema_module": "https://github.com/determined-ai/determined/issues/4062 and https://github.com/MIC-DKFZ/nnUNet/issues/1077 (the positional-arguments warning from wrappers)",
    "self_module_chained": "not found by search",
}

# the pitfall on an object whose type the file does not show: reported only with --preview
PREVIEW = {name: PITFALL.pop(name) for name in ("two_positional", "in_loop_over_children", "self_module_chained")}
