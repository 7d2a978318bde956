"""posttrain.models (see DESIGN.md §2)."""
