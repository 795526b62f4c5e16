"""PTF006: kl_div / KLDivLoss given probabilities (or raw data) as input instead of log-probabilities."""

PITFALL = {
    "self_kl_method_softmax": """
import torch
import torch.nn as nn
class KLDivTeacherList(nn.Module):
    def __init__(self):
        super().__init__()
        self.kl = torch.nn.KLDivLoss(reduction="batchmean")
    def forward(self, scores, labels):
        return self.kl(scores.softmax(-1), labels.softmax(-1))
""",
    "bound_student_softmax": """
import torch.nn.functional as F
def kd_loss(out, teacher_out):
    student = F.softmax(out, dim=1)
    teacher = F.softmax(teacher_out, dim=1)
    return F.kl_div(student, teacher, reduction="none")
""",
    "functional_inline": """
import torch.nn.functional as F
def loss(s, t):
    return F.kl_div(F.softmax(s, 1), F.softmax(t, 1), reduction="batchmean")
""",
    "module_inline_sigmoid": """
import torch
import torch.nn as nn
def loss(x, p):
    return nn.KLDivLoss()(torch.sigmoid(x), p)
""",
    "bound_criterion_raw_tensor": """
import torch
import torch.nn as nn
criterion = nn.KLDivLoss(reduction="batchmean")
q = torch.tensor([[0.4, 0.4, 0.2]])
p = torch.tensor([[0.2, 0.3, 0.5]])
print(criterion(q, p))
""",
}

NEAR_MISS = {
    "log_softmax_student": """
import torch.nn as nn
import torch.nn.functional as F
def distillation(y, teacher_scores, T):
    return nn.KLDivLoss()(F.log_softmax(y / T, dim=1), F.softmax(teacher_scores / T, dim=1))
""",
    "log_of_probabilities": """
import torch.nn.functional as F
def kd(student, teacher):
    return F.kl_div(student.log(), teacher, reduction="batchmean")
""",
    "log_target": """
import torch.nn.functional as F
def kd(s, t):
    return F.kl_div(F.log_softmax(s, 1), F.log_softmax(t, 1), log_target=True)
""",
    "unknown_input": """
import torch.nn.functional as F
def kd(student_log_probs, teacher):
    return F.kl_div(student_log_probs, teacher)
""",
}

SEEN = {
    "self_kl_method_softmax": "https://github.com/sebastian-hofstaetter/matchmaker/issues/18",
    "bound_student_softmax": "https://github.com/microsoft/ProDA/issues/43",
    "log_softmax_student": "https://github.com/mepeichun/Efficient-Neural-Network-Bilibili/issues/1",
    "log_of_probabilities": "https://github.com/microsoft/ProDA/issues/20",
}

# round 2: the probabilities come from a method chain bound to a name, passed as input= in a loop
PITFALL["method_chain_keyword_in_loop"] = """
import torch.nn.functional as F
def attention_kd(student_maps, teacher_maps):
    total = 0
    for a, b in zip(student_maps, teacher_maps):
        p = a.flatten(2).mean(1).softmax(-1)
        q = b.flatten(2).mean(1).softmax(-1)
        total = total + F.kl_div(input=p, target=q, reduction="batchmean")
    return total
"""
NEAR_MISS["method_chain_log_softmax"] = """
import torch.nn.functional as F
def attention_kd(student_maps, teacher_maps):
    total = 0
    for a, b in zip(student_maps, teacher_maps):
        p = a.flatten(2).mean(1).log_softmax(-1)
        q = b.flatten(2).mean(1).softmax(-1)
        total = total + F.kl_div(input=p, target=q, reduction="batchmean")
    return total
"""
SEEN["method_chain_keyword_in_loop"] = "https://github.com/sebastian-hofstaetter/matchmaker/issues/18 (self.kl(scores.softmax(-1), labels.softmax(-1)))"

# DINO's views: each student view sharpened by a helper that returns softmax probabilities, kept in a
# list, and one picked per teacher view; the same list of log_softmax views is right.
_VIEWS = """
import torch
import torch.nn.functional as F

def sharpen(logits, temperature):
    return F.{activation}(logits / temperature, dim=-1)

def dino_loss(student_out, teacher_out, center):
    student = [sharpen(s, 0.1) for s in student_out.chunk(2)]
    teacher = [F.softmax((t - center) / 0.04, dim=-1) for t in teacher_out.chunk(2)]
    total = 0.0
    for i, t in enumerate(teacher):
        s = student[1 - i]
        total = total + F.kl_div(s, t, reduction="batchmean")
    return total / 2
"""
PITFALL["probabilities_picked_from_a_list_of_sharpened_views"] = _VIEWS.format(activation="softmax")
NEAR_MISS["log_probabilities_picked_from_a_list_of_views"] = _VIEWS.format(activation="log_softmax")
SEEN["probabilities_picked_from_a_list_of_sharpened_views"] = (
    "benchmarks/fresh/lint10 r05_histopathology_dino.py (tuning half)"
)

# The student's probabilities made by a method of the loss module (a distillation loss's "soften"), given to
# KLDivLoss as its input: read through the method's returns.
_DISTILL = """
import torch.nn.functional as F
from torch import nn
class DistillLoss(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.t = temperature
        self.kl = nn.KLDivLoss(reduction="batchmean")
    def soften(self, logits):
        return F.{student}(logits / self.t, dim=1)
    def forward(self, student_logits, teacher_logits):
        return self.kl(self.soften(student_logits), F.softmax(teacher_logits / self.t, dim=1)) * self.t ** 2
"""
PITFALL["probabilities_from_a_method_of_the_loss"] = _DISTILL.format(student="softmax")
NEAR_MISS["log_probabilities_from_a_method_of_the_loss"] = _DISTILL.format(student="log_softmax")
SEEN["probabilities_from_a_method_of_the_loss"] = (
    "fresh set 16's h14 (tuning half): DistillLoss.soften returning F.softmax(logits / t), its result handed to "
    "nn.KLDivLoss for the student"
)
SEEN["log_probabilities_from_a_method_of_the_loss"] = "the same loss with soften returning log_softmax, the fix"
