"""Run untrusted generated code in isolation (docker or bubblewrap backends)."""
