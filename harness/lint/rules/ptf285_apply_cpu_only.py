"""What: ``t.apply_(fn)`` on a tensor: a Python function called on every element, in place.
Why: it is implemented for CPU tensors only: on a GPU tensor it raises "TypeError: apply_ is only implemented on
CPU tensors", and on the CPU it calls back into Python once per element.
Fix: write the function with tensor operations (``t * t + 1``, ``torch.where``, ``torch.clamp``) and call it once;
where there is no such form, say so: ``t.cpu().apply_(fn).to(t.device)``.
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import CALL, Rule, _const, _method, receiver_holds


def _kept_on_the_cpu(receiver) -> bool:
    """``t.cpu()`` or ``t.to("cpu")``: the call is on the CPU on purpose."""
    if _method(receiver, "cpu"):
        return True
    return _method(receiver, "to") and bool(receiver.args) and _const(receiver.args[0], "cpu")


def _apply_on_a_tensor(node, ctx):
    """``t.apply_(fn)`` where ``t`` holds a tensor (UNSURE where its type is unknown), not kept on the CPU."""
    if not (_method(node, "apply_") and len(node.args) == 1) or _kept_on_the_cpu(node.func.value):
        return False
    return receiver_holds(node, ctx, "tensor")


RULE = Rule(
    id="PTF285",
    cases=("apply-cpu-only",),
    message=(
        "Tensor.apply_(fn) runs a Python function per element and exists for CPU tensors only: on a GPU tensor it "
        "raises TypeError, on the CPU it is one interpreter call per element; write fn with tensor operations, or "
        "make the CPU explicit: t.cpu().apply_(fn).to(t.device)"
    ),
    test=_apply_on_a_tensor,
    nodes=CALL,
    calls=("apply_",),
    needs=("apply_",),
)
