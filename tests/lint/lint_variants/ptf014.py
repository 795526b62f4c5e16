"""PTF014: gradcheck on single-precision inputs."""

PITFALL = {
    "default_dtype_factory": """
import torch
from torch.autograd import gradcheck
x = torch.rand(1, 2, requires_grad=True)
print(gradcheck(torch.nn.Linear(2, 1), (x,), eps=1e-6, atol=1e-3))
""",
    "explicit_float32": """
import torch
def test_conv():
    inp = torch.rand([1, 16, 59], dtype=torch.float32, requires_grad=True)
    conv = torch.nn.Conv1d(16, 33, 5)
    torch.autograd.gradcheck(conv, (inp,))
""",
    "float_method_keyword_inputs": """
import torch
from torch.autograd import gradcheck
def check(fn, data):
    x = torch.randn(3, 3).float().requires_grad_()
    return gradcheck(fn, inputs=(x,))
""",
    "two_inputs_in_test_method": """
import torch
import unittest
class TestOp(unittest.TestCase):
    def test_grad(self):
        a = torch.randn(4, requires_grad=True)
        b = torch.randn(4, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(torch.mul, (a, b)))
""",
    "gradgradcheck_float": """
import torch
from torch.autograd import gradgradcheck
w = torch.ones(2, 2, requires_grad=True)
gradgradcheck(torch.sin, (w,))
""",
}

NEAR_MISS = {
    "float64": """
import torch
from torch.autograd import gradcheck
x = torch.rand(1, 2, dtype=torch.float64, requires_grad=True)
gradcheck(torch.sin, (x,))
""",
    "double_method": """
import torch
def check(fn):
    x = torch.randn(3).double().requires_grad_()
    return torch.autograd.gradcheck(fn, (x,))
""",
    "default_dtype_set": """
import torch
torch.set_default_dtype(torch.float64)
x = torch.randn(3, requires_grad=True)
torch.autograd.gradcheck(torch.sin, (x,))
""",
}

SEEN = {
    "default_dtype_factory": "https://github.com/pytorch/pytorch/issues/5351",
    "explicit_float32": "https://github.com/pytorch/pytorch/issues/114217",
    "two_inputs_in_test_method": "https://github.com/pytorch/pytorch/pull/8663",
    "double_method": "https://github.com/CharlesShang/DCNv2/issues/13",
}
