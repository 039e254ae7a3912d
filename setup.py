"""Build the compiled engine and the compiled header scan from pyx/ into the package; fall back to pure Python.

- ``SHIPCODE_MCP_NO_EXTENSIONS=1``: do not compile (pure-Python install).
- ``SHIPCODE_MCP_REQUIRE_EXTENSIONS=1``: a failed compile fails the install (used by CI).
- ``SHIPCODE_MCP_CYTHON_ANNOTATE=1``: also write ``pyx/*.html`` annotation reports.
Otherwise a failed compile (no C compiler, say) installs the pure engine and says so on stderr.
"""

import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

NO_EXTENSIONS = bool(os.environ.get("SHIPCODE_MCP_NO_EXTENSIONS"))
REQUIRE_EXTENSIONS = bool(os.environ.get("SHIPCODE_MCP_REQUIRE_EXTENSIONS"))
ANNOTATE = bool(os.environ.get("SHIPCODE_MCP_CYTHON_ANNOTATE"))
#: The files the compiled engine is made of besides pyx/_engine_c.pyx (see docs/architecture.md).
ENGINE_PARTS = ("*.pxd", "*.pxi", "*.h")


def banner(text):
    sys.stderr.write(f"\n*** shipcode-mcp build: {text} ***\n\n")


class OptionalBuildExt(build_ext):
    """Compile the engine; on failure install pure Python unless compiled is required."""

    def run(self):
        try:
            super().run()
        except Exception as error:
            self.fail(error)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as error:
            # A module left by an earlier build must not ship as if this one had worked.
            stale = self.get_ext_fullpath(ext.name)
            if os.path.exists(stale):
                os.remove(stale)
            self.fail(error)
        else:
            banner(f"compiled engine built ({ext.name})")

    def fail(self, error):
        if REQUIRE_EXTENSIONS:
            raise error
        banner(f"could not compile the engine ({error}); installing the pure-Python engine")


def extensions():
    if NO_EXTENSIONS or sys.implementation.name != "cpython":
        banner("SHIPCODE_MCP_NO_EXTENSIONS set or not CPython: pure-Python engine only")
        return []
    try:
        from Cython.Build import cythonize
    except ImportError as error:
        if REQUIRE_EXTENSIONS:
            raise
        banner(f"Cython is not available ({error}); installing the pure-Python engine")
        return []
    engine = Extension(
        "shipcode_mcp._engine_c",
        ["pyx/_engine_c.pyx"],
        # One module in parts: the .pxd declarations, the included .pxi files and the C header.
        depends=sorted(str(path) for pattern in ENGINE_PARTS for path in Path("pyx").glob(pattern)),
        include_dirs=["pyx"],
        extra_compile_args=["-O3"],
    )
    # The HTTP header scan: a module of its own, twin of transports/http/_headerscan_py.py.
    headerscan = Extension(
        "shipcode_mcp.transports.http._headerscan_c", ["pyx/_headerscan_c.pyx"], extra_compile_args=["-O3"]
    )
    try:
        return cythonize(
            [engine, headerscan],
            compiler_directives={"language_level": "3", "embedsignature": True},
            annotate=ANNOTATE,
            quiet=True,
        )
    except Exception as error:
        if REQUIRE_EXTENSIONS:
            raise
        banner(f"Cython could not translate the engine ({error}); installing the pure-Python engine")
        return []


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
