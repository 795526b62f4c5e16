"""PTF107 (no-grad-decorating-class): torch.no_grad() on a class, deprecated since 2.0."""
PITFALL = {
    "called_decorator": "import torch\n\n@torch.no_grad()\nclass Evaluator:\n    def __call__(self, model, x):\n        return model(x)\n",
    "bare_decorator": "import torch\n\n@torch.no_grad\nclass Predictor:\n    def run(self, x):\n        return x * 2\n",
    "from_import": "from torch import no_grad\n\n@no_grad()\nclass EMA:\n    def update(self, model):\n        pass\n",
    "inference_mode": "import torch\n\n@torch.inference_mode()\nclass Sampler:\n    def sample(self, n):\n        return n\n",
    "enable_grad": "import torch as T\n\n@T.enable_grad()\nclass Attack:\n    def perturb(self, x):\n        return x\n",
}
NEAR_MISS = {
    "method_decorated": "import torch\n\nclass Evaluator:\n    @torch.no_grad()\n    def __call__(self, model, x):\n        return model(x)\n",
    "function_decorated": "import torch\n\n@torch.no_grad()\ndef evaluate(model, x):\n    return model(x)\n",
    "dataclass": "from dataclasses import dataclass\n\n@dataclass\nclass Config:\n    lr: float = 0.1\n",
}
SEEN = {
    "called_decorator": "https://github.com/pytorch/pytorch/issues/99186 area: no_grad on a class (warning text 'Decorating classes is deprecated'); code search showed method-level @torch.enable_grad() in jshe2304/dlrg utils/grad.py",
    "bare_decorator": "jshe2304/dlrg utils/grad.py (@torch.enable_grad() as a decorator; bare form from the torch docs)",
    "from_import": "jshe2304/dlrg utils/grad.py (decorator spelling)",
    "inference_mode": "jshe2304/dlrg utils/grad.py (grad-mode decorators)",
    "enable_grad": "jshe2304/dlrg utils/grad.py (@torch.enable_grad())",
}
