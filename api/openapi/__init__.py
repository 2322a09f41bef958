"""OpenAPI helpers: examples, example responses, extras and constraints."""
