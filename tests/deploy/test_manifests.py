"""The hosting files agree with the app: port 8000, /healthz and /readyz, the image name, a non-root user.

Fast and offline: no Docker here. The Kubernetes manifests are checked against the Kubernetes schemas
that `kubernetes-validate` ships, and compose.yaml against the Compose schema that `check-jsonschema`
ships; both are in the test extra.
"""

import json
import re
import shlex
import subprocess
from importlib.resources import files
from pathlib import Path
from urllib.parse import urlparse

import check_jsonschema
import jsonschema
import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "kubernetes"
APP_PORT = 8000
IMAGE = "heads-positions"
# The oldest Kubernetes still common in schools' clusters, and the newest the validator knows.
K8S_VERSIONS = ["1.27.0", "latest"]


# ---- helpers -----------------------------------------------------------------------------------------------
def k8s_objects() -> dict[str, dict]:
    """Every object in deploy/kubernetes/*.yaml, by kind."""
    objects = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if doc:
                assert doc["kind"] not in objects, f"two {doc['kind']} objects; the tests expect one of each"
                objects[doc["kind"]] = doc
    return objects


@pytest.fixture(scope="module")
def k8s():
    return k8s_objects()


@pytest.fixture(scope="module")
def container(k8s):
    containers = k8s["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def named_port(container: dict, port) -> int:
    """A probe's or Service's port, by number or by the container port's name."""
    if isinstance(port, int):
        return port
    return next(p["containerPort"] for p in container["ports"] if p.get("name") == port)


def dockerfile_stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile as stages of (INSTRUCTION, arguments), comments dropped and continuations joined."""
    lines, current = [], ""
    for raw in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines():
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and not current):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        lines.append(current + stripped)
        current = ""
    stages = []
    for line in lines:
        instruction, _, args = line.partition(" ")
        if instruction.upper() == "FROM":
            stages.append([])
        stages[-1].append((instruction.upper(), args.strip()))
    return stages


@pytest.fixture(scope="module")
def final_stage():
    return dockerfile_stages()[-1]


def instructions(stage, name: str) -> list[str]:
    return [args for instruction, args in stage if instruction == name]


def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))


# ---- Kubernetes --------------------------------------------------------------------------------------------
def test_manifests_are_deployment_service_hpa(k8s):
    assert {"Deployment", "Service", "HorizontalPodAutoscaler"} <= k8s.keys()


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_manifests_match_the_kubernetes_schemas(k8s, version):
    version = kubernetes_validate.latest_version() if version == "latest" else version
    for kind, obj in k8s.items():
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            pytest.fail(f"{kind} is not valid Kubernetes {version}: {e.message} at {list(e.path)}")


def test_container_runs_the_image_on_port_8000(container):
    assert container["image"].split("/")[-1].split(":")[0] == IMAGE
    assert [p["containerPort"] for p in container["ports"]] == [APP_PORT]
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    assert env.get("PORT", str(APP_PORT)) == str(APP_PORT)
    assert int(env.get("WORKERS", "1")) >= 1


def test_probes_use_the_apps_health_routes(container):
    # Only the models: a pod stays in the Service while class mode's Redis is down (docs/class-mode.md).
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz?part=models"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert named_port(container, container[probe]["httpGet"]["port"]) == APP_PORT, probe
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 30, "the app needs several seconds to load"


def quantity(value: str) -> float:
    """Kubernetes quantities used here: CPU (1, 500m) and memory (512Mi, 1Gi)."""
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
    match = re.fullmatch(r"([0-9.]+)(m|Ki|Mi|Gi)?", str(value))
    assert match, f"unexpected quantity {value!r}"
    return float(match.group(1)) * units.get(match.group(2), 1)


def test_resources_fit_what_one_worker_uses(container):
    resources = container["resources"]
    for kind in ("cpu", "memory"):
        assert quantity(resources["requests"][kind]) <= quantity(resources["limits"][kind]), kind
    # Measured: a worker holds about 400 MiB once its model cache is full (see deployment.yaml).
    assert quantity(resources["requests"]["memory"]) >= 400 * 2**20
    assert quantity(resources["limits"]["memory"]) >= 768 * 2**20
    assert quantity(resources["requests"]["cpu"]) > 0, "the HPA's CPU utilisation is relative to this request"


def test_pod_runs_as_the_images_non_root_user(k8s, container, final_stage):
    pod = k8s["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    uid = instructions(final_stage, "USER")[-1].split(":")[0]
    assert str(pod["securityContext"]["runAsUser"]) == uid
    assert container["securityContext"]["allowPrivilegeEscalation"] is False


def test_deployment_selects_its_own_pods(k8s):
    spec = k8s["Deployment"]["spec"]
    assert spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()


def test_service_sends_traffic_to_the_deployments_pods(k8s, container):
    service = k8s["Service"]["spec"]
    labels = k8s["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert service["selector"] and service["selector"].items() <= labels.items()
    assert [named_port(container, p["targetPort"]) for p in service["ports"]] == [APP_PORT]


def test_hpa_scales_the_deployment_on_cpu(k8s):
    hpa = k8s["HorizontalPodAutoscaler"]
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"], target["name"]) == (
        k8s["Deployment"]["apiVersion"],
        "Deployment",
        k8s["Deployment"]["metadata"]["name"],
    )
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    [metric] = hpa["spec"]["metrics"]
    assert metric["type"] == "Resource" and metric["resource"]["name"] == "cpu"
    assert 0 < metric["resource"]["target"]["averageUtilization"] <= 100


def test_disruption_budget_covers_the_deployments_pods(k8s):
    labels = k8s["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert k8s["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"].items() <= labels.items()


# ---- compose and the proxy ---------------------------------------------------------------------------------
def test_compose_runs_replicas_of_the_image():
    app = compose()["services"]["app"]
    assert app["image"].split(":")[0] == IMAGE and app["build"] == "."
    replicas = str(app["deploy"]["replicas"])
    default = re.fullmatch(r"\$\{\w+:-(\d+)\}|(\d+)", replicas)
    assert default and int(default.group(1) or default.group(2)) >= 2, replicas
    assert str(APP_PORT) in [str(p) for p in app["expose"]]
    assert not app.get("ports"), "students reach the copies through the proxy only"


def test_compose_matches_the_compose_spec():
    """Against the Compose Specification's schema, as vendored by check-jsonschema."""
    vendor = files(check_jsonschema.__name__) / "builtin_schemas" / "vendor"
    schema = json.loads((vendor / "compose-spec.json").read_text())
    errors = list(jsonschema.validators.validator_for(schema)(schema).iter_errors(compose()))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


def test_compose_proxy_forwards_to_the_apps_port():
    services = compose()["services"]
    proxy = services["proxy"]
    assert proxy["depends_on"]["app"]["condition"] == "service_healthy"
    [mount] = [v for v in proxy["volumes"] if v.split(":")[1] == "/etc/nginx/nginx.conf"]
    conf = (ROOT / mount.split(":")[0]).read_text(encoding="utf-8")
    upstream_servers = re.findall(r"^\s*server\s+([\w.-]+):(\d+)", conf, flags=re.M)
    assert upstream_servers == [("app", str(APP_PORT))], "nginx's upstream is the app service on port 8000"
    listen = re.findall(r"^\s*listen\s+(\d+)", conf, flags=re.M)
    published = [str(p).rsplit(":", 1)[-1] for p in proxy["ports"]]
    assert listen and published == listen, "the published port is the one nginx listens on"
    assert str(proxy["ports"][0]).startswith("${PORT:-8000}:"), "students open port 8000, as with docker run"
    assert conf.count("{") == conf.count("}")


# ---- Dockerfile and build context --------------------------------------------------------------------------
def test_dockerfile_is_multi_stage_from_python_slim():
    stages = dockerfile_stages()
    assert len(stages) >= 2
    assert all(stage[0][1].split()[0] == "python:3.11-slim" for stage in stages)


def test_dockerfile_installs_cpu_torch_by_default():
    build_args = " ".join(args for stage in dockerfile_stages() for args in instructions(stage, "ARG"))
    assert "TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu" in build_args
    for arg in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        assert arg in build_args


def test_image_runs_as_a_non_root_user(final_stage):
    users = instructions(final_stage, "USER")
    assert users, "the final stage sets USER"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")


def test_cmd_is_exec_form_heads_positions_serve(final_stage):
    [cmd] = instructions(final_stage, "CMD")
    argv = json.loads(cmd)  # exec form: uvicorn is PID 1 and gets SIGTERM itself
    assert argv[:2] == ["heads-positions", "serve"]
    assert "--port" not in argv, "PORT comes from the environment"
    env = dict(kv.split("=", 1) for args in instructions(final_stage, "ENV") for kv in shlex.split(args))
    assert env["PORT"] == str(APP_PORT)
    assert int(env["WORKERS"]) >= 1
    assert "/opt/venv/bin" in env["PATH"]


def test_an_init_passes_sigterm_on(final_stage):
    """PID 1 ignores signals it has no handler for; tini forwards docker stop's SIGTERM to uvicorn."""
    [entrypoint] = instructions(final_stage, "ENTRYPOINT")
    assert json.loads(entrypoint)[0] == "tini"


def test_healthcheck_calls_healthz(final_stage):
    [healthcheck] = instructions(final_stage, "HEALTHCHECK")
    assert "/healthz" in healthcheck
    argv = json.loads(healthcheck[healthcheck.index("CMD") + 3 :])
    assert argv[0] == "python", "no curl in the image: Python's urllib does the check"


def test_exposes_port_8000(final_stage):
    assert str(APP_PORT) in " ".join(instructions(final_stage, "EXPOSE")).split()


def test_dockerignore_keeps_the_context_small():
    rules = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert rules[0] == "*", "an allowlist: everything is left out unless named"
    allowed = {rule[1:].rstrip("/") for rule in rules if rule.startswith("!")}
    assert {"app", "model", "templates", "static", "pyproject.toml"} <= allowed
    assert not allowed & {".git", "tests", ".corpus-cache", "venv", ".venv", "screenshots"}


# ---- scripts -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("script", ["docker-smoke.sh", "docker-base-image.sh"])
def test_scripts_parse(script):
    subprocess.run(["bash", "-n", str(ROOT / "scripts" / script)], check=True)


def test_no_mirror_host_is_written_into_the_hosting_files():
    """The package mirror is read at run time (apt sources, pip config), never committed."""
    hosts = set()
    for sources in (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list")):
        if sources.is_file():
            hosts |= {urlparse(u).hostname for u in re.findall(r"https?://[^\s]+", sources.read_text())}
    hosts -= {None, "deb.debian.org", "security.debian.org"}
    files = [
        ROOT / "Dockerfile",
        ROOT / "compose.yaml",
        ROOT / "deploy" / "nginx.conf",
        *ROOT.glob("scripts/docker-*.sh"),
        *K8S.glob("*.yaml"),
    ]
    for path in files:
        text = path.read_text(encoding="utf-8")
        for host in hosts:
            assert host not in text, f"{path.name} names the mirror {host}"
