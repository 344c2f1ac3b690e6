"""Chat sessions and their messages in Postgres, and the one-writer lock per session."""
