"""Sandbox images: the offline build (no registry) and the Dockerfile build, tagged by recipe hash.

The offline image is a Debian bookworm root file system made by `debootstrap --variant=minbase`
from Debian's archive with Debian's own Python packages, then `docker import`ed. Its tag contains a
hash of the recipe, so a machine builds it once and reuses it until the recipe changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from sabench.sandbox.types import BASE_ENV, SANDBOX_GID, SANDBOX_UID, WORKSPACE, BackendUnavailable

REPOSITORY = "sabench-sandbox"
IMAGE_ENV = "SABENCH_SANDBOX_IMAGE"
MIRROR_ENV = "SABENCH_DEBIAN_MIRROR"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
DOCKERFILE = Path(__file__).with_name("Dockerfile")
#: `python-is-python3` and `git`: agents (and the recorded baseline runs) call `python`, not
#: `python3`, and run `git init` in their submission.
BASE_PACKAGES = ("python3", "python-is-python3", "git", "python3-numpy", "python3-scipy",
                 "python3-yaml", "python3-pip")
TORCH_PACKAGES = ("python3-torch",)
#: From PyPI, pinned: the plotting library at the version the SA-Bench baseline runs used, so a
#: figure a replayed run draws has the bytes the original drew (matplotlib bundles its fonts
#: and FreeType, so its PNGs depend on its version, not on the machine).
PIP_PACKAGES = ("matplotlib==3.10.3",)
#: Bump when the build steps below change in a way that changes the image.
RECIPE_VERSION = 1
#: Left out of the image: package caches, docs and manuals (nothing needed to run code).
PRUNE = ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man",
         "usr/share/info")


class Recipe(BaseModel):
    """What goes into an offline image; its hash names the image."""

    model_config = ConfigDict(frozen=True)

    suite: str = "bookworm"
    variant: str = "minbase"
    packages: tuple[str, ...] = BASE_PACKAGES
    pip_packages: tuple[str, ...] = PIP_PACKAGES
    uid: int = SANDBOX_UID
    gid: int = SANDBOX_GID
    version: int = RECIPE_VERSION

    @classmethod
    def make(cls, with_torch: bool = False) -> Recipe:
        return cls(packages=BASE_PACKAGES + (TORCH_PACKAGES if with_torch else ()))

    @property
    def digest(self) -> str:
        text = json.dumps(self.model_dump(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def tag(self) -> str:
        flavour = "offline-torch" if TORCH_PACKAGES[0] in self.packages else "offline"
        return f"{REPOSITORY}:{flavour}-{self.digest}"


class BuildReport(BaseModel):
    """What `build_offline` / `build_dockerfile` did."""

    image: str
    reused: bool
    seconds: float
    size_mb: float


def dockerfile_tag() -> str:
    digest = hashlib.sha256(DOCKERFILE.read_bytes()).hexdigest()[:12]
    return f"{REPOSITORY}:dockerfile-{digest}"


def _client() -> Any:
    from sabench.sandbox.docker_backend import docker_client

    return docker_client()


def image_present(tag: str) -> bool:
    """Whether the docker engine holds image `tag` (BackendUnavailable without an engine)."""
    return _present(_client(), tag)


def _present(client: Any, tag: str) -> bool:
    import docker.errors

    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def resolve_image(image: str | None = None) -> str:
    """The image to use: the caller's, else $SABENCH_SANDBOX_IMAGE, else a built sabench image.

    Preference among built images: the offline image of the current recipe, then its torch
    variant, then the Dockerfile image. Raises BackendUnavailable when none is present.
    """
    chosen = image or os.environ.get(IMAGE_ENV)
    if chosen:
        return chosen
    candidates = [Recipe.make().tag, Recipe.make(with_torch=True).tag, dockerfile_tag()]
    client = _client()
    for tag in candidates:
        if _present(client, tag):
            return tag
    raise BackendUnavailable(
        f"no sandbox image (looked for {', '.join(candidates)}): "
        "run `sabench sandbox build --offline`")


def _size_mb(client: Any, tag: str) -> float:
    return round(client.images.get(tag).attrs.get("Size", 0) / 1e6, 1)


def build_offline(with_torch: bool = False, force: bool = False,
                  log: Callable[[str], None] = print) -> BuildReport:
    """Build (or reuse) the offline image; needs root, debootstrap and Debian's archive."""
    recipe = Recipe.make(with_torch)
    client = _client()
    started = time.monotonic()
    if not force and _present(client, recipe.tag):
        return BuildReport(image=recipe.tag, reused=True, seconds=0.0,
                           size_mb=_size_mb(client, recipe.tag))
    _check_build_tools()
    previous = client.images.get(recipe.tag).id if _present(client, recipe.tag) else None
    with tempfile.TemporaryDirectory(prefix="sabench-rootfs-") as scratch:
        root = Path(scratch) / "root"
        _debootstrap(recipe, root, log)
        _pip_install(recipe, root, log)
        _finish_rootfs(recipe, root)
        log(f"importing {recipe.tag} into docker")
        _import(client, root, recipe)
    if previous and previous != client.images.get(recipe.tag).id:
        with contextlib.suppress(Exception):  # still used by a container: left for docker prune
            client.images.remove(previous)
    return BuildReport(image=recipe.tag, reused=False, seconds=round(time.monotonic() - started, 1),
                       size_mb=_size_mb(client, recipe.tag))


def _check_build_tools() -> None:
    if os.geteuid() != 0:
        raise BackendUnavailable("the offline image build needs root (debootstrap makes a chroot)")
    for tool in ("debootstrap", "tar"):
        if shutil.which(tool) is None:
            raise BackendUnavailable(
                f"the offline image build needs `{tool}` (apt-get install {tool})")


def _debootstrap(recipe: Recipe, root: Path, log: Callable[[str], None]) -> None:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sabench" / "debs"
    cache.mkdir(parents=True, exist_ok=True)
    mirror = os.environ.get(MIRROR_ENV, DEFAULT_MIRROR)
    command = ["debootstrap", f"--variant={recipe.variant}",
               f"--include={','.join(recipe.packages)}", f"--cache-dir={cache}", recipe.suite,
               str(root), mirror]
    log(f"debootstrap {recipe.suite} from {mirror} with {', '.join(recipe.packages)}")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise BackendUnavailable(f"debootstrap failed (exit {done.returncode}): {' | '.join(tail)}")


def _pip_install(recipe: Recipe, root: Path, log: Callable[[str], None]) -> None:
    """Install the recipe's PyPI packages inside the new root.

    The wheels are downloaded by the host's pip (which knows the host's proxy and certificates)
    for the image's Python, then installed in the root from that folder with no network.
    """
    if not recipe.pip_packages:
        return
    log(f"pip install {', '.join(recipe.pip_packages)}")
    wheels = root / "tmp" / "wheels"
    wheels.mkdir(parents=True)
    try:
        _run_pip([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
                  "--platform", "manylinux_2_17_x86_64", "--python-version", "3.11",
                  "--implementation", "cp", "--abi", "cp311", "--dest", str(wheels),
                  *recipe.pip_packages], "download")
        _run_pip(["chroot", str(root), "python3", "-m", "pip", "install", "--quiet",
                  "--no-index", "--find-links", "/tmp/wheels", "--break-system-packages",
                  "--root-user-action=ignore", *recipe.pip_packages], "install")
    finally:
        shutil.rmtree(wheels, ignore_errors=True)


def _run_pip(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-2:]
        raise BackendUnavailable(f"pip {what} for the image failed (exit {done.returncode}): "
                                 f"{' | '.join(tail)}")


def _finish_rootfs(recipe: Recipe, root: Path) -> None:
    """Add the sandbox user and workspace; drop caches and docs."""
    with (root / "etc/passwd").open("a") as passwd:
        passwd.write(f"sandbox:x:{recipe.uid}:{recipe.gid}:sabench sandbox:/tmp:/bin/sh\n")
    with (root / "etc/group").open("a") as group:
        group.write(f"sandbox:x:{recipe.gid}:\n")
    workspace = root / WORKSPACE.lstrip("/")
    workspace.mkdir(exist_ok=True)
    os.chown(workspace, recipe.uid, recipe.gid)
    for rel in PRUNE:
        target = root / rel
        if target.is_dir():
            shutil.rmtree(target)
            target.mkdir()


def _import(client: Any, root: Path, recipe: Recipe) -> None:
    repository, tag = recipe.tag.split(":")
    changes = [f"ENV PATH={BASE_ENV['PATH']}", f"WORKDIR {WORKSPACE}",
               f"USER {recipe.uid}:{recipe.gid}", f"LABEL sabench.sandbox.recipe={recipe.digest}",
               'CMD ["sleep", "infinity"]']
    tar = subprocess.Popen(["tar", "--numeric-owner", "-C", str(root), "-cf", "-", "."],
                           stdout=subprocess.PIPE)
    assert tar.stdout is not None  # stdout=PIPE
    try:
        client.api.import_image_from_stream(tar.stdout, repository=repository, tag=tag,
                                            changes=changes)
    finally:
        tar.stdout.close()
        if tar.wait() != 0:
            raise BackendUnavailable(f"tar of the root file system failed (exit {tar.returncode})")
    if not _present(client, recipe.tag):
        raise BackendUnavailable(f"docker import did not produce {recipe.tag}")


def build_dockerfile(force: bool = False, log: Callable[[str], None] = print) -> BuildReport:
    """Build the Dockerfile image (needs a registry for its base image and PyPI)."""
    import docker.errors

    client = _client()
    tag = dockerfile_tag()
    started = time.monotonic()
    if not force and _present(client, tag):
        return BuildReport(image=tag, reused=True, seconds=0.0, size_mb=_size_mb(client, tag))
    log(f"docker build {DOCKERFILE} -> {tag}")
    try:
        client.images.build(path=str(DOCKERFILE.parent), tag=tag, rm=True, pull=False)
    except (docker.errors.BuildError, docker.errors.APIError) as exc:
        raise BackendUnavailable(
            f"docker build failed ({exc}); without a registry use `sabench sandbox build --offline`"
        ) from exc
    return BuildReport(image=tag, reused=False, seconds=round(time.monotonic() - started, 1),
                       size_mb=_size_mb(client, tag))
