import pytest
from class_servers import redis_server
from fastapi.testclient import TestClient
from shipped_models import app_on_shipped_models


@pytest.fixture(scope="session")
def client():
    with TestClient(app_on_shipped_models()) as c:
        yield c


@pytest.fixture(scope="session")
def registry(client):
    return client.app.state.registry


@pytest.fixture(scope="module")
def redis_url():
    """A throwaway redis-server for one test module, without persistence: the class tests' Redis store."""
    with redis_server() as server:
        yield server.url
