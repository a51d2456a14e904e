"""The package's version (pyproject.toml's; tests/test_session.py keeps the two equal) and
the client software a session reports to brokers in ApiVersions unless told otherwise."""

__version__ = "0.1.0"

CLIENT_SOFTWARE_NAME = "kwire-python"
