"""What agents see and send: session context, the instruction gate, capture triggers, editor clients, the MCP server."""
