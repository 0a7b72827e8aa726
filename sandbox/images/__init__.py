"""Sandbox images: the Dockerfile (registry) build and the offline debootstrap build."""

from sabench.sandbox.images.offline import (
    DOCKERFILE,
    BuildReport,
    Recipe,
    build_dockerfile,
    build_offline,
    dockerfile_tag,
    image_present,
    resolve_image,
)

__all__ = ["DOCKERFILE", "BuildReport", "Recipe", "build_dockerfile", "build_offline",
           "dockerfile_tag", "image_present",
           "resolve_image"]
