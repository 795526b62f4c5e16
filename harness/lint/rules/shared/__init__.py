"""What two or more rules use, by subject (a helper one rule uses lives in that rule's module):
losses.py (a loss's call, probabilities), tensors.py (factory and conversion names), training_loop.py
(an optimizer's step, loops, the first backward), modules.py (an nn.Module's methods and construction)
and flow.py (which code runs: call sites' values, branches no call takes, a function's own code)."""
