"""Long-term memory per user: facts kept across sessions and recalled into new turns."""
