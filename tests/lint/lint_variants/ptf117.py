"""PTF117 (clip-grad-norm-without-underscore): the deprecated clip_grad_norm alias."""
PITFALL = {
    "nn_utils_attribute": "import torch.nn as nn\n\ndef step(model, opt, args):\n    nn.utils.clip_grad_norm(model.parameters(), args.clip)\n    opt.step()\n",
    "from_utils_import": "from torch.nn.utils import clip_grad_norm\n\ndef train_epoch(model, loss):\n    loss.backward()\n    clip_grad_norm(model.parameters(), max_norm=1.0)\n",
    "clip_grad_module": "from torch.nn.utils.clip_grad import clip_grad_norm\n\nclass GradClipper:\n    def step(self, params):\n        clip_grad_norm(params, self.grad_clip)\n",
    "full_path": "import torch\n\ntotal = torch.nn.utils.clip_grad_norm(model.parameters(), 5)\n",
    "in_loop": "import torch\n\nfor batch in loader:\n    loss = model(batch)\n    loss.backward()\n    torch.nn.utils.clip_grad_norm(model.parameters(), 0.25)\n",
}
NEAR_MISS = {
    "underscore": "import torch\n\ntorch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n",
    "own_wrapper_named_clip_grad_norm": "from torch.nn.utils.clip_grad import clip_grad_norm_\n\ndef clip_grad_norm(*, parameters, clip_norm):\n    return clip_grad_norm_(parameters, clip_norm)\n\nclip_grad_norm(parameters=[], clip_norm=1.0)\n",
    "accelerator_method": "def step(accelerator, model):\n    accelerator.clip_grad_norm_(model.parameters(), 1.0)\n",
}
SEEN = {
    "nn_utils_attribute": "https://github.com/keon/seq2seq/pull/26 and https://github.com/NVIDIA/tacotron2/pull/90 (downstream fixes, cited by the case)",
    "from_utils_import": "code search rank 10 of 'nn.utils.clip_grad_norm(model.parameters(), args.clip)': 'from torch.nn.utils import clip_grad_norm' beside clip_grad_norm_",
    "clip_grad_module": "code search rank 12: GradClipper using 'from torch.nn.utils.clip_grad import clip_grad_norm'",
    "full_path": "NVIDIA/tacotron2 (train.py, fixed by pull 90)",
    "in_loop": "keon/seq2seq (train loop, fixed by pull 26)",
}
