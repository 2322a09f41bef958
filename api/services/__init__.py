"""Use cases shared by HTTP, the CLI and the chatbot tools."""
