"""posttrain.tools (see DESIGN.md §2)."""
