"""jp's benchmarks: every figure against a baseline measured in the same run.

    .venv/bin/python bench/run.py            # the full run (a few minutes on 2 cores)
    .venv/bin/python bench/run.py --quick    # smaller stores, fewer samples
    make bench

Prints one Markdown table on stdout (progress goes to stderr).  The targets
are those of docs/design.md section 8; docs/performance.md records a run.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common
from bench.common import PROFILES, ROOT, Profile, Results, machine, table

SECTIONS = (
    "startup",
    "model",
    "store",
    "append",
    "load",
    "fork",
    "review",
    "many",
    "import",
    "batches",
    "big-import",
    "bulk",
    "render",
    "sessions",
    "search",
    "search-scale",
    "sync",
    "serve",
    "mcp",
    "mcp-serve",
    "secrets",
    "usage",
)
SCALE_ONLY = {"search-scale"}  # only when named: 100,000 conversations take long
FIXTURES = ROOT.parent / "shared" / "fixtures" / "jp-conversations"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/run.py", description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="smaller stores, fewer samples")
    mode.add_argument("--smoke", action="store_true", help="tiny sizes: checks that it runs")
    parser.add_argument(
        "--only", action="append", choices=SECTIONS, help="run only this section (repeatable)"
    )
    parser.add_argument(
        "--fixtures",
        type=Path,
        default=FIXTURES,
        help="JP conversation folders to import (skipped when absent)",
    )
    parser.add_argument("--workdir", type=Path, help="where to build stores (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the stores afterwards")
    parser.add_argument("--output", type=Path, help="also write the report to this file")
    return parser.parse_args(argv)


def run(args: argparse.Namespace, profile: Profile, root: Path, results: Results) -> None:
    from bench import process_cases, store_cases, store_reads

    wanted = set(args.only or set(SECTIONS) - SCALE_ONLY)
    home = root / "home"
    home.mkdir()
    if "startup" in wanted:
        results.log("process start")
        process_cases.startup_section(root, profile, results)
    if "model" in wanted:
        from bench import model_cases

        results.log("jp q to the provider")
        model_cases.model_section(root, profile, results)
    if wanted & {"store", "append", "load", "fork", "review"}:
        results.log("the big store")
        big = store_cases.build_big(root, profile, results, wanted)
        if "append" in wanted:
            results.log("append")
            store_cases.append_section(big, profile, results)
        if "load" in wanted:
            results.log("load and project")
            store_reads.load_section(big, profile, results)
        if "fork" in wanted:
            results.log("fork")
            store_reads.fork_section(big, profile, results)
        if "review" in wanted:
            results.log("review start")
            store_reads.review_section(big, profile, results, home)
        big.store.close()
    if "many" in wanted:
        results.log("many conversations")
        process_cases.many_section(root, profile, results)
    if "import" in wanted:
        results.log("import")
        process_cases.import_section(root, profile, results, args.fixtures)
    if "batches" in wanted:
        from bench import import_batches

        results.log("many small imports into one store")
        import_batches.batches_section(root, profile, results)
    if "big-import" in wanted:
        from bench import import_batches

        results.log("one conversation of many events imported")
        import_batches.big_section(root, profile, results)
    if "bulk" in wanted:
        from bench import bulk_cases

        results.log("bulk write into packs")
        bulk_cases.bulk_section(root, profile, results)
    if "render" in wanted:
        from bench import render_cases

        results.log("an answer rendered as it streams")
        render_cases.render_section(profile, results)
    if "sessions" in wanted:
        from bench import session_cases

        results.log("other tools' sessions")
        session_cases.sessions_section(root, profile, results)
    if "sync" in wanted:
        from bench import sync_bench

        results.log("sync at scale, against plain git")
        sizes = {"full": (1_000, 10_000), "quick": (1_000,)}.get(profile.name, (50,))
        sync_folder = root / "sync"
        sync_folder.mkdir()
        sync_bench.section(sync_folder, sizes, profile.few(profile.runs), results)
    if "serve" in wanted:
        from bench import serve_cases

        results.log("jp serve")
        serve_cases.serve_section(root, profile, results)
    if "mcp" in wanted:
        from bench import mcp_cases

        results.log("jp q with an MCP server")
        mcp_cases.mcp_section(root, profile, results)
    if "mcp-serve" in wanted:
        from bench import mcpserve_cases

        results.log("jp mcp serve: start-up and search")
        mcpserve_cases.mcpserve_section(root, profile, results)
    if "secrets" in wanted:
        from bench import secret_cases

        results.log("the secret scan at push")
        secret_cases.secrets_section(root, profile, results)
    if "usage" in wanted:
        from bench import usage_cases

        results.log("jp usage at scale")
        usage_cases.usage_section(root, profile, results)
    if wanted & {"search", "search-scale"}:
        from bench import search_cases

        results.log("search and listing at scale")
        if "search" in wanted:
            search_cases.search_section(root, profile, results)
        if "search-scale" in wanted:
            search_cases.search_section(root, profile, results, scale=True)


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    profile = PROFILES["smoke" if args.smoke else "quick" if args.quick else "full"]
    common.WARMUP = profile.warmup

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    results = Results(log=log)
    began = time.monotonic()
    load_before = os.getloadavg()[0]
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="jp-bench-", dir=args.workdir))
    try:
        run(args, profile, root, results)
    finally:
        if args.keep:
            log(f"stores kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    command = "bench/run.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    report = "\n".join(
        [
            f"jp benchmarks, profile {profile.name}, {time.monotonic() - began:.0f} s: "
            f"`{command.strip()}`",
            f"Machine: {machine()}; load average {load_before:.2f} at the start, "
            f"{os.getloadavg()[0]:.2f} at the end",
            "",
            table(results.rows),
            "",
        ]
    )
    print(report, end="")
    if args.output:
        args.output.write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
