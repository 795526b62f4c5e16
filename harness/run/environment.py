"""Faults of the environment that would make case verdicts untrue, found before anything runs.

A user's environment may mix a torch with a NumPy it was not built for (torch < 2.3 beside NumPy
2: "Failed to initialize NumPy"). Every case that crosses the NumPy bridge would then fail, and
the report would blame the cases. Instead the run stops with one clear error naming the
versions and the fix, and writes nothing.
"""

from __future__ import annotations


def environment_faults() -> list[str]:
    """One sentence per fault found; empty when the environment can give true verdicts."""
    import torch

    faults = []
    try:
        import numpy
    except Exception as exc:  # numpy is a dependency of the corpus
        return [f"NumPy does not import beside torch {torch.__version__} ({type(exc).__name__}: {exc})"]
    import contextlib
    import io
    import warnings

    try:
        # torch's own "Failed to initialize NumPy" warning, and NumPy 2's page-long notice with a
        # stack trace, are caught here: the fault is said once, in one line
        with warnings.catch_warnings(record=True) as said, contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("always")
            back = torch.from_numpy(numpy.arange(3, dtype=numpy.float32)).numpy()
        if back.tolist() != [0.0, 1.0, 2.0]:
            raise RuntimeError(f"a round trip through torch gave {back.tolist()}")
    except Exception as exc:
        told = [str(w.message).split(" (Triggered")[0] for w in said if "numpy" in str(w.message).lower()]
        from torch_pitfalls.observation import first_line
        from torch_pitfalls.run.numpy_rule import numpy_requirement

        need = numpy_requirement(torch.__version__)
        fix = f"install {need!r} beside it" if need else "install a NumPy this torch was built for"
        why = "; ".join([*told, f"{type(exc).__name__}: {first_line(str(exc), None) or type(exc).__name__}"])
        faults.append(f"torch {torch.__version__} cannot exchange arrays with NumPy {numpy.__version__} ({why}): {fix}")
    return faults


def environment_error(consequence: str) -> str | None:
    """The faults as the one line a run stops with (``consequence`` says what did not happen),
    or None when there are none."""
    faults = environment_faults()
    return "; ".join(f"environment: {f}" for f in faults) + f" ({consequence})" if faults else None
