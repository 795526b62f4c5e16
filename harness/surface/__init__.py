"""What a torch release says to its users, read from its files, and what changed between two.

    python -m torch_pitfalls.surface scan SITE_PACKAGES/torch --out build/surface/torch-2.6.0.json
    python -m torch_pitfalls.surface fetch 2.5.1 2.6.0 --uv .venv/bin/uv      # download, scan, delete
    python -m torch_pitfalls.surface diff build/surface [--from 2.5.1 --to 2.6.0] [--all] [--json]

The upgrade cases were found with it: every release's "surface" is

* ``warnings``: each ``warnings.warn``/``warn``/``@deprecated`` in torch's Python files, with
  the function it sits in, its category and its message (string literals joined, ``{}`` for
  what an f-string fills in);
* ``signatures``: each public function's and method's parameters with their defaults (``.py``
  and the ``.pyi`` stubs of the C++ ops), so a default that flips or a parameter that goes shows;
* ``native``: the text of the C++ libraries' messages that announce a deprecation or removal
  (``TORCH_WARN`` and ``TORCH_CHECK`` texts are only in the ``.so`` files).

``diff`` lists, between consecutive releases, the warnings added and removed, the defaults
changed, the parameters and public functions removed, and the native messages added. It is a
finder, not a judge: each hit is a lead to read and then to run, never a result by itself.
"""
