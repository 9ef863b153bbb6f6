"""One config run: data -> rankers -> aggregation -> evaluation -> report.

The output folder (each file atomically, see :mod:`moweights.output`) is written when the
data is ready, when the rankings are aggregated, at most every :data:`CHECKPOINT_SECONDS`
while the later steps run, and once when the run ends however it ends, so a run stopped by
Ctrl-C or SIGTERM leaves a valid, partial folder whose ``manifest.json`` and
``summary.json`` say so (each write rebuilds every table from the whole result: after
every sub-step it was a tenth of the default demo, issue 50). One run at a time writes into a
folder: a run holds the folder's lock (:mod:`moweights.pipeline.lock`) from start to end.
Finished rankers and evaluations are cached in ``<output>/.cache`` as data files
(:mod:`moweights.pipeline.cache`, never pickles) under a hash of the data, the ranker's
spec, the seed, the settings and the code: re-running an unchanged config resumes
instead of starting over.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

from joblib import parallel_config

from moweights.config import RunConfig
from moweights.errors import OutputFolderError
from moweights.output.files import claim_output_dir, make_output_dir
from moweights.output.folder import RunFolder
from moweights.pipeline.cache import StepCache
from moweights.pipeline.data import prepare_units
from moweights.pipeline.evaluate import evaluate
from moweights.pipeline.lock import RunLock
from moweights.pipeline.markers import markers
from moweights.pipeline.problems import PREPARED, drop_odd_sites, load_checked
from moweights.pipeline.progress import Progress
from moweights.pipeline.result import RunResult
from moweights.pipeline.stability import stability
from moweights.pipeline.steps import aggregate, rank
from rankers.validation import check_n_jobs

__all__ = ["CHECKPOINT_SECONDS", "run"]

#: the least time between two writes of the folder while the steps run; what a resumed run
#: needs is in the step cache as each step ends, whatever this is
CHECKPOINT_SECONDS = 30.0


@contextlib.contextmanager
def _backend(config: RunConfig) -> Iterator[int]:
    """The run's joblib context; yields the number of workers of its parallel steps.

    ``n_jobs`` goes through :func:`rankers.validation.check_n_jobs` (clipped to the CPUs
    available, -1 = all of them) and reaches one layer at a time: the main ranker fits
    (e.g. a forest's trees) or the evaluations' folds, never both at once. With the
    default "loky" the libraries keep their own hints (threads for many small tree fits,
    processes for folds): forcing a process pool on every call made genie3 on iris take
    a minute at ``-j 16`` instead of a second. With "dask" a loop of one job stays in the
    calling process (:func:`moweights.pipeline.dask_backend.one_job_here`) and the
    parallel steps reach the cluster in tasks of 0.1 s or more (issue 39: on the default
    demo 27 tasks, none under 50 ms, where one task a tree made 2,200;
    ``benchmarks/results/dask_run.md``).
    """
    from threadpoolctl import threadpool_limits

    run_ = config.run
    if run_.backend != "dask":
        forced = {} if run_.backend == "loky" else {"backend": run_.backend}
        with parallel_config(**forced), threadpool_limits(run_.threads):
            yield check_n_jobs(run_.n_jobs, what="[run].n_jobs")
        return
    from moweights.pipeline.cluster import connect
    from moweights.pipeline.dask_backend import one_job_here

    client = connect(run_.scheduler)  # checked first: silence or garbage is an error
    try:
        with parallel_config(backend=one_job_here(client)):
            yield check_n_jobs(-1 if run_.n_jobs is None else run_.n_jobs, what="[run].n_jobs")
    finally:
        client.close()


def run(
    config: RunConfig, output_dir=None, *, cache: bool | None = None, force: bool = False
) -> RunResult:
    """Execute one configured run and write its report folder.

    A study (several data sets, :attr:`RunConfig.is_study`) runs each data set into a
    sub-folder and compares the methods across them; it returns a
    :class:`~moweights.pipeline.study.StudyResult` (see :mod:`moweights.pipeline.study`),
    whose ``failed`` names the data sets that could not be ranked (the others ran).

    Parameters
    ----------
    config : RunConfig
        A validated configuration (see :func:`moweights.config.load_config`).
    output_dir : path, optional
        Overrides ``[output].dir``. It must be new, empty, or a folder moweights made
        (it holds our ``manifest.json``): a re-run replaces the earlier run's files.
    cache : bool, optional
        Overrides ``[output].cache``: reuse and keep finished steps' results.
    force : bool, default=False
        Write into a non-empty folder moweights did not make (files of the same names are
        replaced, others kept).

    Returns
    -------
    RunResult
        ``status`` is "complete"; a run stopped by Ctrl-C writes a partial folder and
        re-raises ``KeyboardInterrupt``, a failed one writes what it has and re-raises.

    Raises
    ------
    OutputFolderError
        The output folder is a file, lies under a file, is not writable, or is not
        empty and was not made by moweights (without ``force``).
    RunLockedError
        Another run is writing into the output folder; nothing was written.
    SchedulerError
        ``[run] scheduler`` does not answer as a Dask scheduler; nothing was written.
    ConfigError
        The data have problems the ``[data]`` options must handle (gaps, text or
        identifier columns, ...: :mod:`moweights.pipeline.problems`), all listed; no
        folder was made.
    """
    start = time.perf_counter()
    # the data read and checked first: bad data stops the run before it makes a folder
    # (a study's data sets are checked each in its own run, which fails alone)
    loaded = None if config.is_study else load_checked(config)
    out = make_output_dir(output_dir if output_dir is not None else config.output_dir)
    with RunLock(out):  # released at the end, also on failure and Ctrl-C
        # under the lock: a live run is named as such
        claim_output_dir(out, force=force, source=config.source)
        # one backend (one Dask client) for the run, or for every data set of a study
        with _quiet(config), _backend(config) as n_jobs:
            if not config.is_study:
                return _run_locked(config, out, cache, start, n_jobs, loaded)
            from moweights.pipeline.study import run_study

            def member(sub: RunConfig, folder: Path, cache: bool | None) -> RunResult:
                return _run_member(sub, folder, cache, n_jobs=n_jobs, force=force)

            return run_study(config, out, cache, start, member)


@contextlib.contextmanager
def _quiet(config: RunConfig) -> Iterator[None]:
    """No warnings at ``verbose = 0``."""
    with warnings.catch_warnings():
        if config.run.verbose == 0:
            warnings.simplefilter("ignore")
        yield


def _run_member(
    config: RunConfig, out: Path, cache: bool | None, *, n_jobs: int, force: bool
) -> RunResult:
    """One data set of a study: a run folder, lock and cache of its own, in the study's
    backend (the Dask client is not made again for every data set)."""
    start = time.perf_counter()
    if out.is_symlink():
        raise OutputFolderError(
            f"the data set's folder {out} is a symbolic link; a study writes its data sets "
            "into folders of its own: delete the link"
        )
    out = make_output_dir(out)
    with RunLock(out):
        claim_output_dir(out, force=force, source=config.source)
        return _run_locked(config, out, cache, start, n_jobs)


def _run_locked(
    config: RunConfig,
    out: Path,
    cache: bool | None,
    start: float,
    n_jobs: int,
    loaded: tuple[dict, list[str]] | None = None,
) -> RunResult:
    result = RunResult(config=config, output_dir=out)
    folder = RunFolder(out, config)
    use_cache = config.output.cache if cache is None else cache
    cacher = StepCache(
        out / ".cache" if use_cache else None,
        on_hit=result.cached.append,
        on_miss=result.computed.append,
        on_repeat=result.repeated.append,
    )
    progress = Progress(config.run.verbose)

    written = [-float("inf")]  # when the folder was last written (monotonic seconds)

    def save(force: bool = False) -> None:
        # the folder's state, not the results: a write only rebuilds its tables sooner
        result.seconds = time.perf_counter() - start
        now = time.monotonic()
        if force or now - written[0] >= CHECKPOINT_SECONDS:
            folder.write(result)
            written[0] = now

    interrupted = "interrupted (Ctrl-C): the files listed are complete, the rest missing"
    with folder.finishing(result, start, interrupted):
        units, checked = loaded if loaded is not None else load_checked(config)
        prepared, steps = prepare_units(config, units)
        # one-hot codes or dropped columns may differ between sites that were read alike
        result.units, odd = drop_odd_sites(config, prepared, stage=PREPARED)
        result.notes.extend([*checked, *steps, *odd])
        save(force=True)
        rank(config, result, cacher, progress, save, n_jobs)
        aggregate(config, result)
        save(force=True)
        markers(config, result, cacher, progress, save)
        stability(config, result, cacher, progress, save, n_jobs)
        if config.evaluation.enabled:
            evaluate(config, result, cacher, progress, save, n_jobs)
    return result
