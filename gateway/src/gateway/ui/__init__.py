"""The trace viewer: HTML pages over the traces the caller may read (``/ui/traces``)."""
