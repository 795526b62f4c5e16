"""PTF105 (functorch-deprecated): functorch's transforms, deprecated since torch 2.0."""
PITFALL = {
    "from_functorch_import": "import torch\nfrom functorch import vmap, grad\n\ndef per_sample(loss_fn, w, x, y):\n    return vmap(grad(loss_fn), in_dims=(None, 0, 0))(w, x, y)\n",
    "module_attribute": "import torch\nimport functorch\n\nresult = functorch.vmap(lambda v: v.relu())(torch.randn(3, 5))\n",
    "make_functional_with_buffers": "import functorch\n\ndef functional(model):\n    fmodel, params, buffers = functorch.make_functional_with_buffers(model)\n    return fmodel, params, buffers\n",
    "aliased": "import functorch as ft\n\ndef jac(f, x):\n    return ft.jacrev(f)(x)\n",
    "ensemble": "from functorch import combine_state_for_ensemble, vmap\n\ndef ensemble(models, x):\n    fmodel, params, buffers = combine_state_for_ensemble(models)\n    return vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)\n",
}
NEAR_MISS = {
    "torch_func": "import torch\nfrom torch.func import vmap, grad\n\ndef per_sample(loss_fn, w, x, y):\n    return vmap(grad(loss_fn), in_dims=(None, 0, 0))(w, x, y)\n",
    "import_fallback": "try:\n    from torch.func import vmap\nexcept ImportError:\n    from functorch import vmap\n\nout = vmap(abs)\n",
    "hasattr_guard": "import torch\nif hasattr(torch, 'func'):\n    jacrev = torch.func.jacrev\nelse:\n    import functorch\n    jacrev = functorch.jacrev\n",
    "jax_vmap": "import jax\n\nf = jax.vmap(jax.grad(lambda w: (w ** 2).sum()))\n",
}
SEEN = {
    "from_functorch_import": "curtkim/python-first jax-first/03_vmap_grad.py (from functorch import vmap, grad)",
    "module_attribute": "pytorch/test-infra tools/torchfix/tests/fixtures/codemod/functorch.py (functorch.vmap(model)(examples))",
    "make_functional_with_buffers": "code search 'from functorch import vmap, grad, make_functional' rank 8 (functorch.make_functional_with_buffers(model_functorch))",
    "aliased": "pytorch/test-infra tools/torchfix/tests/fixtures/codemod/functorch.py (functorch.jacrev())",
    "ensemble": "code search rank 10: torch/_functorch make_functional exports combine_state_for_ensemble (the model-ensembling tutorial's spelling)",
}
