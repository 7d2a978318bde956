"""posttrain.scheduler (see DESIGN.md §2)."""
