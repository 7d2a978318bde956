"""posttrain.inference (see DESIGN.md §2)."""
