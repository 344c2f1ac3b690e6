"""``POST /chat``: one turn of a conversation, as JSON or as Server-Sent Events."""
