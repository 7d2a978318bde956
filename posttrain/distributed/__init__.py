"""posttrain.distributed (see DESIGN.md §2)."""
