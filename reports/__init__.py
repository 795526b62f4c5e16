"""The recorded version matrix: one report per torch release and device (``torch-*.json``).

A package only so that the wheel ships the matrix as ``harness/reports`` beside
``harness/cases`` (``pitfalls matrix`` and ``pitfalls upgrade`` read it from any folder);
nothing imports it, and reports are read as files (harness.matrix.load_matrix).
"""
