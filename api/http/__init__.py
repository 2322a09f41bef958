"""The HTTP edge: request context, rate limiting, body and query checks, HTTP caching, problems, auth."""
