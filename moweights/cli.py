"""The ``moweights`` command: run, validate, rankers, init, report, schema.

Exit codes: 0 success, 1 a run failed (a study: any of its data sets; or a report could
not be drawn), 2 bad usage or bad input (a config file, a data file or an output folder
that cannot be used -- a file, a folder another run is writing, a non-empty folder
moweights did not make without ``--force`` -- or a Dask scheduler address that does not
answer as one), 130 interrupted by Ctrl-C (the output folder is left valid and says it
is partial), 143 ended by SIGTERM (as on Ctrl-C), 141 the output pipe was closed early
(``moweights rankers | head``; the shell's code for SIGPIPE).

Errors are one line on stderr (``error: ...``; a config's problems one per line), never
a traceback; ``-v`` adds the traceback of an unexpected error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from moweights.errors import (
    ConfigError,
    DataFileError,
    InvalidInputError,
    InvalidParameterError,
    MoweightsError,
    OutputFolderError,
    RunLockedError,
    SchedulerError,
)

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_PIPE = 0, 1, 2, 130, 141
#: SIGTERM: ended as on Ctrl-C, with the shell's code for the signal (128 + 15)
EXIT_TERMINATED = 143

_EPILOG = """exit codes: 0 ok, 1 the run failed (a study: any data set), 2 bad usage or input
(config, data file, output folder: a file, in use by another run, or not empty and not made
by moweights without --force; a Dask scheduler address that does not answer as one), 130
interrupted (Ctrl-C; the output folder stays valid and is marked partial), 143 the same
on SIGTERM. Docs: README.md, docs/config.md."""


class _UsageError(Exception):
    """Bad command-line usage (exit code 2)."""


#: errors in what the user gave us, found before any result was computed: exit code 2
_INPUT_ERRORS = (
    ConfigError,
    DataFileError,
    OutputFolderError,
    RunLockedError,
    SchedulerError,
    _UsageError,
)


def _common(*, top: bool) -> argparse.ArgumentParser:
    """-q / -v, accepted before the command and after it.

    The subcommands' copies default to SUPPRESS: with a default of False they would
    overwrite a ``-q`` given before the command (``moweights -q run``).
    """
    default = False if top else argparse.SUPPRESS
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_mutually_exclusive_group()
    group.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=default,
        help="no progress, summary or warnings",
    )
    group.add_argument(
        "-v", "--verbose", action="store_true", default=default, help="also log every step"
    )
    return common


def _parser() -> argparse.ArgumentParser:
    from moweights.about import __version__

    common = _common(top=False)
    parser = argparse.ArgumentParser(
        prog="moweights",
        description="Feature ranking: run rankers, aggregate and evaluate them from a config.",
        epilog=_EPILOG,
        parents=[_common(top=True)],
    )
    parser.add_argument("--version", action="version", version=f"moweights {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser(
        "run",
        parents=[common],
        help="run a config: rank, aggregate, evaluate, write the report folder",
        description="Run a TOML config (or a run's config.json): rank the features with every "
        "ranker, aggregate, evaluate, and write tables, plots and report.html. Re-running an "
        "unchanged config into the same folder reuses finished rankers.",
        epilog=_EPILOG,
    )
    run.add_argument("config", help="the TOML config file")
    run.add_argument("-o", "--output", metavar="DIR", help="output folder (overrides [output].dir)")
    run.add_argument(
        "-s",
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a setting, e.g. --set evaluation.cv=5 --set rankers.0.params.k=10 "
        "(repeatable; VALUE is read as TOML)",
    )
    run.add_argument("--no-cache", action="store_true", help="recompute everything")
    run.add_argument(
        "--force",
        action="store_true",
        help="write into an output folder that is not empty and was not made by moweights "
        "(files of the same names are replaced; without it such a folder is refused)",
    )
    run.add_argument("-j", "--n-jobs", type=int, metavar="N", help="parallel jobs ([run].n_jobs)")

    val = sub.add_parser(
        "validate",
        parents=[common],
        help="check a config without running it",
        description="Check a config: every problem is reported at once with its file and key.",
        epilog=_EPILOG,
    )
    val.add_argument("config", help="the TOML config file")
    val.add_argument("-s", "--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override a setting before checking")  # fmt: skip

    rk = sub.add_parser(
        "rankers",
        parents=[common],
        help="list the registered rankers",
        description="List the registered rankers (plugins included); broken plugins are named.",
    )
    fmt = rk.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    fmt.add_argument(
        "--markdown",
        action="store_true",
        help="print the built-in rankers as the Markdown table of the README",
    )

    init = sub.add_parser(
        "init",
        parents=[common],
        help="write a commented example config",
        description="Write a commented example config with every section and key explained.",
    )
    init.add_argument("path", nargs="?", default="moweights.toml", help="default: moweights.toml")
    init.add_argument("-f", "--force", action="store_true", help="overwrite an existing file")

    rep = sub.add_parser(
        "report",
        parents=[common],
        help="re-render a run folder's plots and report.html from its tables",
        description="Redraw the PNG plots and report.html of a finished (or partial) run from "
        "its saved tables, and print its summary. The data is not needed.",
        epilog=_EPILOG,
    )
    rep.add_argument("folder", help="a run's output folder")
    rep.add_argument("--no-plots", action="store_true", help="only the HTML page and summary")

    sch = sub.add_parser(
        "schema",
        parents=[common],
        help="print (or write) the JSON Schema of the config file",
        description="The JSON Schema of config files, for editors (e.g. Taplo / Even Better "
        "TOML: #:schema ./config-schema.json).",
    )
    sch.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    sch.add_argument(
        "-f", "--force", action="store_true", help="overwrite FILE if it exists (-o FILE)"
    )
    sch.add_argument(
        "--format",
        choices=("json", "markdown"),
        default="json",
        help="the JSON Schema (default) or the Markdown reference (docs/config.md)",
    )
    fet = sub.add_parser(
        "fetch",
        parents=[common],
        help="download a public benchmark data set, check it and print its path",
        description="Download a benchmark data set into the local cache (MOWEIGHTS_DATA, or "
        "~/.cache/moweights), check it against its SHA-256 and print the file's path, for "
        "[data].path. Offline, the error says where to put a copy.",
    )
    fet.add_argument("source", choices=("skfeature", "pmlb"), help="the collection")
    fet.add_argument("name", help="the data set, e.g. Isolet (scikit-feature) or sonar (PMLB)")
    fet.add_argument("--data-home", metavar="DIR", help="cache folder (default as above)")

    rec = sub.add_parser(
        "recommend",
        parents=[common],
        help="which rankers the planted-structure atlas supports for a data file",
        description="Read a data file's shape (rows, features, a class target and its "
        "balance) and list the rankers that recovered the most planted features on the "
        "atlas's data of the nearest shape (benchmarks/protocols/atlas.py), with the reason.",
    )
    rec.add_argument("data", help="a data file (.csv, .tsv, .parquet, .mat, .h5ad)")
    who = rec.add_mutually_exclusive_group()
    who.add_argument(
        "--target",
        help="the target column (default: a column named like one -- label, class, group, "
        "condition, ... -- or the one text column of few values)",
    )
    who.add_argument(
        "--no-target", action="store_true", help="rank without a target (unsupervised rankers)"
    )
    rec.add_argument(
        "--transpose",
        action="store_true",
        help="the file holds one row per feature (genes as rows), its first column naming them",
    )
    rec.add_argument("--top", type=int, default=5, metavar="N", help="rankers shown (default 5)")
    rec.add_argument("--atlas", metavar="CSV", help="another atlas run's atlas.csv")
    return parser


def _setup_logging(verbosity: int) -> None:
    logger = logging.getLogger("moweights")
    logger.handlers = [h for h in logger.handlers if not getattr(h, "_moweights_cli", False)]
    handler = logging.StreamHandler(sys.stderr)
    handler._moweights_cli = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO if verbosity >= 2 else logging.WARNING)
    logger.propagate = False


def _warning_printer() -> Callable[..., None]:
    """A ``warnings.showwarning`` that prints each warning once per command.

    A run fits every ranker on the whole data and again on every fold, so one data problem
    (e.g. two constant features) warns once per fit; Python's own once-per-location rule
    does not hold across the fits, whose ``catch_warnings`` blocks reset its registry.
    """
    seen: set[tuple[type, str]] = set()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = " ".join(str(message).split())
        if (category, text) not in seen:
            seen.add((category, text))
            print(f"warning: {message}", file=sys.stderr)

    return show


def _error_text(exc: BaseException) -> str:
    """An error as ``error: ...``: one line, but a config's several problems one per line."""
    if isinstance(exc, ConfigError) and len(exc.problems) > 1:
        return f"error: {exc}"
    text = exc.problems[0] if isinstance(exc, ConfigError) else str(exc)
    return "error: " + (" ".join(text.split()) or type(exc).__name__)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``moweights`` console script; returns the exit code."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error (argparse says why)
        code = int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_USAGE
        return _flush(code)
    if args.quiet and args.verbose:  # one before the command, the other after it
        print("error: -q and -v exclude each other", file=sys.stderr)
        return EXIT_USAGE
    verbosity = 0 if args.quiet else (2 if args.verbose else 1)
    _setup_logging(verbosity)
    with warnings.catch_warnings(), _sigterm_interrupts():
        if verbosity == 0:
            warnings.simplefilter("ignore")
        else:
            warnings.showwarning = _warning_printer()
        try:
            return _flush(_COMMANDS[args.command](args, verbosity))
        except BrokenPipeError:
            return _pipe_closed()
        except _INPUT_ERRORS as exc:
            print(_error_text(exc), file=sys.stderr)
            return EXIT_USAGE
        except MoweightsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_FAILED
        except KeyboardInterrupt as exc:
            print(f"\ninterrupted ({_interruption(exc)})", file=sys.stderr)
            return _interrupted_code(exc)
        except MemoryError as exc:  # not ours (those are MoweightsErrors): still one line
            reason = " ".join(str(exc).split()) or "no reason given"
            print(f"error: out of memory: {reason}", file=sys.stderr)
            return EXIT_FAILED
        except OSError as exc:  # the file system refused: disk full, a file deleted meanwhile
            where = f" ({exc.filename})" if exc.filename else ""
            print(f"error: {exc.strerror or exc}{where}", file=sys.stderr)
            return EXIT_FAILED
        except Exception as exc:  # a defect of ours: still one line, the traceback on -v
            if verbosity >= 2:
                traceback.print_exc()
            print(
                f"error: unexpected {type(exc).__name__}: {' '.join(str(exc).split())} "
                "(run with -v for the traceback, and please report it)",
                file=sys.stderr,
            )
            return EXIT_FAILED


@contextlib.contextmanager
def _sigterm_interrupts():
    """SIGTERM raises :class:`~moweights.errors.Terminated` (a KeyboardInterrupt) while a
    command runs: a run ends as on Ctrl-C -- its folder finished as partial, its lock
    released -- instead of being killed mid-write (the main thread only; the previous
    handler comes back afterwards)."""
    import signal
    import threading

    from moweights.errors import Terminated

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interruption(exc: BaseException) -> str:
    from moweights.output.files import interruption

    return interruption(exc)


def _interrupted_code(exc: BaseException) -> int:
    return EXIT_TERMINATED if getattr(exc, "signal_name", None) == "SIGTERM" else EXIT_INTERRUPTED


def _flush(code: int) -> int:
    """Flush stdout inside main, so that a closed pipe is handled here, not at exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return _pipe_closed()
    return code


def _pipe_closed() -> int:
    """The reader of our output went away (``| head``): stop quietly.

    stdout is pointed at /dev/null so that the interpreter's last flush at exit does not
    fail again ("Exception ignored ... BrokenPipeError"), as Python's documentation of
    SIGPIPE recommends (library/signal.html, "Note on SIGPIPE").
    """
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return EXIT_PIPE


def _load(args, extra: Sequence[str] = ()):
    from moweights.config import load_config

    return load_config(args.config, overrides=[*args.set, *extra])


def _validate(args, verbosity: int) -> int:
    from moweights.pipeline.problems import data_problems, raise_blocking

    config = _load(args)
    # the data read as the run reads it (every data set of a study): all problems at once
    problems = data_problems(config)
    raise_blocking(config, problems)
    if verbosity:
        kind = "site run" if config.is_site_run else "study" if config.is_study else "run"
        print(
            f"{args.config}: OK ({kind} on {config.describe_data()}, {len(config.rankers)} rankers)"
        )
        for problem in problems:  # what does not stop the run
            print(f"note: {problem}")
    return EXIT_OK


def _run(args, verbosity: int) -> int:
    from moweights.output.folder import summary_text
    from moweights.pipeline import run

    extra = [f"run.verbose={verbosity}"]
    if args.output:
        extra.append(f"output.dir={json.dumps(str(args.output))}")
    if args.n_jobs is not None:
        extra.append(f"run.n_jobs={args.n_jobs}")
    config = _load(args, extra)
    out = config.output_dir
    try:
        result = run(config, cache=False if args.no_cache else None, force=args.force)
    except KeyboardInterrupt as exc:
        print(
            f"\ninterrupted ({_interruption(exc)}): partial results in {out}/ (manifest.json "
            "lists them)",
            file=sys.stderr,
        )
        return _interrupted_code(exc)
    except _INPUT_ERRORS:
        raise  # one line and exit code 2, from main
    except MoweightsError as exc:
        print(f"error: {exc}\n(what finished is in {out}/)", file=sys.stderr)
        return EXIT_FAILED
    if verbosity:
        print(summary_text(result.output_dir))
    lost = {**getattr(result, "failed", {}), **getattr(result, "skipped", {})}
    if lost:  # a study whose other data sets ran: say which did not, and exit 1
        n = len(config.datasets)
        what = "; ".join(f"{name} ({' '.join(why.split())})" for name, why in lost.items())
        print(
            f"error: {len(lost)} of {n} data sets failed: {what}; the study in {out}/ "
            f"compares the {len(result.runs)} that finished",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return EXIT_OK


def _rankers(args, verbosity: int) -> int:
    import pandas as pd

    from rankers import available, broken

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = available()
        failed = broken()
    if args.json:
        print(json.dumps({"rankers": table.to_dict(orient="records"), "broken": failed}, indent=2))
        return EXIT_OK
    if args.markdown:
        print(markdown_table(table), end="")
        return EXIT_OK
    with pd.option_context("display.max_colwidth", 70, "display.width", 200):
        print(table[["name", "target_kind", "requires_y", "summary"]].to_string(index=False))
    for name, reason in failed.items():
        print(f"(failed to load: {name}: {reason})", file=sys.stderr)
    return EXIT_OK


def markdown_table(table) -> str:
    """The built-in rankers of ``rankers.available()`` as a Markdown table (for the README)."""
    own = table[table["class"].str.startswith(("rankers.", "moweights."))]
    lines = ["| name | kind | needs y | what it does | reference |", "|---|---|---|---|---|"]
    for row in own.itertuples(index=False):
        cells = [f"`{row.name}`", row.target_kind, "yes" if row.requires_y else "no",
                 row.summary, row.reference]  # fmt: skip
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _init(args, verbosity: int) -> int:
    from moweights.config import load_config
    from moweights.config.export import example_config

    path = Path(args.path)
    _write(path, example_config(), force=args.force)
    load_config(path)  # what we write must be valid
    if verbosity:
        print(f"wrote {path}; run it with: moweights run {path}")
    return EXIT_OK


def _write(path: Path, text: str, *, force: bool) -> None:
    """Write a file the user named (``init``, ``schema -o``); what it cannot be is bad usage
    (exit 2): an existing file without ``force``, a symbolic link (never written through,
    not even with ``force``), a path whose folder does not exist (never made here)."""
    from moweights.output.files import atomic_write

    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise _UsageError(f"cannot write {path}: {parent} is a file, not a folder")
            break
    if path.is_symlink():
        raise _UsageError(
            f"cannot write {path}: it is a symbolic link (to {os.readlink(path)}), and "
            "moweights does not write through links: name the file itself, or delete the link"
        )
    if path.is_dir():
        raise _UsageError(f"cannot write {path}: it is a folder; name a file")
    if path.exists() and not force:
        raise _UsageError(f"{path} exists; pass --force to overwrite it")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise _UsageError(
            f"cannot write {path}: the folder {folder} does not exist; create it first "
            f"(mkdir -p {folder})"
        )
    try:
        atomic_write(path, text)
    except OSError as exc:
        raise _UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _report(args, verbosity: int) -> int:
    from moweights.output.files import check_results_tree
    from moweights.output.folder import summary_text
    from moweights.output.report import render
    from moweights.pipeline.lock import RunLock

    folder = Path(args.folder)
    if not os.path.lexists(folder / "summary.json"):
        raise _UsageError(f"{folder} is not a run folder (it has no summary.json)")
    try:
        with RunLock(folder):  # not while a run writes the folder
            check_results_tree(folder)  # no link, FIFO or huge file is read (exit 2)
            written = render(folder, plots=not args.no_plots)
    except MoweightsError:
        raise
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: cannot render {folder}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if verbosity:
        # the run's own summary only when asked (-v): its last line is the run's, not this
        text = summary_text(folder)
        print(text if verbosity >= 2 else text.splitlines()[0])
        print(f"rendered {len(written)} files in {folder}/ from its tables")
    return EXIT_OK


def _schema(args, verbosity: int) -> int:
    from moweights.config.export import json_schema, markdown, ranker_params_schemas

    if args.format == "markdown":
        text = markdown()
    else:
        text = json.dumps(json_schema(ranker_params_schemas()), indent=2, ensure_ascii=False)
        text += "\n"
    if args.output:
        _write(Path(args.output), text, force=args.force)
        if verbosity:
            print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _fetch(args, verbosity: int) -> int:
    from moweights.data import fetch

    try:
        if args.source == "skfeature":
            path = fetch.skfeature_path(args.name, data_home=args.data_home)
        else:
            path = fetch.pmlb_path(args.name, data_home=args.data_home)
    except InvalidParameterError as exc:  # an unknown name: bad usage (offline stays 1)
        raise _UsageError(str(exc)) from None
    print(path)
    return EXIT_OK


def _recommend(args, verbosity: int) -> int:
    from moweights.recommend import recommend_file

    try:
        found = recommend_file(
            args.data,
            target=args.target,
            guess_target=not args.no_target,
            top=args.top,
            atlas=args.atlas,
            transpose=args.transpose,
        )
    except (InvalidInputError, InvalidParameterError) as exc:  # the file or the options
        raise _UsageError(str(exc)) from None
    print(found.describe(args.data))
    for note in found.notes:
        print(f"note: {note}")
    for i, row in found.table.iterrows():
        print(f"{i + 1}. {row['ranker']}: {row['why']}")
    return EXIT_OK


_COMMANDS = {
    "fetch": _fetch,
    "recommend": _recommend,
    "run": _run,
    "validate": _validate,
    "rankers": _rankers,
    "init": _init,
    "report": _report,
    "schema": _schema,
}


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
