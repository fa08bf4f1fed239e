"""Class mode's Redis in the hosting files: Kubernetes (deploy/kubernetes/redis/) and compose.yaml."""

from pathlib import Path
from urllib.parse import urlparse

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "kubernetes"


def redis_objects() -> dict[str, dict]:
    docs = yaml.safe_load_all((K8S / "redis" / "redis.yaml").read_text(encoding="utf-8"))
    return {doc["kind"]: doc for doc in docs if doc}


def app_env(container: dict) -> dict[str, str]:
    return {item["name"]: item.get("value") for item in container.get("env", [])}


@pytest.mark.parametrize("version", ["1.27.0", "latest"])
def test_redis_manifests_match_the_kubernetes_schemas(version):
    version = kubernetes_validate.latest_version() if version == "latest" else version
    objects = redis_objects()
    assert set(objects) == {"StatefulSet", "Service"}
    for obj in objects.values():
        kubernetes_validate.validate(obj, version, strict=True)


def test_the_apps_pods_reach_redis_through_its_service():
    objects = redis_objects()
    deployment = yaml.safe_load((K8S / "deployment.yaml").read_text(encoding="utf-8"))
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    url = urlparse(app_env(container)["HP_REDIS_URL"])
    service = objects["Service"]
    assert url.scheme == "redis" and url.hostname == service["metadata"]["name"]
    assert url.port in [p["port"] for p in service["spec"]["ports"]]
    pod_labels = objects["StatefulSet"]["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()


def test_compose_app_copies_share_one_redis():
    services = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))["services"]
    url = urlparse(services["app"]["environment"]["HP_REDIS_URL"])
    assert url.hostname == "redis" and str(url.port) in [str(p) for p in services["redis"]["expose"]]
    assert "redis" in services["app"]["depends_on"]
