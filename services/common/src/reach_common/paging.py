"""Bounds for list endpoints' ``offset`` parameters, shared by every service.

An offset beyond ``MAX_OFFSET`` is refused with a 422 before it reaches Postgres, where a
value past a bigint is a driver error (a 500) rather than an empty page.
"""

MAX_OFFSET = 1_000_000_000
