"""Run untrusted generated code in isolation (docker or bubblewrap backends); see README.md."""

from sabench.sandbox.protocol import BACKENDS, Backend, Sandbox, get_backend, open_sandbox
from sabench.sandbox.types import (
    BackendUnavailable,
    CommandTimeout,
    ExecResult,
    Limits,
    Mount,
    SandboxBroken,
    SandboxError,
    SandboxSpec,
    UnsafeExecutionRefused,
)

__all__ = ["BACKENDS", "Backend", "BackendUnavailable", "CommandTimeout", "ExecResult", "Limits",
           "Mount", "Sandbox", "SandboxBroken", "SandboxError", "SandboxSpec",
           "UnsafeExecutionRefused", "get_backend", "open_sandbox"]
