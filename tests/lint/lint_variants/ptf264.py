"""PTF264 (transpose-1d-noop): w.T / w.t() on a tensor 1-D by construction, used as a column."""

PITFALL = {
    "outer_product_by_transpose": """
import torch
def table(device):
    w = torch.tensor([1.0, 2.0, 3.0], device=device)
    return w.T * w
""",
    "pairwise_differences_of_arange": """
import torch
def distances(n):
    pos = torch.arange(n).float()
    return (pos.T - pos).abs()
""",
    "column_by_t_method_kept_in_a_name": """
import torch
def weights(n):
    x = torch.linspace(0.0, 1.0, n)
    col = x.t()
    return torch.exp(-(col - x) ** 2)
""",
    "row_of_a_matrix_as_column": """
import torch
def scaled(k):
    A = torch.randn(4, 4)
    row = A[0]
    return A * row.T
""",
    "ones_vector_broadcast": """
import torch
class Mixer(torch.nn.Module):
    def forward(self, x):
        g = torch.ones(8) * 0.5
        steps = torch.arange(8.0)
        return x + g.T * steps
""",
    "equality_table_of_labels": """
import torch
def same_class():
    labels = torch.tensor([0, 1, 1, 2])
    return (labels.T == labels).float()
""",
}

NEAR_MISS = {
    "explicit_column": """
import torch
def table(device):
    w = torch.tensor([1.0, 2.0, 3.0], device=device)
    return w[:, None] * w + w.unsqueeze(1) * w + torch.outer(w, w)
""",
    "transpose_of_a_matrix": """
import torch
def gram(n):
    X = torch.randn(n, 3)
    M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    return X.T @ X, M.T * M, X.t() - X.t()
""",
    "dot_product_written_as_transpose": """
import torch
def energy(n):
    v = torch.arange(n, dtype=torch.float32)
    return v.T @ v
""",
    "unknown_shape_parameter": """
import torch
def cov(x):
    return x.T * x
""",
    "vector_against_an_unknown_batch": """
import torch
def scale(batch):
    w = torch.linspace(0.5, 1.5, 16)
    return batch * w.T
""",
    "scaled_by_a_number": """
import torch
def half():
    w = torch.ones(5)
    return w.T * 2.0
""",
    "numpy_vector": """
import numpy as np
def outer():
    w = np.array([1.0, 2.0])
    return w.T * w
""",
}

SEEN = {
    "outer_product_by_transpose": "the corpus's source S1 (x.T on torch.tensor([1., 2., 3.]) keeps the shape; "
    "use x[:, None]); numpy/numpy#9530 (x = np.linspace(0, 1, 5); x.T expected to give a column)",
    "ones_vector_broadcast": "tud-amr/mppi-isaac#57 (weighted_seq = w * actions.T, the x.T deprecation warning "
    "on a tensor that is not 2-D)",
    "unknown_shape_parameter": "PythonOT/POT#760 (cws = cws.T.contiguous() on a 1-D input in generic code: the "
    "warning, but the tensor's rank is not known from the code)",
}
