"""PTF135 (qr-cholesky-removed): torch.qr / torch.cholesky, removed in torch 2.14."""
PITFALL = {
    "qr_function": "import torch\n\nq, r = torch.qr(torch.randn(4, 3))\n",
    "cholesky_function": "import torch\n\ndef sample(mu, cov):\n    L = torch.cholesky(cov)\n    return mu + L @ torch.randn_like(mu)\n",
    "from_import": "from torch import qr\n\ndef orth(x):\n    return qr(x)[0]\n",
    "method_on_expression": "from torch import matmul\n\ndef basis(A, R, niter):\n    (Q, _) = matmul(A, R).qr()\n    for _ in range(niter):\n        (Q, _) = matmul(A, Q).qr()\n    return Q\n",
    "method_on_annotated": "import torch\n\ndef whiten(cov: torch.Tensor):\n    return cov.cholesky()\n",
    "method_on_local_tensor": "import torch\n\ndef random_rotation(n):\n    q, r = torch.randn(n, n).qr()\n    return q\n",
}
# the pitfall on an object whose type the file does not show: reported only with --preview
PREVIEW = {
    "method_qr": "def orthogonalize(w):\n    q, r = w.qr()\n    return q\n",
    "method_cholesky_upper": "def factor(a):\n    return a.cholesky(True)\n",
}
NEAR_MISS = {
    "linalg": "import torch\n\nq, r = torch.linalg.qr(torch.randn(4, 3))\nL = torch.linalg.cholesky(torch.eye(3))\n",
    "numpy_qr": "import numpy as np\n\nq, r = np.linalg.qr(np.eye(3))\n",
    "qrcode_library": "import qrcode\n\nimg = qrcode.make('hello')\n",
    "cholesky_solve": "import torch\n\nx = torch.cholesky_solve(b, L)\n",
    # gpytorch / botorch: a kernel's output is a LinearOperator, whose cholesky() is its own
    "linear_operator": "import torch\nfrom linear_operator import to_linear_operator\n\ndef chol(model, x):\n    covar = model.covar_module(x)\n    return covar.add_jitter(1e-6).cholesky()\n",
}
SEEN = {name: "not found by search; the torch 1.9 deprecation notice's spellings (torch.qr -> torch.linalg.qr)" for name in PITFALL}
SEEN.update({
    "qr_function": "https://github.com/nii-yamagishilab/project-NN-Pytorch-scripts/issues/62 (block_waveglow.py: torch.qr(torch.randn(feat_dim, feat_dim))[0])",
    "method_on_expression": "https://github.com/pytorch/pytorch/pull/57745 (torch/_lowrank.py: (Q, _) = matmul(A, R).qr())",
})
