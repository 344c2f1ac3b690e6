"""The tool catalogue's shared vocabulary: compiled tool specs, egress rules and tool
secrets. Every domain package may import it; it imports none of them."""
