"""Apply the Alembic migrations shipped in the migrations package."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

import migrations


def alembic_config(database_url: str) -> Config:
    """An Alembic configuration for this database that works from any working directory."""
    config = Config()
    config.set_main_option("script_location", str(Path(migrations.__file__).parent))
    # Passed as an attribute, not an option: ConfigParser would treat a '%' in a password as interpolation.
    config.attributes["database_url"] = database_url
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    """Bring the schema to a revision (blocking: call it in a thread from async code)."""
    command.upgrade(alembic_config(database_url), revision)
