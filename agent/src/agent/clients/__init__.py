"""Typed HTTP clients the agent owns for the services it calls (only the gateway)."""
