"""PTF113 (sampler-data-source): Sampler.__init__(data_source), a TypeError since torch 2.10."""
PITFALL = {
    "super_py3": "from torch.utils.data import Sampler\n\nclass BucketSampler(Sampler):\n    def __init__(self, data_source, batch_size):\n        super().__init__(data_source)\n        self.batch_size = batch_size\n",
    "super_py2_style": "from torch.utils.data import Sampler\n\nclass RandomCycleIter(Sampler):\n    def __init__(self, data_source):\n        super(RandomCycleIter, self).__init__(data_source)\n        self.data_source = data_source\n",
    "sampler_module_path": "import torch.utils.data.sampler as sampler\nfrom torch.utils.data.sampler import Sampler\n\nclass Sub(Sampler):\n    def __init__(self, indices):\n        super().__init__(indices)\n        self.indices = indices\n",
    "torch_path_base": "import torch\n\nclass ClassBalanced(torch.utils.data.Sampler):\n    def __init__(self, dataset, num_samples):\n        super().__init__(dataset)\n        self.n = num_samples\n",
    "keyword_style_base": "from torch.utils.data import Sampler\n\nclass Infinite(Sampler):\n    def __init__(self, ds, shuffle=True):\n        super(Infinite, self).__init__(ds)\n        self.shuffle = shuffle\n",
}
NEAR_MISS = {
    "no_argument": "from torch.utils.data import Sampler\n\nclass BucketSampler(Sampler):\n    def __init__(self, data_source):\n        super().__init__()\n        self.data_source = data_source\n",
    "distributed_sampler_base": "from torch.utils.data.distributed import DistributedSampler\n\nclass Mine(DistributedSampler):\n    def __init__(self, dataset):\n        super().__init__(dataset)\n",
    "batch_sampler_base": "from torch.utils.data import BatchSampler\n\nclass Mine(BatchSampler):\n    def __init__(self, sampler, bs):\n        super().__init__(sampler, bs, False)\n",
}
SEEN = {
    "super_py3": "https://github.com/NVIDIA/physicsnemo/pull/525 (InfiniteSampler: don't pass dataset to super class); https://github.com/pytorch/pytorch/issues/123172",
    "super_py2_style": "https://github.com/pytorch/pytorch/issues/27421 (Sampler subclasses taking data_source)",
    "sampler_module_path": "not found by search",
    "torch_path_base": "not found by search",
    "keyword_style_base": "not found by search",
}
