# The corpus plugin is loaded here rather than through an entry point, so a fresh clone runs
# `pytest cases/` with nothing installed but torch and pytest (the GPU lane relies on that).
pytest_plugins = ["harness.run.plugin", "harness.watch.plugin"]
