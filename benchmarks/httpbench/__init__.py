"""The HTTP benchmark's driver (``python benchmarks/run.py http``), one module per job, each importing only the
ones before it: ``exchange`` (the requests and what their answers must be), ``servers`` (the servers, their
setup, start, readiness and memory), ``wrk`` (the load generator: install, run, parse), ``report`` (medians,
targets, Markdown and JSON), ``chart`` (the PNG), ``sessionlife`` (``--session-life``) and ``cli`` (options,
the interleaved rounds, files written, exit status)."""
