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

# round 6: the generator kept on the object, spent by the optimizer in __init__, clipped in another method
PITFALL["self_attribute_across_methods"] = """
import torch
from torch.nn.utils import clip_grad_norm_

class Learner:
    def __init__(self, net, lr):
        self.net = net
        self.trainable = self.net.parameters()
        self.opt = torch.optim.SGD(self.trainable, lr=lr, momentum=0.9)

    def update(self, loss):
        self.opt.zero_grad()
        loss.backward()
        clip_grad_norm_(self.trainable, 1.0)
        self.opt.step()
"""
PITFALL["self_attribute_clip_value"] = """
import torch.nn as nn
import torch.optim as optim

class Agent(nn.Module):
    def __init__(self, actor):
        super().__init__()
        self.actor = actor
        self.weights = actor.parameters()
        self.optim = optim.RMSprop(self.weights)

    def learn(self, loss):
        loss.backward()
        nn.utils.clip_grad_value_(self.weights, 0.5)
        self.optim.step()
"""
NEAR_MISS["self_attribute_listed"] = """
import torch
from torch.nn.utils import clip_grad_norm_

class Learner:
    def __init__(self, net, lr):
        self.trainable = list(net.parameters())
        self.opt = torch.optim.SGD(self.trainable, lr=lr)

    def update(self, loss):
        loss.backward()
        clip_grad_norm_(self.trainable, 1.0)
        self.opt.step()
"""
NEAR_MISS["self_attribute_read_once"] = """
import torch
from torch.nn.utils import clip_grad_norm_

class Learner:
    def __init__(self, net, lr):
        self.net = net
        self.trainable = net.parameters()
        self.opt = torch.optim.SGD(net.parameters(), lr=lr)

    def update(self, loss):
        loss.backward()
        clip_grad_norm_(self.trainable, 1.0)
        self.opt.step()
"""
SEEN["self_attribute_across_methods"] = ("github.com/joelouismarino/sequential_flows util/optimizer.py (AdamOptimizer keeps "
                                         "self.params, gives it to Adam, clips it in step())")
SEEN["self_attribute_listed"] = "github.com/nlpAThits/figet figet/Optim.py (self.params = list(params) before Adam and clip)"
