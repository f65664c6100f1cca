"""State layouts that runtimes use to persist kernel state."""
