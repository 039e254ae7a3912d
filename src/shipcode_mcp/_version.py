"""The package version, read by the build (pyproject.toml) and by ``--version``."""

__version__ = "1.0.0"
