"""PTF116 (clip-grad-norm-exhausted-generator): a parameters() generator used twice; the clip sees nothing."""
PITFALL = {
    "optimizer_then_clip": "import torch\n\ndef train(model, loss):\n    params = model.parameters()\n    opt = torch.optim.SGD(params, lr=0.1)\n    loss.backward()\n    torch.nn.utils.clip_grad_norm_(params, 1.0)\n    opt.step()\n",
    "from_import": "from torch.nn.utils import clip_grad_norm_\nfrom torch.optim import Adam\n\ndef fit(net, loss):\n    params = net.parameters()\n    opt = Adam(params)\n    loss.backward()\n    clip_grad_norm_(params, max_norm=5.0)\n",
    "clip_value": "import torch\n\ndef fit(net, loss):\n    ps = net.parameters()\n    opt = torch.optim.Adam(ps, lr=1e-3)\n    loss.backward()\n    torch.nn.utils.clip_grad_value_(ps, 0.5)\n",
    "in_loop": "import torch\n\ndef fit(model, batches):\n    params = model.parameters()\n    opt = torch.optim.SGD(params, lr=0.01)\n    for x in batches:\n        model(x).sum().backward()\n        torch.nn.utils.clip_grad_norm_(params, 1.0)\n        opt.step()\n",
    "clip_grad_module": "import torch\nfrom torch.nn.utils.clip_grad import clip_grad_norm_\n\ndef fit(model, loss):\n    params = model.parameters()\n    opt = torch.optim.AdamW(params)\n    loss.backward()\n    clip_grad_norm_(params, 2.0)\n",
}
NEAR_MISS = {
    "list_of_params": "import torch\n\ndef train(model, loss):\n    params = list(model.parameters())\n    opt = torch.optim.SGD(params, lr=0.1)\n    torch.nn.utils.clip_grad_norm_(params, 1.0)\n",
    "fresh_generator": "import torch\n\ndef train(model, opt, loss):\n    loss.backward()\n    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n    opt.step()\n",
    "filtered_list": "import torch\n\ndef train(model, opt):\n    params = [p for p in model.parameters() if p.grad is not None]\n    torch.nn.utils.clip_grad_norm_(params, 1.0)\n",
}
SEEN = {
    "optimizer_then_clip": "code search 'nn.utils.clip_grad_norm(model.parameters(), args.clip)': run_training() builds params from model.parameters() before clipping (rank 11)",
    "from_import": "not found by search",
    "clip_value": "code search rank 6: ClipGradValue calling clip_grad_value_(model.parameters(), ...)",
    "in_loop": "not found by search",
    "clip_grad_module": "code search rank 5/8: Trainer using 'from torch.nn.utils.clip_grad import clip_grad_norm_'",
}
