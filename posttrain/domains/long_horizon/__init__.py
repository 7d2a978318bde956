"""Long-horizon domains (family ``long_horizon``): multi-stage tasks with checkpoints.

Each stage reached for the first time gives a process reward through ``step()`` (the turn's
``reward``, summing to 1 over all checkpoints); the outcome verifier scores the end state
independently (hidden data, fresh sandboxes), so process rewards can guide but never replace it.
"""
