"""PTF118 (concat-dataset-cummulative-sizes): the misspelt alias, a FutureWarning since 2.4."""
PITFALL = {
    "attribute_read": "from torch.utils.data import ConcatDataset\n\nds = ConcatDataset([a, b])\nbounds = ds.cummulative_sizes\n",
    "self_attribute_in_subclass": "from torch.utils.data import ConcatDataset\n\nclass Mixed(ConcatDataset):\n    def locate(self, idx):\n        import bisect\n        return bisect.bisect_right(self.cummulative_sizes, idx)\n",
    "indexing": "def last_of_first(ds):\n    return ds.cummulative_sizes[0] - 1\n",
    "in_loop": "def offsets(datasets):\n    return [d.cummulative_sizes[-1] for d in datasets]\n",
    "as_argument": "import numpy as np\n\ndef sizes(concat):\n    return np.diff([0] + concat.cummulative_sizes)\n",
}
NEAR_MISS = {
    "correct_spelling": "from torch.utils.data import ConcatDataset\n\nbounds = ConcatDataset([a, b]).cumulative_sizes\n",
    "cumsum_classmethod": "from torch.utils.data import ConcatDataset\n\nsizes = ConcatDataset.cumsum([a, b])\n",
    "getattr_fallback": "def bounds(ds):\n    return ds.cumulative_sizes if hasattr(ds, 'cumulative_sizes') else getattr(ds, 'cummulative' + '_sizes')\n",
}
SEEN = {
    "attribute_read": "not found by search; the case's own sources (torch 2.4 release notes)",
    "self_attribute_in_subclass": "not found by search",
    "indexing": "not found by search",
    "in_loop": "not found by search",
    "as_argument": "not found by search",
}
