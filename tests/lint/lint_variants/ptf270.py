"""PTF270 (custom-function-grad-count): an autograd.Function's backward returns a different number of
values than forward takes inputs."""

PITFALL = {
    "one_gradient_for_two_inputs": """
import torch
class Adder(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w_col, x_col):
        ctx.save_for_backward(w_col, x_col)
        return -(w_col.unsqueeze(2) - x_col.unsqueeze(0)).abs().sum(1)
    @staticmethod
    def backward(ctx, grad_output):
        w_col, x_col = ctx.saved_tensors
        grad_w = ((x_col.unsqueeze(0) - w_col.unsqueeze(2)) * grad_output.unsqueeze(1)).sum(2)
        return grad_w
""",
    "flag_argument_without_a_slot": """
import torch
from torch.autograd import Function
class Sign(Function):
    @staticmethod
    def forward(ctx, x, is_training=True):
        if is_training:
            return x.sign()
        return x.sign()
    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
y = Sign.apply(torch.randn(4, requires_grad=True), True)
""",
    "straight_through_with_bit_width": """
import torch
class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bits):
        scale = 2 ** bits - 1
        return torch.round(x * scale) / scale
    @staticmethod
    def backward(ctx, grad):
        return grad.clone()
def quantize(x, bits=8):
    return RoundSTE.apply(x, bits)
""",
    "one_return_path_short": """
import torch
class MaskedScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, mask):
        ctx.save_for_backward(x, scale, mask)
        return x * scale * mask
    @staticmethod
    def backward(ctx, grad_out):
        x, scale, mask = ctx.saved_tensors
        if not ctx.needs_input_grad[1]:
            return grad_out * scale * mask, None
        return grad_out * scale * mask, (grad_out * x * mask).sum(), None
""",
    "extra_tensor_for_a_removed_bias": """
import torch
class LinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return x @ weight.t()
    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        grad_b = grad_out.sum(0)
        return grad_out @ weight, grad_out.t() @ x, grad_b
""",
    "inherited_forward": """
import torch
class _ClampBase(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = lo, hi
        return x.clamp(lo, hi)
class PassThroughClamp(_ClampBase):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output, None
""",
    "setup_context_style": """
import torch
class ScaledTanh(torch.autograd.Function):
    @staticmethod
    def forward(x, alpha, eps):
        return torch.tanh(alpha * x) + eps
    @staticmethod
    def setup_context(ctx, inputs, output):
        x, alpha, eps = inputs
        ctx.save_for_backward(x, alpha)
    @staticmethod
    def backward(ctx, grad):
        x, alpha = ctx.saved_tensors
        t = torch.tanh(alpha * x)
        return grad * alpha * (1 - t * t), (grad * x * (1 - t * t)).sum()
""",
}

NEAR_MISS = {
    "one_slot_per_input": """
import torch
class ScaleShift(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, shift):
        ctx.save_for_backward(x, weight)
        return x * weight + shift
    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        grad_x = grad_out * weight if ctx.needs_input_grad[0] else None
        grad_w = (grad_out * x).sum() if ctx.needs_input_grad[1] else None
        return grad_x, grad_w, None
""",
    "varargs_forward": """
import torch
class CheckpointFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_function, *args):
        ctx.run_function = run_function
        ctx.save_for_backward(*args)
        with torch.no_grad():
            return run_function(*args)
    @staticmethod
    def backward(ctx, *grads):
        inputs = [x.detach().requires_grad_() for x in ctx.saved_tensors]
        with torch.enable_grad():
            outputs = ctx.run_function(*inputs)
        input_grads = torch.autograd.grad(outputs, inputs, grads)
        return (None,) + input_grads
""",
    "tuple_built_elsewhere": """
import torch
class Gather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, c):
        ctx.save_for_backward(a, b, c)
        return a + b + c
    @staticmethod
    def backward(ctx, grad):
        grads = [grad if needed else None for needed in ctx.needs_input_grad]
        return tuple(grads)
""",
    "defaulted_input_not_passed": """
import torch
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit=3.0):
        ctx.save_for_backward(x)
        ctx.limit = limit
        return limit * torch.tanh(x / limit)
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        t = torch.tanh(x / ctx.limit)
        return grad_output * (1 - t * t)
y = SoftClip.apply(torch.randn(3, requires_grad=True))
""",
    "trailing_nones_accepted": """
import torch
class Norm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, eps):
        ctx.save_for_backward(x)
        return x / (x.norm() + eps)
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / x.norm(), None, None
""",
    "not_an_autograd_function": """
import numpy as np
class Layer:
    def forward(self, x, w, b):
        self.x, self.w = x, w
        return x @ w + b
    def backward(self, grad):
        return grad @ self.w.T
""",
    "base_replaced_by_a_subclass": """
import torch
class _Draft(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, shift):
        ctx.save_for_backward(x, weight)
        return x * weight + shift
    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return grad_out * weight, (grad_out * x).sum()
class Final(_Draft):
    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return grad_out * weight, (grad_out * x).sum(), None
out = Final.apply(torch.ones(3, requires_grad=True), torch.tensor(2.0, requires_grad=True), 0.5)
""",
}

SEEN = {
    "one_gradient_for_two_inputs": "huawei-noah/AdderNet#21 (adderBackward: expected 2, got 1; fixed by returning both gradients)",
    "flag_argument_without_a_slot": "1zb/pytorch-image-comp-rnn#4 (SignBackward with an is_training argument: fixed with `return grad_output, None`)",
    "straight_through_with_bit_width": "evanmy/sae#5 (EnforcePriorBackward: expected 2, got 1; fixed by returning `, None` for the extra argument)",
    "extra_tensor_for_a_removed_bias": "fla-org/flash-linear-attention#1230 review (backward returns 29 values for 28 forward inputs)",
    "trailing_nones_accepted": "deepseek-ai/TileKernels#10 (one trailing None more than forward's inputs; torch drops extra Nones)",
    "varargs_forward": "csrhddlam/pytorch-checkpoint#2 (CheckpointFunction: forward(ctx, run_function, *args), backward returns (None, ...) + input_grads)",
}

NEAR_MISS["inference_only_backward_raises_first"] = """
import torch
class FusedAntiAliasActivation(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs, up_ftr, down_ftr, alpha, beta):
        return inputs * alpha + beta
    @staticmethod
    def backward(ctx, output_grads):
        raise NotImplementedError
        return output_grads, None, None
"""
SEEN["inference_only_backward_raises_first"] = (
    "NVIDIA/BigVGAN alias_free_activation/cuda/activation1d.py (an inference-only fused kernel whose "
    "backward raises before its return; round 6's read held-out half)"
)
