"""Tool outputs stored by handle: one caller's document, searched on its own, with an expiry."""
