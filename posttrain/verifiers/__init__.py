"""posttrain.verifiers (see DESIGN.md §2)."""
