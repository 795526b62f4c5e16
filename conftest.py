# The corpus plugin is loaded here rather than through an entry point, so a fresh clone runs
# `pytest cases/` with nothing installed but torch and pytest (the GPU lane relies on that).
# Installed, the package is torch_pitfalls; in the checkout its folder is harness/. Where it is
# not installed, the folder is made importable under that name (as an editable install would).
import importlib.util
import sys
from pathlib import Path

if "torch_pitfalls" not in sys.modules and importlib.util.find_spec("torch_pitfalls") is None:
    _folder = Path(__file__).resolve().parent / "harness"
    _spec = importlib.util.spec_from_file_location(
        "torch_pitfalls", _folder / "__init__.py", submodule_search_locations=[str(_folder)]
    )
    sys.modules["torch_pitfalls"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["torch_pitfalls"])

pytest_plugins = ["torch_pitfalls.run.plugin", "torch_pitfalls.watch.plugin"]
