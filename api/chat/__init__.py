"""The chat surfaces: tool definitions (OpenAI and Anthropic shapes, MCP) and the MCP server."""
