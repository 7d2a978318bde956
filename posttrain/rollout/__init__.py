"""posttrain.rollout (see DESIGN.md §2)."""
