"""Scaffold protocol and registry: alignment-first and the published baselines."""
