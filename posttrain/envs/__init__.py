"""posttrain.envs (see DESIGN.md §2)."""
