"""Federation: MCP servers the gateway consumes, their tools registered as Reach tools.

An admin registers a server (``POST /mcp/servers``): a Streamable HTTP URL, which
obeys the egress rules of every tool call, or a stdio command named in
``MCP_STDIO_COMMANDS``. The gateway lists its tools and registers each one in the
registry (``source: mcp``) with an ``mcp`` endpoint, so listing, routing (``/run``),
auth, limits, the executor's breaker and the audit treat it as any other tool.

- ``naming``: the prefix policy that turns an upstream tool name into a tool id;
- ``translate``: an upstream tool definition → a manifest, with its definition hash;
- ``connection``: one kept MCP session per server (pinned, credentialed, size-capped);
- ``service``: register, sync (timer and ``list_changed``), hold back, accept, remove.
"""
