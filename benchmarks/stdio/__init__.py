"""The stdio benchmark behind ``benchmarks/run.py``, one module per job.

Imports run downward only, after the shared package ``common`` (paths, logging, number formats, the machine):
``workloads`` (requests and the exact answers), ``checks`` (what other servers' answers must mean),
``servers`` (the servers and how to start them), ``session`` (one child process over pipes), ``measure``
(one measured run), ``plan`` (modes, sizing, the phases of a run), ``targets`` (the ratios the issues ask
for), ``report`` (Markdown), ``chart`` (PNG), ``selftest`` and ``cli``.
"""
