"""The lock files (scripts/lock.sh) still satisfy pyproject.toml: every dependency the project asks for is pinned,
at a version its range admits, and no CUDA package slipped in. The Docker image installs requirements/serve.lock
and the test command requirements/test.lock, so what CI tests is what the image runs."""

from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def pins(lock: str) -> dict[str, str]:
    found = {}
    for line in (ROOT / "requirements" / lock).read_text(encoding="utf-8").splitlines():
        if line and not line.startswith((" ", "#")):
            name, _, version = line.partition("==")
            found[canonicalize_name(name)] = version.strip()
    return found


def asked(extras: tuple[str, ...]) -> list[Requirement]:
    wanted = [Requirement(r) for r in PROJECT["dependencies"]]
    for extra in extras:
        wanted += [Requirement(r) for r in PROJECT["optional-dependencies"][extra]]
    return [r for r in wanted if canonicalize_name(r.name) != canonicalize_name(PROJECT["name"])]


@pytest.mark.parametrize(("lock", "extras"), [("serve.lock", ()), ("test.lock", ("test", "train"))])
def test_every_dependency_is_pinned_within_its_range(lock, extras):
    pinned = pins(lock)
    for requirement in asked(extras):
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{lock} has no pin for {requirement}: run scripts/lock.sh"
        assert requirement.specifier.contains(pinned[name], prereleases=True), \
            f"{lock} pins {name}=={pinned[name]}, outside {requirement}: run scripts/lock.sh"
    assert not [name for name in pinned if name.startswith("nvidia")], f"{lock} holds CUDA packages"


def test_the_image_and_the_tests_install_from_the_locks():
    assert "requirements/serve.lock" in (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "requirements/test.lock" in (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
