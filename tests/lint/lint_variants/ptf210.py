"""PTF210 (arange-float-step-includes-end): float bounds whose arange length is not the decimal one."""

PITFALL = {
    "thresholds_module_constants": """
import torch
START, END, STEP = 0.5, 0.8, 0.1
thresholds = torch.arange(START, END, STEP)
""",
    "negative_bounds": """
import torch
offsets = torch.arange(-1.0, -0.7, 0.1)
""",
    "one_over_49": """
import torch
t = torch.arange(0, 1, 1 / 49)
""",
    "keywords_and_device": """
import torch
def scales(device):
    return torch.arange(start=0.1, end=0.4, step=0.1, device=device)
""",
    "extra_step_value": """
import torch
def grid(device):
    step = 0.1
    return torch.arange(0.6, 0.9, step, device=device, dtype=torch.float32)
""",
    "step_of_0_2": """
import torch
LO, HI = 0.2, 0.8
bins = torch.arange(LO, HI, 0.2)
""",
}

NEAR_MISS = {
    "exact_binary_step": """
import torch
t = torch.arange(0, 1, 0.25)
""",
    "rounds_right": """
import torch
t = torch.arange(0.5, 0.7, 0.1)
""",
    "integer_count": """
import torch
START, END, STEP = 0.5, 0.8, 0.1
count = round((END - START) / STEP)
t = START + STEP * torch.arange(count)
""",
    "integers": """
import torch
t = torch.arange(0, 10, 2)
""",
    "unknown_bounds": """
import torch
def grid(lo, hi, step):
    return torch.arange(lo, hi, step)
""",
    "numpy_not_torch": """
import numpy as np
t = np.arange(0.5, 0.8, 0.1)
""",
    "old_release_issue_0_to_1_by_0_2": """
import torch
grid = torch.arange(0, 1, 0.2)
""",
    "old_release_issue_missing_element": """
import torch
values = torch.arange(0.1, 0.5, 0.05)
""",
    "linspace": """
import torch
t = torch.linspace(0.5, 0.7, 3)
""",
}

SEEN = {
    "old_release_issue_0_to_1_by_0_2": "https://github.com/pytorch/pytorch/issues/5950 (torch.arange(0, 1, 0.2) included 1.0 on 0.3.1; since #5600 the length is ceil((end - start) / step): 5, as meant)",
    "old_release_issue_missing_element": "https://github.com/pytorch/pytorch/issues/5556 (arange(0.1, 0.5, 0.05) lost 0.45 on 0.4.0a0; ceil((0.5 - 0.1) / 0.05) is 8, as meant, since #5600)",
    "negative_bounds": "https://github.com/pytorch/pytorch/issues/5704 (th.arange(0, 1.1, 0.1) and friends: lengths off by one from rounding; apaszke: impossible to make arange work in every case)",
    "one_over_49": "https://github.com/pytorch/pytorch/issues/99853 (torch.arange(0, 1, 1/49) seemingly includes 1)",
    "extra_step_value": "https://github.com/pytorch/pytorch/issues/5556 (np.arange(0.6, 0.9, 0.1) ends with 0.9)",
    "rounds_right": "cases/numerics/arange_float_step_includes_end.py (arange(0.5, 0.7, 0.1) has the expected 2)",
}
