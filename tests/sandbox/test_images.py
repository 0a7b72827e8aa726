"""Sandbox images: recipe-hash tags, and the built image actually carries what the recipe lists."""

from __future__ import annotations

import pytest

from sabench.sandbox.images import DOCKERFILE, Recipe, dockerfile_tag, resolve_image
from sabench.sandbox.images.offline import IMAGE_ENV
from sabench.sandbox.protocol import open_sandbox
from sabench.sandbox.types import SANDBOX_UID, SandboxSpec

from .conftest import require_backend


def test_recipe_hash_names_the_image() -> None:
    base, torch = Recipe.make(), Recipe.make(with_torch=True)
    assert base.tag == Recipe.make().tag  # stable: a rebuild is skipped while nothing changed
    assert base.tag.startswith("sabench-sandbox:offline-") and base.digest in base.tag
    assert torch.tag.startswith("sabench-sandbox:offline-torch-") and torch.digest != base.digest
    assert Recipe(suite="trixie").digest != base.digest
    assert "python3-torch" in torch.packages and "python3-torch" not in base.packages


def test_dockerfile_declares_the_sandbox_user_and_tooling() -> None:
    text = DOCKERFILE.read_text()
    assert f"--uid {SANDBOX_UID}" in text and f"USER {SANDBOX_UID}:{SANDBOX_UID}" in text
    for package in ("torch", "numpy", "scipy", "pyyaml"):
        assert package in text
    assert dockerfile_tag().startswith("sabench-sandbox:dockerfile-")


def test_explicit_image_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(IMAGE_ENV, "from-env:1")
    assert resolve_image("given:2") == "given:2"
    assert resolve_image() == "from-env:1"


@pytest.mark.docker
def test_default_image_runs_the_recipe_packages() -> None:
    require_backend("docker")
    with open_sandbox(SandboxSpec(backend="docker")) as box:
        result = box.exec(["python3", "-c", "import numpy, scipy, yaml, sys; "
                           "print(sys.version_info[:2] >= (3, 11), numpy.ones(3).sum())"])
        user = box.exec(["id", "-un"]).stdout.strip()
        tools = box.exec("python -c 'import matplotlib; print(matplotlib.__version__)' && "
                         "git --version >/dev/null && echo git")
    assert result.stdout == "True 3.0\n", result.stderr
    assert user == "sandbox"
    assert tools.stdout == "3.10.3\ngit\n", tools.stderr
