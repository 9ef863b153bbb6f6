"""Writes the API reference pages of the documentation from the code itself.

Every list here is derived from the implementation: the documented names are the
``__all__`` of the public modules below, the ranker pages are the rows of
``rankers.available()`` (the entry points), and each page's capabilities come from
``rankers.ranker_tags`` of a default instance; the list of what the registry holds that
docs/design.md includes is written from the same rows (:func:`registry_markdown`). Only
public paths are written (a name's defining submodule never appears), so moving a module
inside a package does not move a page. ``resolve_moved`` links a docstring's reference to a
defining module (``aggregation.ranking.Ranking``) to the public page of the same object.
"""

from __future__ import annotations

import importlib
import inspect
import re
import shutil
from pathlib import Path

#: the public modules of the reference, in the order a name first gets its own page
#: (a name re-exported by a later module links to that page)
MODULES = {
    "rankers": "The ranker contract, the registry and the errors",
    "rankers.supervised": "Supervised rankers",
    "rankers.unsupervised": "Unsupervised rankers",
    "aggregation.federated": "Per-site (federated) ranking",
    "aggregation.evaluation": "Evaluating rankings: curves, clustering, statistics",
    "aggregation": "Rankings and their combination",
    "moweights": "Config runs",
    "moweights.federated": "Federated ranking of data files, and the Flower apps",
    "moweights.data.readers": "Reading data files: csv, tsv, parquet, .mat, .h5ad",
    "moweights.data": "Data sets: loading, generating, fetching, preparing",
    "moweights.weighting": "NSGA-II feature weighting",
    "moweights.scverse": "Single-cell data: AnnData in and out, marker features per group",
}

#: the kNN-graph rankers' many-samples path (rankers.neighbors.choose_components)
_APPROX = (
    "; above 10,000 samples, by default, the neighbours among 50 principal components: "
    "O(n d min(n, d)) + O(50 n²)"
)

#: time (and the memory it needs) in terms of n samples, d features; a class attribute
#: ``complexity`` on a ranker takes precedence. A built-in ranker missing from both fails
#: the build, so a new ranker cannot ship without it.
COMPLEXITY = {
    "agnos_s": "O(epochs · n · d · h) for an autoencoder with h hidden units; memory O(n d + d h)",
    "anova_f": "O(n d)",
    "chi2": "O(n d log n) (equal-frequency bins from ranks)",
    "cmim": "O(k d n) for k selected features (one conditional MI per pair); memory O(n d)",
    "compactness": "O(n² d) for the kNN graph, then O(n k d); memory O(n k)" + _APPROX,
    "distance_rank": "O(m² d) over the m(m−1)/2 sample pairs (m ≤ n, subsample to bound it)",
    "estimator_importance": "one fit of the wrapped model, plus n_repeats · d scorings "
    "for permutation importance",
    "fisher_score": "O(n d)",
    "frane": "O(n d²) for the feature dissimilarities, then per threshold one sparse "
    "PageRank on d nodes (100 thresholds); memory O(d²)",
    "genie3": "O(T · n log n · d) for T multi-output trees predicting all d features",
    "info_gain": "O(n d log n) (equal-frequency bins from ranks)",
    "jmi": "O(k d n) for k selected features; memory O(n d)",
    "laplacian": "O(n² d) for the kNN graph, then O(n k d); memory O(n k) (sparse graph)"
    + _APPROX,
    "mcfs": "O(n² d) kNN graph + sparse eigenproblem + one LARS per eigenvector, "
    "O(c n d min(n, d)) for c clusters" + _APPROX,
    "mo_weighting": "O(G · P · n d) for G generations of a population of P weight vectors "
    "with C1-C3 (one matrix product per generation); the default NCA reads the s(s−1)/2 "
    "pairs of at most s = 200 samples: O(G · P · s² d); memory O(s² d)",
    "mrmr": "O(k d n) for k selected features; memory O(n d)",
    "multisurf": "O(n² d) (all sample distances, in blocks)",
    "ndfs": "O(n² d) for the kNN graph, then O(iterations · (d³ + n d c)) for c clusters "
    "(a d×d Cholesky per iteration)" + _APPROX,
    "random_forest": "O(T · n log n · √d) for T trees (+ d permutations for permutation "
    "importance)",
    "relieff": "O(n² d) (every sample is a reference, distances in blocks)",
    "rf_score": "O(T · n log n · d) for the trees, plus the out-of-bag permutations",
    "rrelieff": "O(n² d) (every sample is a reference, distances in blocks)",
    "spec": "O(n² d) for the full kernel, plus its eigendecomposition O(n³); memory O(n²)",
    "stacked": "(cv + 1) fits of each pool member (3 inner folds: 4 fits), plus a kNN "
    "curve over k = 1..64 per member and inner fold; the cost of its pool's members x 4",
    "svm_rfe": "O(n² d) for the linear kernel, plus one SVM solve (≈ O(n²)–O(n³)) per "
    "elimination step; d / step steps",
    "t_test": "O(n d)",
    "urelief": "O(m n d) for m reference samples",
    "variance": "O(n d)",
}

_YES_NO = {True: "yes", False: "no"}


def _public_names(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        raise RuntimeError(f"{module.__name__} has no __all__: its public names are undefined")
    return [n for n in names if not inspect.ismodule(getattr(module, n))]


def _title(text: str, char: str = "=") -> str:
    return f"{text}\n{char * max(len(text), 3)}\n"


def _public_path(cls) -> str:
    """The shortest dotted path of a package that exports ``cls`` (its defining module's
    ancestors are tried from the top)."""
    parts = cls.__module__.split(".")
    for i in range(1, len(parts) + 1):
        mod = importlib.import_module(".".join(parts[:i]))
        if getattr(mod, cls.__name__, None) is cls:
            return f"{mod.__name__}.{cls.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def _ranker_rows():
    import rankers

    table = rankers.available()
    rows = []
    for row in table.itertuples(index=False):
        cls = rankers.get_class(row.name)
        try:
            tags = rankers.ranker_tags(cls())
        except Exception:  # a class that needs constructor arguments: its attributes
            tags = None
        builtin = cls.__module__.split(".")[0] in ("rankers", "moweights")
        complexity = getattr(cls, "complexity", None) or COMPLEXITY.get(row.name)
        if complexity is None and builtin:
            raise RuntimeError(
                f"ranker {row.name!r} has no complexity: add it to COMPLEXITY in docs/_api.py "
                "(or a class attribute 'complexity')"
            )
        rows.append((row, cls, tags, complexity or "not stated"))
    return rows


def _ranker_page(row, cls, tags, complexity) -> str:
    path = _public_path(cls)
    module, name = path.rsplit(".", 1)

    def tag(field, default=None):
        return getattr(tags, field) if tags is not None else getattr(cls, field, default)

    sparse = "kept sparse" if tag("accepts_sparse", False) else "densified before scoring"
    table = [
        ("Registry name", f'``{row.name}`` — ``rankers.get("{row.name}", **params)``'),
        ("Class", f":class:`{path}`"),
        ("Paper", row.reference or "—"),
        ("Needs y", _YES_NO[bool(tag("requires_y", False))]),
        ("Target kind", f"``{tag('target_kind', 'unsupervised')}``"),
        ("Sparse input", sparse),
        ("Complexity (n samples, d features)", complexity),
        ("Progress bar (``verbose``)", _YES_NO[bool(tag("progress", False))]),
        ("Deterministic", _YES_NO[bool(tag("deterministic", True))]),
        ("Scale invariant", _YES_NO[bool(tag("scale_invariant", False))]),
        ("Parameters (defaults)", f"``{row.params}``" if row.params else "—"),
    ]
    lines = [
        f".. _ranker-{row.name}:\n",
        _title(f"{row.name} — {name}"),
        f".. currentmodule:: {module}\n",
        f"{row.summary}\n",
        ".. list-table::",
        "   :widths: 30 70",
        "   :stub-columns: 1\n",
    ]
    for key, value in table:
        lines += [f"   * - {key}", f"     - {value}"]
    lines += [
        "",
        f".. autoclass:: {name}",
        "   :members:",
        "   :exclude-members: set_score_request, set_fit_request, set_transform_request",
        "",
    ]
    return "\n".join(lines)


def _rankers_index(rows) -> str:
    lines = [
        _title("All rankers"),
        "Every ranker registered through the entry-point group ``moweights.rankers`` "
        "(the table ``rankers.available()`` returns), one page each with its paper, "
        "parameters, capabilities (from ``rankers.ranker_tags``) and cost.\n",
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 15 10 15 60\n",
        "   * - name",
        "     - needs y",
        "     - target",
        "     - what it does",
    ]
    for row, _cls, _tags, _complexity in rows:
        lines += [
            f"   * - :ref:`{row.name} <ranker-{row.name}>`",
            f"     - {_YES_NO[bool(row.requires_y)]}",
            f"     - ``{row.target_kind}``",
            f"     - {row.summary}",
        ]
    lines += ["", ".. toctree::", "   :hidden:", ""]
    lines += [f"   {row.name}" for row, *_ in rows]
    return "\n".join(lines) + "\n"


def registry_markdown(rows) -> str:
    """What the registry holds, by the package that exports each ranker, as the Markdown
    that docs/design.md includes (``docs/_registry.md``, written at build time)."""
    groups: dict[str, list[str]] = {}
    for row, cls, _tags, _complexity in rows:
        package = _public_path(cls).rsplit(".", 1)[0]
        groups.setdefault(package, []).append(row.name)
    counts = ", ".join(f"{len(names)} in `{package}`" for package, names in sorted(groups.items()))
    lines = [
        "<!-- written by docs/_api.py from rankers.available() at build time: do not edit -->",
        "",
        f"The registry holds {len(rows)} rankers: {counts}.",
        "",
        "| package | rankers (registry names) |",
        "| --- | --- |",
    ]
    for package, names in sorted(groups.items()):
        links = ", ".join(f"{{ref}}`{n} <ranker-{n}>`" for n in sorted(names))
        lines.append(f"| `{package}` ({len(names)}) | {links} |")
    return "\n".join(lines) + "\n"


def _module_page(modname: str, heading: str, own: list[str], linked: list[tuple[str, str]]):
    lines = [
        _title(f"``{modname}`` — {heading}"),
        f".. automodule:: {modname}",
        "   :no-members:\n",
        f".. currentmodule:: {modname}\n",
    ]
    if own:
        lines += [".. autosummary::", "   :toctree: generated/", "   :nosignatures:", ""]
        lines += [f"   {n}" for n in own]
        lines.append("")
    if linked:
        lines += [
            _title("Documented on their own pages", "-"),
            ".. list-table::",
            "   :widths: 35 65\n",
        ]
        for n, target in linked:
            lines += [f"   * - :py:obj:`{n} <{target}>`", f"     - ``{target}``"]
        lines.append("")
    return "\n".join(lines)


#: object id -> the public name of its page (filled by ``write_pages``)
DOCUMENTED: dict[int, str] = {}


def write_pages(out: Path, registry: Path | None = None) -> None:
    """Write ``out``/index.rst, one page per public module and one per ranker, and, when
    ``registry`` is given, the list of what the registry holds there (Markdown)."""
    if out.exists():
        shutil.rmtree(out)
    (out / "rankers").mkdir(parents=True)
    DOCUMENTED.clear()

    rows = _ranker_rows()
    for row, cls, tags, complexity in rows:
        DOCUMENTED[id(cls)] = _public_path(cls)
        (out / "rankers" / f"{row.name}.rst").write_text(_ranker_page(row, cls, tags, complexity))
    (out / "rankers" / "index.rst").write_text(_rankers_index(rows))
    if registry is not None:
        registry.write_text(registry_markdown(rows), encoding="utf-8")

    for modname, heading in MODULES.items():
        module = importlib.import_module(modname)
        own, linked = [], []
        for n in _public_names(module):
            obj = getattr(module, n)
            key = id(obj)
            is_value = not (inspect.isclass(obj) or inspect.isroutine(obj))
            if not is_value and key in DOCUMENTED:
                linked.append((n, DOCUMENTED[key]))
            else:
                own.append(n)
                if not is_value:
                    DOCUMENTED[key] = f"{modname}.{n}"
        (out / f"{modname}.rst").write_text(_module_page(modname, heading, own, linked))

    lines = [
        _title("API reference"),
        "The public names, each reached through its package (``rankers``, "
        "``aggregation``, ``moweights``) — never through the module that defines it.\n",
        ".. toctree::",
        "   :maxdepth: 1\n",
        "   rankers/index",
    ]
    lines += [f"   {m}" for m in MODULES]
    (out / "index.rst").write_text("\n".join(lines) + "\n")


def resolve_moved(app, env, node, contnode):
    """Resolve a reference Sphinx did not find, or let it fail the build.

    A docstring may name an object by its defining module (``aggregation.ranking.Ranking``)
    or relative to it (``fit``, ``pagerank``): when the object exists and has a page at
    its public path, the reference links there; when it exists but is not public (a
    private helper, a module inside a package), it is shown as code without a link. A
    target that does not exist returns None, so Sphinx warns and ``-W`` fails the build.
    """
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "").lstrip("~.")
    for cand in _candidates(node, target):
        obj = _import(cand)
        if obj is _MISSING:
            continue
        public = _public_target(obj, cand)
        if public is not None and public != cand:
            role = "mod" if inspect.ismodule(obj) else "obj"
            found = env.domains["py"].resolve_xref(
                env, node["refdoc"], app.builder, role, public, node, contnode
            )
            if found is not None:
                return found
        return contnode  # exists, but has no page of its own
    return None


def _candidates(node, target: str) -> list[str]:
    """Dotted names ``target`` may stand for: as written, within the page's class and
    module, and within the module whose docstring holds the reference."""
    out = [target]
    modname, clsname = node.get("py:module"), node.get("py:class")
    if modname:
        if clsname:
            out.append(f"{modname}.{clsname}.{target}")
        out.append(f"{modname}.{target}")
    source = str(node.source or "")
    if "docstring of " in source:
        owner = source.split("docstring of ", 1)[1].split(":", 1)[0].split(".")
        for i in range(len(owner), 0, -1):
            out.append(".".join([*owner[:i], target]))
    return out


def _public_target(obj, name: str) -> str | None:
    if inspect.ismodule(obj):
        parts = obj.__name__.split(".")
        while parts and ".".join(parts) not in MODULES:
            parts.pop()
        return ".".join(parts) or None
    public = DOCUMENTED.get(id(obj))
    if public is not None:
        return public
    # a method or attribute of a documented class: the same member at the public path
    owner, _, attr = name.rpartition(".")
    owner_obj = _import(owner) if owner else _MISSING
    if owner_obj is not _MISSING and id(owner_obj) in DOCUMENTED:
        return f"{DOCUMENTED[id(owner_obj)]}.{attr}"
    return None


_MISSING = object()
_FIELD = object()

# "name : type" lines of numpydoc sections, and a word ending in "_" within the type
_TYPE_LINE = re.compile(r"^(\s*\*{0,2}\w+(?:, \w+)* : )(.*)$")
_TRAILING_UNDERSCORE = re.compile(r"\b([A-Za-z]\w*?)_(?=[\s,)\]}]|$)")


def escape_type_underscores(app, what, name, obj, options, lines):
    """``of shape (n_features_in_,)`` in a type is text, not a reST reference to a target
    ``n_features_in``: escape the underscore before numpydoc renders the type."""
    for i, line in enumerate(lines):
        m = _TYPE_LINE.match(line)
        if m and "`" not in m.group(2):
            lines[i] = m.group(1) + _TRAILING_UNDERSCORE.sub(r"\1\\_", m.group(2))


def _import(dotted: str):
    """The object at ``dotted`` (a module and attributes), or ``_MISSING``."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:
            continue
        for attr in parts[i:]:
            if hasattr(obj, attr):
                obj = getattr(obj, attr)
            elif attr in getattr(obj, "__annotations__", {}):  # a field without a default
                obj = _FIELD
            else:
                return _MISSING
        return obj
    return _MISSING
