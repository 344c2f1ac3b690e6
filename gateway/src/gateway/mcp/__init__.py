"""Reach over the Model Context Protocol: the gateway as an MCP server.

``server`` serves ``tools/list`` and ``tools/call`` through the invoke pipeline,
``routed`` the meta-tools of a routed surface, ``virtual`` the admin-managed
virtual servers, ``oauth`` the resource-server pieces, ``bridge`` the stdio
bridge. ``federation`` (consuming other MCP servers) is a package of its own.
"""
