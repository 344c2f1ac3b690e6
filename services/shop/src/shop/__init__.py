"""The demo business service agents act on: inventory, orders, sales, reports."""
