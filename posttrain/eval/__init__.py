"""posttrain.eval (see DESIGN.md §2)."""
