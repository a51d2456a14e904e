"""The broker tests of test_session_broker.py against Kafka 3.9.2 (one broker for this module)."""

from test_session_broker import *  # noqa: F401,F403

BROKER_VERSION = "3.9.2"
