"""posttrain.trainer (see DESIGN.md §2)."""
