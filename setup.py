"""Maps the five root folders to the `sabench.*` namespace (editable and normal installs)."""

from pathlib import Path

from setuptools import setup

ROOTS = ("sandbox", "verifiers", "agent", "scaffolds", "benchmark")
DATA_PATTERNS = ["**/*.md", "**/*.json", "**/*.yaml", "**/*.txt", "**/*.py", "**/*.j2",
                 "**/*.html", "**/*.css", "**/Dockerfile", "**/*.sh", "**/*.toml"]


def _packages() -> dict[str, str]:
    """Every folder with an __init__.py under a root, keyed by its dotted `sabench.` name."""
    here = Path(__file__).parent
    found = {}
    for root in ROOTS:
        for init in sorted((here / root).rglob("__init__.py")):
            folder = init.parent.relative_to(here)
            if "demo" in folder.parts or "__pycache__" in folder.parts:
                continue  # bundled example repositories are data, not our packages
            found["sabench." + ".".join(folder.parts)] = folder.as_posix()
    return found


packages = _packages()
setup(
    packages=list(packages),
    package_dir=packages,
    package_data={name: DATA_PATTERNS for name in packages},
)
