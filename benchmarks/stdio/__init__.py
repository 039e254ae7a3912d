"""The benchmark harness behind ``benchmarks/run.py``, one module per job.

Imports run downward only, in this order: ``common`` (paths, logging), ``fmt`` (number formats),
``workloads`` (requests and the exact answers), ``checks`` (what other servers' answers must mean),
``servers`` (the servers and how to start them), ``session`` (one child process over pipes), ``measure``
(one measured run), ``plan`` (modes, sizing, the phases of a run), ``targets`` (the ratios the issues ask
for), ``machine`` (machine and versions), ``report`` (Markdown), ``chart`` (PNG), ``selftest`` and ``cli``.
"""
