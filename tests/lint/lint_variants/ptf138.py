"""PTF138 (symeig-removed): torch.symeig and Tensor.symeig, removed in torch 2.0."""
PITFALL = {
    "eigenvectors_kw": "import torch\n\nevals, evecs = torch.symeig(cov, eigenvectors=True)\n",
    "method_call": "import torch\n\ndef whiten(c):\n    e, v = c.symeig(eigenvectors=True)\n    return v @ torch.diag(e.rsqrt()) @ v.T\n",
    "eigenvalues_only": "import torch\n\ndef spectrum(h):\n    return torch.symeig(h)[0]\n",
    "upper_kw": "import torch\n\nw, v = torch.symeig(matrix, eigenvectors=True, upper=False)\n",
    "aliased_module": "import torch as th\n\ndef eig(a):\n    return th.symeig(a, True)\n",
}
NEAR_MISS = {
    "linalg_eigh": "import torch\n\nevals, evecs = torch.linalg.eigh(cov)\n",
    "eigvalsh": "import torch\n\ndef spectrum(h):\n    return torch.linalg.eigvalsh(h)\n",
    "hasattr_fallback": "import torch\n\ndef eigh(a):\n    if hasattr(torch, 'linalg') and hasattr(torch.linalg, 'eigh'):\n        return torch.linalg.eigh(a)\n    return torch.symeig(a, eigenvectors=True)\n",
    "other_library": "import scipy.linalg\n\nw, v = scipy.linalg.eigh(a)\n",
    "own_method": "class Op:\n    def symeig(self):\n        return self.m\n\n    def run(self):\n        return self.symeig()\n",
}
SEEN = {
    "eigenvectors_kw": "aiqm/torchani#627 (torch.symeig(..., eigenvectors=True) replaced by torch.linalg.eigh)",
    "method_call": "f-dangel/vivit#34 ('symeig no longer works with torch>=2.0.0': the Tensor method form)",
}
