"""PTF122 (distribution-sample-n): Distribution.sample_n, a FutureWarning since torch 2.4."""
PITFALL = {
    "attribute_receiver": "class Gen:\n    def draw(self, n):\n        return self.dist.sample_n(n)\n",
    "normal": "import torch\nfrom torch.distributions import Normal\n\nz = Normal(torch.zeros(2), torch.ones(2)).sample_n(16)\n",
    "categorical_in_loop": "from torch.distributions import Categorical\n\ndef rollout(logits, steps):\n    d = Categorical(logits=logits)\n    return [d.sample_n(4) for _ in range(steps)]\n",
    "aliased_module": "import torch.distributions as D\n\nm = D.Bernoulli(probs=0.3)\nsamples = m.sample_n(100)\n",
    "in_method_with_keyword_n": "import torch\n\nclass Prior:\n    def __init__(self):\n        self.base = torch.distributions.Uniform(0.0, 1.0)\n\n    def __call__(self, k):\n        return self.base.sample_n(n=k)\n",
    "annotated_parameter": 'import torch\nfrom torch.distributions import Distribution\n\ndef draw(d: Distribution, n: int):\n    return d.sample_n(n)\n',
}
NEAR_MISS = {
    "sample_shape": "from torch.distributions import Normal\n\nz = Normal(0.0, 1.0).sample((16,))\n",
    "rsample": "from torch.distributions import Normal\n\nz = Normal(0.0, 1.0).rsample(torch.Size([16]))\n",
    "pandas_sample": "import pandas as pd\n\nrows = pd.DataFrame({'a': [1, 2]}).sample(n=1)\n",
}
SEEN = {
    "attribute_receiver": "kornia/augmentation/random_generator/base.py (out = self.dist.sample_n(n), in build/realcode/untuned)",
    "normal": "not found by search",
    "categorical_in_loop": "not found by search",
    "aliased_module": "not found by search",
    "in_method_with_keyword_n": "not found by search",
}

# the pitfall on an object whose type the file does not show: reported only with --preview
PREVIEW = {name: PITFALL.pop(name) for name in ("attribute_receiver",)}
