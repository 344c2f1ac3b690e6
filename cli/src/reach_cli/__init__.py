"""``reach``: the Reach services from a terminal (see ``reach --help``)."""
