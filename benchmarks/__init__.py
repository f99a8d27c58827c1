"""Measured workloads for minigrad (see benchmarks/README.md)."""
