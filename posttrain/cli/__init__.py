"""posttrain.cli (see DESIGN.md §2)."""
