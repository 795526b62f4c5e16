"""PTF004: Module.register_backward_hook (the non-full hook), on any receiver."""

PITFALL = {
    "layer_attribute": """
import torch.nn as nn
model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
def hook(module, grad_input, grad_output):
    print(grad_input)
model[0].register_backward_hook(hook)
""",
    "every_module_in_loop": """
def add_hooks(model, hook):
    handles = []
    for m in model.modules():
        handles.append(m.register_backward_hook(hook))
    return handles
""",
    "self_in_init": """
import torch.nn as nn
class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_backward_hook(lambda *args: None)
""",
    "bound_handle_gradcam": """
class GradCam:
    def __init__(self, target_layer):
        self.handle = target_layer.register_backward_hook(self.save_gradient)
    def save_gradient(self, module, grad_in, grad_out):
        self.gradient = grad_out[0]
""",
    "global_module_hook": """
import torch
def log_grads(module, grad_input, grad_output):
    pass
torch.nn.modules.module.register_module_backward_hook(log_grads)
""",
}

NEAR_MISS = {
    "full_hook": """
import torch.nn as nn
layer = nn.Linear(4, 4)
layer.register_full_backward_hook(lambda m, gi, go: None)
""",
    "tensor_hook": """
import torch
x = torch.ones(3, requires_grad=True)
x.register_hook(lambda g: g * 2)
""",
    "forward_hook": """
import torch.nn as nn
layer = nn.Linear(4, 4)
layer.register_forward_hook(lambda m, i, o: None)
""",
}

SEEN = {
    "bound_handle_gradcam": "https://github.com/jacobgil/pytorch-grad-cam/pull/70",
    "every_module_in_loop": "https://github.com/cybertronai/autograd-hacks/issues/10",
    "self_in_init": "https://github.com/pytorch/pytorch/issues/61446",
    "layer_attribute": "https://github.com/idiap/fullgrad-saliency/issues/10",
}
NEAR_MISS["fallback_behind_a_version_guard"] = """
import torch
from torch import nn
def monitor(model, hook):
    handles = []
    for name, m in model.named_modules():
        if torch.__version__ >= torch.torch_version.TorchVersion("1.8.0"):
            handles.append(m.register_full_backward_hook(hook))
        else:
            handles.append(m.register_backward_hook(hook))
    return handles
"""
SEEN["fallback_behind_a_version_guard"] = (
    "snntorch functional/probe.py (register_full_backward_hook from torch 1.8, register_backward_hook in the "
    "else branch for older torch; 2 harmless findings in round 3's read held-out half)"
)
