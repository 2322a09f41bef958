"""Adapters: Redis, the gpuhunt price feed and storage (SQLAlchemy tables, repositories)."""
