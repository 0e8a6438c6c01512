"""``toolsel report``: execute the notebooks into a folder, export HTML, write its README and
its entry page (``index.html``).

Without ``--registry`` it regenerates the project's own ``reports/`` (``make report``). With
``--registry`` (and ``--queries``, ``--requests``, ``--conversations``, ``--runs`` as the
data allows) it runs every notebook that data supports into ``--out`` and says which it
skipped and why. Everything given is checked before any notebook runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..visible import visible
from .common import command, csv_list, int_list


def default_notebooks() -> Path:
    """``notebooks/`` of the current folder if there is one, else the one beside the package."""
    here = Path("notebooks")
    if here.is_dir():
        return here
    beside = Path(__file__).resolve().parents[2] / "notebooks"
    return beside if beside.is_dir() else here


def _report_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--notebooks", type=Path, default=None,
                   help="folder of NN_slug.ipynb notebooks (default: ./notebooks, else the "
                        "repository's)")
    p.add_argument("--out", type=Path, default=None,
                   help="output folder (default: reports; required with --registry)")
    p.add_argument("--only", type=csv_list, default=None, metavar="NN[,NN]",
                   help="run only these notebook numbers (the README still lists all)")
    p.add_argument("--no-html", action="store_true", help="skip the HTML export")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="notebooks run at once (default: one per available core); the "
                        "outputs are the same bytes whatever N")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty folder that holds no earlier report (its files "
                        "are never deleted or overwritten: a name the report needs that is "
                        "taken is still refused)")
    p.add_argument("--readme-only", action="store_true",
                   help="only rewrite the README and index.html from the files present "
                        "(project reports)")
    g = p.add_argument_group("your own data (paths resolve against the current folder)")
    g.add_argument("--registry", type=Path, help="tool registry JSON: report on it")
    g.add_argument("--queries", type=Path, help="labeled queries JSONL")
    g.add_argument("--requests", type=Path, help="labeled multi-tool requests JSONL")
    g.add_argument("--conversations", type=Path, help="labeled conversations JSONL")
    g.add_argument("--runs", type=Path, help="folder of recorded runs (with tasks.jsonl)")
    g.add_argument("--scorers", type=csv_list, default=None,
                   help="comma-separated scorers (default: each notebook's)")
    g.add_argument("--model", type=Path, default=None,
                   help="a model file written by `toolsel fit`: page 13 also evaluates it "
                        "on the labeled requests it was not fit on")
    g.add_argument("--top-k", type=int_list, default=None,
                   help="comma-separated cut-offs (default: each notebook's)")


def _user_data(args: argparse.Namespace):
    from ..report.plan import DATA_PARAMS, UserData
    given = {n: getattr(args, n) for n in DATA_PARAMS if getattr(args, n) is not None}
    if args.registry is None:
        if given or args.scorers is not None or args.top_k is not None or \
                args.model is not None:
            flags = [f"--{n}" for n in given] + (["--scorers"] if args.scorers else []) \
                + (["--top-k"] if args.top_k else []) + (["--model"] if args.model else [])
            raise ValueError(f"{', '.join(flags)} need(s) --registry: the data to report on")
        return None
    if args.out is None:
        raise ValueError("--out is required with --registry (the folder the report goes to)")
    if args.readme_only:
        raise ValueError("--readme-only rewrites the project's reports/README.md; it takes "
                         "no --registry")
    return UserData(**{n: p.expanduser().resolve() for n, p in given.items()},
                    scorers=tuple(args.scorers) if args.scorers is not None else None,
                    top_k=tuple(args.top_k) if args.top_k is not None else None,
                    model=args.model.expanduser().resolve() if args.model is not None
                    else None)


def _update_which_scorer(out: Path) -> None:
    """After the project's own reports: bring the generated "Which scorer?" blocks of
    docs/scorers.md in step with the tables just written (only for ``<project>/reports`` with
    such a page)."""
    from ..pages.which_scorer import README_MARKERS, SCORER_PAGE, update_readme_which_scorer
    root = out.resolve().parent
    readme = root / SCORER_PAGE
    if out.resolve().name != "reports" or not readme.is_file() or \
            not (out / "06_default_scorer" / "style_table.csv").is_file():
        return
    if not all(m in readme.read_text(encoding="utf-8") for m in README_MARKERS):
        return
    if update_readme_which_scorer(readme, root):
        print(f"updated the 'Which scorer?' block of {visible(readme)}")


@command("report", "execute the notebooks with papermill (the project's reports/, or a "
         "report on your --registry/--queries), export HTML, write a README and index.html", _report_args)
def _report(args: argparse.Namespace) -> int:
    from ..report.plan import check_user_data, find_notebooks
    from ..report.readme import write_readme
    from ..report.runner import (add_to_manifest, check_report_out, generate_reports,
                                 other_writes, report_lock)
    from ..report.site import write_index
    data = _user_data(args)
    notebooks = args.notebooks if args.notebooks is not None else default_notebooks()
    out = args.out if args.out is not None else Path("reports")
    if args.readme_only:
        # only in a report folder (the files it rewrites are the report's)
        real = check_report_out(out, notebooks)
        real.mkdir(parents=True, exist_ok=True)
        with report_lock(real):
            check_report_out(out, notebooks)
            path = write_readme(out, find_notebooks(notebooks))
            index = write_index(out, find_notebooks(notebooks))
            add_to_manifest(out, [path.name, index.name], find_notebooks(notebooks))
        print(f"wrote {visible(path)} and {visible(index)}")
        return 0
    if args.jobs is not None and args.jobs < 1:
        raise ValueError(f"--jobs: expected a whole number from 1, got {args.jobs}")
    find_notebooks(notebooks, args.only)  # a missing folder or number: before anything runs
    check_report_out(out, notebooks, force=args.force)  # before any work; again under the lock
    if data is not None:
        loaded = check_user_data(data)
        counts = ", ".join(f"{len(v)} {k}" if k != "registry" else f"{len(v)} tools"
                           for k, v in loaded.items())
        print(f"your data: {visible(counts)}", flush=True)

    def done(run) -> None:
        if run.skipped:
            print(f"  {visible(run.source.stem)}: skipped, {visible(run.skipped)}", flush=True)
            return
        status = "FAILED " + run.error if run.error else "ok"
        print(f"  {visible(run.source.name)}: {visible(status)} ({run.seconds:.1f} s)",
              flush=True)

    t0 = time.perf_counter()
    print(f"executing notebooks from {visible(notebooks)} into {visible(out)}/", flush=True)
    print("also written outside it: " + "; ".join(f"{what} {visible(path)}" for what, path
                                                   in other_writes()), flush=True)
    runs = generate_reports(notebooks, out, only=args.only, html=not args.no_html,
                            on_done=done, data=data, force=args.force, jobs=args.jobs)
    ran = [r for r in runs if r.skipped is None]
    failed = [r for r in ran if r.error]
    skipped = len(runs) - len(ran)
    print(f"{len(ran) - len(failed)}/{len(ran)} notebooks ok"
          + (f", {skipped} skipped" if skipped else "")
          + f" in {time.perf_counter() - t0:.1f} s; wrote {visible(out / 'README.md')} and "
          f"{visible(out / 'index.html')}")
    if data is None and not failed:
        _update_which_scorer(out)
    if failed:
        print("failed: " + visible(", ".join(r.source.name for r in failed))
              + " (previous outputs kept; see NN_slug.failed.ipynb)", file=sys.stderr)
        return 1
    return 0
