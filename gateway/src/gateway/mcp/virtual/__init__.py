"""Virtual MCP servers: named, curated subsets of the registry, kept in Postgres."""
