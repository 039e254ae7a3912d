"""``python -m shipcode_mcp``: the same as the ``shipcode-mcp`` command."""

from .cli import main

raise SystemExit(main())
