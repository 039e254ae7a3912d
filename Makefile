# Developer shortcuts; the README's two commands are all a fresh machine needs.
PYTHON ?= python

.PHONY: develop develop-pure test test-pure annotate bench bench-quick

develop:  ## editable install, compiled engine required
	SHIPCODE_MCP_REQUIRE_EXTENSIONS=1 $(PYTHON) -m pip install -e ".[test]"

develop-pure:  ## editable install without compiling
	SHIPCODE_MCP_NO_EXTENSIONS=1 $(PYTHON) -m pip install -e ".[test]"

test:  ## the whole suite, both engines
	$(PYTHON) -m pytest

test-pure:  ## the whole suite, pure engine only
	SHIPCODE_MCP_NO_EXTENSIONS=1 $(PYTHON) -m pytest

annotate:  ## pyx/*.html, one page per part of the engine: yellow lines are where Python objects remain
	$(PYTHON) -m cython -3 -a --module-name shipcode_mcp._engine_c pyx/_engine_c.pyx -o pyx/_engine_c.c
	$(PYTHON) -m cython -3 -a --module-name shipcode_mcp.transports.http._headerscan_c pyx/_headerscan_c.pyx \
		-o pyx/_headerscan_c.c
	@echo "open pyx/_engine_c.html (Engine) and pyx/fastpath.html, pyx/scanner.html, ... (the included parts)"

bench-quick:  ## 2 to 6 min, depending on the machine and its load
	$(PYTHON) benchmarks/run.py --quick

bench:  ## the full benchmark
	$(PYTHON) benchmarks/run.py --full
