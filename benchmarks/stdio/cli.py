"""The command line of ``benchmarks/run.py``: options, the run, the files written, the exit status."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

import orjson
from common import RESULTS, ROOT, log
from common.machine import machine_info, uncommitted_changes

from .chart import draw_chart
from .plan import MODES, Bench
from .report import fmt_ratio, to_markdown, update_readme
from .selftest import self_test
from .servers import builtin_specs, resolve_servers
from .targets import GROUPS, ratio_rows, unmet
from .workloads import SLOW, WORKLOADS

SCRATCH_TAG = "last"  # benchmarks/results/last.* is git-ignored; only latest.* is committed


def output_files(args) -> tuple[Path | None, str]:
    """(folder, file stem) of the results, or (None, "") when nothing is written."""
    if args.save or args.update_readme:
        return RESULTS, "latest"
    if args.out or args.tag:
        return args.out or RESULTS, args.tag or SCRATCH_TAG
    if args.mode == "smoke":
        return None, ""
    return RESULTS, SCRATCH_TAG


def _sizes(text: str) -> list:
    sizes = [int(part) for part in text.split(",") if part.strip()]
    if not sizes or min(sizes) < 1:
        raise ValueError(text)
    return sizes


_sizes.__name__ = "comma-separated positive integers"


def target_groups(args) -> list:
    """The target groups to report: those of the mode, and with ``--check-targets GROUPS`` exactly those."""
    if args.check_targets:
        return [g.strip() for g in args.check_targets.split(",") if g.strip()]
    return MODES[args.mode].get("targets") or list(GROUPS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description="Benchmark stdio MCP servers (shipcode-mcp, the official SDKs, floors, or any command).",
        epilog="Known servers: " + ", ".join(s.name for s in builtin_specs()),
    )
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument(
        "--quick", dest="mode", action="store_const", const="quick", help="every default server, 3 rounds (default)"
    )
    mode.add_argument(
        "--full", dest="mode", action="store_const", const="full", help="more rounds, longer runs, all peers"
    )
    mode.add_argument(
        "--smoke",
        dest="mode",
        action="store_const",
        const="smoke",
        help="CI-sized: shipcode-mcp's two engines, every code path, every response checked, writes nothing; "
        "its targets are the fast-path guard (compiled >= 2x pure on ping and mix)",
    )
    ap.add_argument(
        "--servers", help="comma-separated built-in servers to run ('all' for every one, 'none' for only --server)"
    )
    ap.add_argument(
        "--server",
        action="append",
        metavar="CMD",
        help='any stdio MCP server command, e.g. "node their-server.js" (repeatable)',
    )
    ap.add_argument("--name", action="append", metavar="LABEL", help="label for the matching --server (in order)")
    ap.add_argument("--workloads", help="comma-separated subset of: " + ",".join([*WORKLOADS, SLOW]))
    ap.add_argument("--skip", help=f"comma-separated phases to skip: latency, scaling, parallel, {SLOW}")
    ap.add_argument(
        "--slow-sizes",
        type=_sizes,
        metavar="N,N",
        help=f"numbers of calls of the {SLOW} workload (quick and full "
        + ",".join(map(str, MODES["quick"]["slow_sizes"]))
        + ", smoke "
        + ",".join(map(str, MODES["smoke"]["slow_sizes"]))
        + ")",
    )
    ap.add_argument(
        "--slow-limit",
        type=float,
        metavar="S",
        help=f"cut a {SLOW} run not done S seconds after its initialize answer (quick "
        f"{MODES['quick']['slow_limit']:.0f}, full {MODES['full']['slow_limit']:.0f}, smoke "
        f"{MODES['smoke']['slow_limit']:.0f}); a larger size whose estimate exceeds S is skipped",
    )
    ap.add_argument(
        "--rounds",
        type=int,
        help=f"interleaved rounds (quick {MODES['quick']['rounds']}, full {MODES['full']['rounds']}; "
        f"smoke: of ping and mix, {MODES['smoke']['guard_rounds']})",
    )
    ap.add_argument(
        "--seconds",
        type=float,
        help=f"target seconds per pipelined run (quick {MODES['quick']['seconds']}, full {MODES['full']['seconds']})",
    )
    ap.add_argument(
        "--save",
        action="store_true",
        help=f"write the committed {RESULTS.relative_to(ROOT)}/latest.{{md,json,png}} (without it: "
        f"{RESULTS.relative_to(ROOT)}/{SCRATCH_TAG}.*, git-ignored; --smoke writes nothing)",
    )
    ap.add_argument("--out", type=Path, help=f"results folder instead (default {RESULTS.relative_to(ROOT)})")
    ap.add_argument("--tag", help=f"file name stem of the results instead (default {SCRATCH_TAG}; --save: latest)")
    ap.add_argument("--no-chart", action="store_true", help="do not draw the PNG chart")
    ap.add_argument(
        "--update-readme", action="store_true", help="--save, and copy the report into benchmarks/README.md"
    )
    ap.add_argument(
        "--allow-dirty",
        action="store_true",
        help="let --save publish results measured with uncommitted changes to tracked files (refused otherwise)",
    )
    ap.add_argument(
        "--check-targets",
        nargs="?",
        const="",
        metavar="GROUPS",
        help="exit 2 when a target is missed or a figure it needs is missing (n/a); without GROUPS every target "
        "of the mode (smoke: engines), else only the comma-separated groups among: " + ", ".join(GROUPS),
    )
    ap.add_argument("--require-compiled", action="store_true", help="fail unless the compiled engine is live")
    ap.add_argument("--list", action="store_true", help="list the servers and whether they can run, then exit")
    args = ap.parse_args(argv)
    args.mode = args.mode or "quick"
    groups = target_groups(args)
    unknown = set((args.workloads or "").split(",")) - {"", SLOW, *WORKLOADS}
    if unknown:
        ap.error(f"--workloads: unknown workload(s) {', '.join(sorted(unknown))}")
    if args.check_targets and not set(groups) <= set(GROUPS):
        ap.error(f"--check-targets: unknown group(s) {', '.join(sorted(set(groups) - set(GROUPS)))}")
    out, tag = output_files(args)
    if args.save or args.update_readme:
        if args.out or args.tag:
            ap.error("--save writes benchmarks/results/latest.*: it takes no --out or --tag")
        changes = uncommitted_changes()
        if changes != "" and not args.allow_dirty:
            reason = f"commit (or stash) these changes first:\n{changes}" if changes else "this is not a git checkout"
            ap.error(
                f"--save publishes results, and published results come from a clean commit: {reason}\n"
                "(--allow-dirty saves anyway; the report then names the commit with -dirty)"
            )
    t_start = time.perf_counter()

    self_test()
    specs = resolve_servers(args)
    if args.list:
        for s in specs:
            print(f"{s.name:<22} {'ok ' if s.available else 'no '} {' '.join(s.argv)}  {s.note}")
        return 0
    for s in specs:
        if not s.available:
            log(f"skipping {s.name}: {s.note}")
        elif s.note:
            log(f"note {s.name}: {s.note}")
    if not any(s.available for s in specs):
        log("no server can run")
        return 1

    bench = Bench(args, specs)
    machine = machine_info(specs)
    log(f"{args.mode} mode: {', '.join(s.name for s in bench.live)}")
    bench.run()

    res = {
        "schema": 1,
        "mode": args.mode,
        "command": "python benchmarks/run.py "
        + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])),
        "rounds": bench.cfg["rounds"],
        "config": {k: v for k, v in bench.cfg.items()},
        "machine": machine,
        "servers": {
            s.name: {
                "label": s.label,
                "argv": s.argv,
                "env": s.env,
                "check": s.check,
                "group": s.group,
                "available": s.available,
                "engine": s.engine,
                "note": s.note,
            }
            for s in specs
        },
        **bench.out,
        "failures": bench.failures,
    }
    try:
        res["machine"]["loadavg_end"] = round(os.getloadavg()[0], 2)
    except OSError:
        pass
    res["duration_s"] = time.perf_counter() - t_start
    res["ratios"] = ratio_rows(res, tuple(g for g in GROUPS if g in groups))
    md = to_markdown(res, specs)
    print(md)

    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{tag}.json").write_bytes(orjson.dumps(res, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))
        (out / f"{tag}.md").write_text(md + "\n")
        written = [f"{tag}.json", f"{tag}.md"]
        if not args.no_chart:
            why = draw_chart(res, specs, out / f"{tag}.png")
            if why:
                log(why)
            else:
                written.append(f"{tag}.png")
        log(f"wrote {', '.join(str(out / w) for w in written)}")
        if args.update_readme:
            update_readme(md)

    # One closing line that CI log readers understand: checked sessions passed, failed.
    print(f"{args.mode}: {bench.passed} passed, {len(bench.failures)} failed")
    if bench.failures:
        log(f"{len(bench.failures)} failure(s): see the Failures section")
        return 1
    log(f"every response of {bench.passed} sessions checked, no mismatch ({res['duration_s']:.0f} s)")
    if args.check_targets is not None:
        bad = unmet(res["ratios"])
        for row in bad:
            value = "no figure" if row["value"] is None else fmt_ratio(row)
            log(
                f"target {'missed' if row['status'] == 'MISSED' else 'not measured'}: {row['figure']}: {value}, "
                f"want {row['target']}"
            )
        checked = [row for row in res["ratios"] if row["status"]]
        if bad:
            log(f"--check-targets: {len(bad)} of {len(checked)} targets not met")
            return 2
        log(f"--check-targets: all {len(checked)} targets met")
    return 0
