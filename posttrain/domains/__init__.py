"""posttrain.domains (see DESIGN.md §2)."""
