"""Class mode's rules per address, as served: behind the README's nginx, uvicorn reads the student's address
from X-Forwarded-For only when the proxy sent it (FORWARDED_ALLOW_IPS); floods from one address are bounded,
the teacher key, and join links that phones can open."""

import re
import socket
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from shipped_models import app_on_shipped_models
from uvicorn import Config

from app.services.join_links import is_loopback
from app.services.lesson import qr_svg
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
PROXY = "10.89.0.2"  # the proxy's address, as FORWARDED_ALLOW_IPS names it


@pytest.fixture(scope="module")
def behind_proxy(tmp_path_factory):
    """The app as `serve` runs it (uvicorn's Config wraps it in ProxyHeadersMiddleware), trusting PROXY only;
    (client from the proxy, client from anywhere else)."""
    app = app_on_shipped_models(Settings(data_dir=tmp_path_factory.mktemp("addresses"), joins_per_minute=5))
    config = Config(app, forwarded_allow_ips=PROXY, proxy_headers=True)
    config.load()
    with TestClient(config.loaded_app, client=(PROXY, 40000)) as proxy, \
            TestClient(config.loaded_app, client=("203.0.113.9", 40001)) as direct:
        yield proxy, direct


def via(address: str) -> dict:
    """The header nginx sends (deploy/nginx.conf: X-Forwarded-For $remote_addr)."""
    return {"X-Forwarded-For": address}


def test_the_class_creation_limit_sees_each_students_address_behind_the_proxy(behind_proxy):
    proxy, _ = behind_proxy
    for _ in range(10):
        assert proxy.post("/api/classes", headers=via("203.0.113.7")).status_code == 201
    refused = proxy.post("/api/classes", headers=via("203.0.113.7"))
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 3000
    assert refused.json()["detail"][0]["type"] == "too_many_classes_from_address"
    assert refused.json()["detail"][0]["ctx"]["limit"] == 10
    # The teacher, from another address through the same proxy, still starts a class.
    assert proxy.post("/api/classes", headers=via("198.51.100.1")).status_code == 201
    # A proxy that appends (X-Forwarded-For: what the client sent, then its address): the address the proxy
    # added counts, not the one the student wrote.
    forged = proxy.post("/api/classes", headers=via("198.51.100.2, 203.0.113.7"))
    assert forged.status_code == 429


def test_a_student_who_writes_x_forwarded_for_directly_is_not_believed(behind_proxy):
    _, direct = behind_proxy
    for n in range(10):
        assert direct.post("/api/classes", headers=via(f"198.51.100.{100 + n}")).status_code == 201
    assert direct.post("/api/classes", headers=via("198.51.100.200")).status_code == 429


def test_a_join_flood_from_one_address_is_slowed_and_others_still_join(behind_proxy):
    proxy, _ = behind_proxy
    made = proxy.post("/api/classes", headers=via("198.51.100.50")).json()
    code = made["code"]
    tokens = [proxy.post(f"/api/classes/{code}/join", headers=via("192.0.2.66")).json()["student_token"]
              for _ in range(5)]
    refused = proxy.post(f"/api/classes/{code}/join", headers=via("192.0.2.66"))
    assert refused.status_code == 429 and refused.json()["detail"][0]["type"] == "too_many_joins_from_address"
    assert 1 <= int(refused.headers["Retry-After"]) <= 61
    # A student coming back is no new join; a classmate elsewhere joins.
    again = proxy.post(f"/api/classes/{code}/join",
                       headers={**via("192.0.2.66"), "Authorization": f"Bearer {tokens[0]}"})
    assert again.status_code == 200
    assert proxy.post(f"/api/classes/{code}/join", headers=via("192.0.2.67")).status_code == 201
    assert proxy.get(f"/api/classes/{code}").json()["joined"] == 6


def test_with_a_teacher_key_only_its_holders_start_classes_and_are_not_counted(tmp_path):
    with TestClient(app_on_shipped_models(Settings(data_dir=tmp_path, teacher_key="correct horse"))) as client:
        missing = client.post("/api/classes")
        assert missing.status_code == 401 and missing.json()["detail"][0]["type"] == "teacher_key_missing"
        assert "X-Teacher-Key" in missing.json()["detail"][0]["msg"]
        wrong = client.post("/api/classes", headers={"X-Teacher-Key": "battery staple"})
        assert wrong.status_code == 403 and wrong.json()["detail"][0]["type"] == "teacher_key_wrong"
        for _ in range(12):  # past HP_CLASSES_PER_HOUR: the key holder is not limited by address
            assert client.post("/api/classes", headers={"X-Teacher-Key": "correct horse"}).status_code == 201


def test_nginx_retries_only_what_is_safe_to_repeat_and_passes_the_students_address():
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    code = "\n".join(line.split("#", 1)[0] for line in conf.splitlines())
    retries = re.findall(r"proxy_next_upstream\s+([^;]*);", code)
    assert retries and all("non_idempotent" not in r for r in retries), retries  # a retried POST makes two classes
    # $remote_addr, not $proxy_add_x_forwarded_for: nothing a student writes in the header reaches the app.
    assert re.findall(r"proxy_set_header\s+X-Forwarded-For\s+([^;]*);", code) == ["$remote_addr"]
    compose = (ROOT / "compose.yaml").read_text()
    assert "FORWARDED_ALLOW_IPS" in compose


@pytest.fixture
def listener():
    """A socket listening on (host, port) as the server would: phones' links are made where one answers."""
    sockets = []

    def listen(host: str) -> int:
        s = socket.socket()
        s.bind((host, 0))
        s.listen(16)
        sockets.append(s)
        return s.getsockname()[1]
    yield listen
    for s in sockets:
        s.close()


def test_a_teachers_page_on_127_0_0_1_gets_links_on_the_addresses_the_server_listens_on(tmp_path, listener):
    app = app_on_shipped_models(Settings(data_dir=tmp_path))
    port = listener("0.0.0.0")
    with TestClient(app, base_url=f"http://127.0.0.1:{port}", client=("127.0.0.1", 50000)) as client:
        made = client.post("/api/classes").json()
        qr = client.get(f"/classes/{made['code']}/qr.svg").content
    # The projector's QR code holds the first link a phone can open, not 127.0.0.1.
    assert qr == qr_svg(made["join_urls"][0], made["code"]) != qr_svg(made["join_url"], made["code"])
    assert made["loopback"] is True and re.fullmatch(
        rf"http://127\.0\.0\.1:{port}/lesson\?class={made['code']}&key=[0-9a-f]{{24}}", made["join_url"])
    assert made["join_urls"], "this machine has a network address: the server answers there"
    for url in made["join_urls"]:
        host = re.match(rf"^http://([0-9.]+):{port}/lesson\?class={made['code']}&key=[0-9a-f]{{24}}$", url).group(1)
        assert not is_loopback(host)
        socket.create_connection((host, port), timeout=1).close()  # a phone on that network reaches it


def test_a_server_on_loopback_alone_offers_no_link_and_says_so(tmp_path, listener):
    app = app_on_shipped_models(Settings(data_dir=tmp_path))
    port = listener("127.0.0.1")
    with TestClient(app, base_url=f"http://localhost:{port}", client=("127.0.0.1", 50000)) as client:
        made = client.post("/api/classes").json()
    assert made["loopback"] is True and made["join_urls"] == []
    # A page on localhost through a container's port mapping: the server cannot know the host's addresses.
    with TestClient(app, base_url=f"http://localhost:{port}", client=("172.17.0.1", 50000)) as client:
        made = client.post("/api/classes").json()
    assert made["loopback"] is True and made["join_urls"] == []
