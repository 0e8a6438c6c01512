"""``toolsel report``: execute every notebook into reports/, export HTML, write the README."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .common import command, csv_list


def _report_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--notebooks", type=Path, default=Path("notebooks"),
                   help="folder of NN_slug.ipynb notebooks (default: notebooks)")
    p.add_argument("--out", type=Path, default=Path("reports"),
                   help="output folder (default: reports)")
    p.add_argument("--only", type=csv_list, default=None, metavar="NN[,NN]",
                   help="run only these notebook numbers (the README still lists all)")
    p.add_argument("--no-html", action="store_true", help="skip the HTML export")
    p.add_argument("--readme-only", action="store_true",
                   help="only rewrite reports/README.md from the files present")


@command("report", "execute the notebooks with papermill into reports/, export HTML, "
         "write reports/README.md", _report_args)
def _report(args: argparse.Namespace) -> int:
    from ..report.runner import find_notebooks, generate_reports, write_readme
    if args.readme_only:
        path = write_readme(args.out, find_notebooks(args.notebooks))
        print(f"wrote {path}")
        return 0

    def done(run) -> None:
        status = "FAILED " + run.error if run.error else "ok"
        print(f"  {run.source.name}: {status} ({run.seconds:.1f} s)", flush=True)

    t0 = time.perf_counter()
    print(f"executing notebooks from {args.notebooks} into {args.out}/", flush=True)
    runs = generate_reports(args.notebooks, args.out, only=args.only, html=not args.no_html,
                            on_done=done)
    failed = [r for r in runs if r.error]
    print(f"{len(runs) - len(failed)}/{len(runs)} notebooks ok in "
          f"{time.perf_counter() - t0:.1f} s; wrote {args.out / 'README.md'}")
    if failed:
        print("failed: " + ", ".join(r.source.name for r in failed), file=sys.stderr)
        return 1
    return 0
