"""The config file's schema, written once as data: its sections, keys, types and defaults.

Everything else derives from :data:`SCHEMA`: the type check of a config
(:mod:`moweights.config.check`) and the JSON Schema, the Markdown reference and the
commented example (:mod:`moweights.config.export`), so they cannot drift apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from aggregation.combine import METHODS
from aggregation.compare import MEASURES
from aggregation.evaluation.classification import CLASS_METRICS, CLASS_MODELS
from aggregation.evaluation.error_curves import WEIGHTINGS
from aggregation.evaluation.topk import METRICS
from moweights.data import CATEGORICAL, DATASETS, MISSING, SCALES, TRANSFORMS
from moweights.scverse.markers import DIRECTIONS, TESTS

__all__ = [
    "AGGREGATIONS",
    "AUTO",
    "BACKENDS",
    "BOOLEAN",
    "SCHEMA",
    "STRING",
    "SWITCH",
    "Array",
    "Integer",
    "K",
    "Key",
    "Number",
    "Section",
    "String",
    "Table",
    "Type",
]

#: the combination methods a config may ask for: aggregation's own table of them
AGGREGATIONS = tuple(METHODS)
BACKENDS = ("loky", "threading", "multiprocessing", "dask")
AUTO = "auto"


@dataclass(frozen=True)
class Type:
    """One kind of value a key accepts (a key may accept several)."""

    kind: str  # string | integer | number | boolean | array | table
    choices: tuple = ()
    minimum: float | None = None
    maximum: float | None = None
    exclude: tuple = ()
    items: Type | None = None
    min_items: int | None = None
    max_items: int | None = None
    values: Type | None = None  # a table with free keys: the type of its values

    def accepts(self, value: Any) -> bool:
        kind = self.kind
        if kind == "boolean":
            return isinstance(value, bool)
        if isinstance(value, bool):
            return False
        if kind == "string":
            return isinstance(value, str) and (not self.choices or value in self.choices)
        if kind in ("integer", "number"):
            numeric = int if kind == "integer" else (int, float)
            if not isinstance(value, numeric) or not math.isfinite(value):
                return False
            return (
                (self.minimum is None or value >= self.minimum)
                and (self.maximum is None or value <= self.maximum)
                and value not in self.exclude
            )
        if kind == "array":
            return (
                isinstance(value, list)
                and (self.min_items is None or len(value) >= self.min_items)
                and (self.max_items is None or len(value) <= self.max_items)
                and (self.items is None or all(self.items.accepts(v) for v in value))
            )
        if kind == "table":
            return isinstance(value, dict) and (
                self.values is None or all(self.values.accepts(v) for v in value.values())
            )
        raise ValueError(f"unknown kind {kind!r}")  # a defect of SCHEMA itself

    def describe(self) -> str:
        if self.choices:
            if len(self.choices) == 1:
                return repr(self.choices[0])
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind in ("integer", "number"):
            text = "an integer" if self.kind == "integer" else "a number"
            bounds = []
            if self.minimum is not None:
                bounds.append(f">= {self.minimum:g}")
            if self.maximum is not None:
                bounds.append(f"<= {self.maximum:g}")
            bounds += [f"other than {v!r}" for v in self.exclude]
            return f"{text} {' and '.join(bounds)}".strip()
        if self.kind == "array":
            items = self.items
            if items is None:
                of = ""
            elif items.choices:
                of = " of values among " + ", ".join(repr(c) for c in items.choices)
            else:
                of = " of " + _plural(items.describe())
            if self.min_items is not None and self.min_items == self.max_items:
                return f"a list of {self.min_items}{of.removeprefix(' of')}"
            return f"a {'non-empty ' if self.min_items else ''}list{of}"
        if self.kind == "table":
            of = f" whose values are {_plural(self.values.describe())}" if self.values else ""
            return "a table" + of
        return {"string": "a string", "boolean": "true or false"}[self.kind]

    def json(self) -> dict:
        if self.kind == "string":
            return {"enum": list(self.choices)} if self.choices else {"type": "string"}
        out: dict[str, Any] = {"type": "object" if self.kind == "table" else self.kind}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.exclude:
            out["not"] = {"enum": list(self.exclude)}
        if self.items is not None:
            out["items"] = self.items.json()
        if self.min_items is not None:
            out["minItems"] = self.min_items
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        if self.values is not None:
            out["additionalProperties"] = self.values.json()
        return out


def _plural(text: str) -> str:
    for one, many in (
        ("an integer", "integers"),
        ("a number", "numbers"),
        ("a string", "strings"),
        ("a table", "tables"),
        ("a list", "lists"),
        ("true or false", "booleans"),
    ):
        if text.startswith(one):
            return many + text[len(one) :]
    return text


def String(*choices: str) -> Type:
    return Type("string", choices=tuple(choices))


def Integer(minimum=None, maximum=None, exclude=()) -> Type:
    return Type("integer", minimum=minimum, maximum=maximum, exclude=tuple(exclude))


def Number(minimum=None, maximum=None) -> Type:
    return Type("number", minimum=minimum, maximum=maximum)


BOOLEAN = Type("boolean")
STRING = String()
SWITCH = (BOOLEAN, String(AUTO))  # true, false or "auto"


def Array(items: Type | None = None, min_items=None, max_items=None) -> Type:
    return Type("array", items=items, min_items=min_items, max_items=max_items)


def Table(values: Type | None = None) -> Type:
    return Type("table", values=values)


_NO_DEFAULT = object()


@dataclass(frozen=True)
class Key:
    """A key of a section: the types it accepts, what it means, its default."""

    name: str
    types: tuple[Type, ...]
    doc: str
    default: Any = _NO_DEFAULT
    required: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    def describe(self) -> str:
        text = " or ".join(t.describe() for t in self.types)
        return text.replace("true or false or", "true, false or")


@dataclass(frozen=True)
class Section:
    """A table (``[name]``) or an array of tables (``[[name]]``) of the config."""

    name: str
    doc: str
    keys: tuple[Key, ...]
    array: bool = False
    required: bool = False
    sections: tuple[Section, ...] = ()
    exclusive: tuple[str, ...] = ()  # at most one of these keys
    many: bool = False  # a table, or an array of tables ([data]: one data set or a study)
    one_of: tuple[str, ...] = ()  # exactly one of these keys (array items)

    def key(self, name: str) -> Key:
        return next(k for k in self.keys if k.name == name)


def K(name, types, doc, default=_NO_DEFAULT, required=False) -> Key:
    types = types if isinstance(types, tuple) else (types,)
    return Key(name, types, doc, default, required)


# fmt: off
_DATA_SOURCE = (
    K("builtin", String(*DATASETS), "a data set shipped with or generated by the package: "
      "scikit-learn's bundled ones, weighting_benchmark (the NSGA-II paper's synthetic data), "
      "error_curve_single|pair|combined (the error-curve paper's)"),
    K("path", STRING, "a data file (.csv, .tsv, optionally .gz; .parquet; .mat with X and Y; "
      ".h5ad, AnnData, with moweights[h5ad]), relative to the config file"),
    K("target", STRING, "the target column of a table file (of obs in an .h5ad file); it is "
      "removed from the features (.mat files and built-ins bring their own)"),
)
_WHEN_CLASSES = "true, false or 'auto' (when the target is a class label)"
#: what a site run does with sites whose feature columns differ (rank_sites' on_mismatch)
ON_MISMATCH = ("raise", "drop")
#: how the error curves fit the rankings they judge
PROTOCOLS = ("nested", "whole_data")
#: the scores the statistics may test
STATISTICS_SCORES = (AUTO, "classification", "topk")

SCHEMA = Section("", "moweights run configuration: rank features with several rankers, "
                 "aggregate the rankings and evaluate them.", (), sections=(
    Section("data", "Where the data comes from: one data set, or one file split into sites "
            "by a column. A study over several data sets: one [[data]] block per data set, or "
            "paths = GLOB; every ranker runs on every data set and the report compares them "
            "across the data sets (Friedman, Nemenyi, CD diagram).", (
        *_DATA_SOURCE,
        K("paths", STRING, "a glob of data files (e.g. 'data/*.csv'), relative to the config "
          "file: one data set per file, named by the file's stem (a study when it matches "
          "several); the other keys apply to every file"),
        K("name", STRING, "the data set's name in a study's outputs (default: the built-in's "
          "name or the file's stem); unique"),
        K("site_column", STRING, "a column naming each row's site: every site is ranked on its "
          "own and only rankings are combined (a federated run)"),
        K("drop", Array(STRING), "columns to leave out (identifiers, dates)", []),
        K("on_mismatch", String(*ON_MISMATCH), "a site run's sites whose feature columns "
          "differ (compared after drop, without the target): 'raise' stops before anything "
          "is fitted, naming each site's missing and extra columns; 'drop' leaves out of the "
          "run the sites whose columns differ from the set more than half of the sites hold, "
          "naming them in the run's notes (rank_sites' on_mismatch)", "raise"),
        K("n_samples", Integer(4), "rows to use: the size of a generated data set, or a seeded "
          "random subsample of a larger one"),
        K("transpose", BOOLEAN, "the file holds one row per feature (genes as rows), its first "
          "column naming them and one column per sample; target names a row", False),
        K("missing", String(*MISSING), "what to do with missing values: 'error' stops with the "
          "columns named; drop_rows / drop_columns / impute_median / impute_mean / "
          "impute_most_frequent (scikit-learn's SimpleImputer; rows with a missing target "
          "are dropped)", "error"),
        K("categorical", String(*CATEGORICAL), "what to do with text columns: 'error' stops "
          "with the columns named; onehot (one 0/1 column per value), ordinal (sorted value "
          "codes) or drop", "error"),
        K("transform", String(*TRANSFORMS), "a fixed transform of every numeric value before "
          "ranking and evaluation: log1p = log(1 + x), log2p = log2(1 + x) (raw counts; "
          "refused for negative values); it learns nothing, so it is applied once", "none"),
        K("scale", String(*SCALES), "scale every feature before each ranker fits: standard "
          "= (x - mean) / sd, robust = (x - median) / IQR; learnt from the rows the ranker "
          "is fitted on (each evaluation fold's training rows, all rows for the reported "
          "ranking), so held-out rows never shape it. 'none' ranks raw units: rankers whose "
          "scores follow a feature's units (variance, Laplacian, ...) get a note", "none"),
    ), exclusive=("builtin", "path", "paths"), many=True),
    Section("sites", "Data sites of a federated run, one [[sites]] block each; every site is "
            "ranked on its own and only the rankings are combined. Instead of [data].", (
        K("name", STRING, "the site's name, unique", required=True),
        *_DATA_SOURCE,
        K("rows", Array(Integer(0), 2, 2), "[start, stop): the rows of the data set this site "
          "holds (to split one data set into sites)"),
    ), array=True, one_of=("builtin", "path")),
    Section("rankers", "The rankers to run, one [[rankers]] block each.", (
        K("name", STRING, "a registered ranker (see `moweights rankers`; plugins included)",
          required=True),
        K("label", STRING, "the name in outputs (default: name); unique"),
        K("params", Table(), "the ranker's parameters, e.g. { n_neighbors = 5 }; the run's "
          "random_state reaches rankers that take one", {}),
    ), array=True, required=True),
    Section("aggregation", "How the rankings are combined and compared.", (
        K("methods", Array(String(*AGGREGATIONS)), "combinations of the rankers' rankings "
          "('generic' is the ordered partition they all agree on)", ["mean_rank", "generic"]),
        K("members", Array(String(), min_items=1), "labels of the rankers the aggregates "
          "combine (default: every ranker); leave out a ranker that already combines others, "
          "such as the ensemble 'stacked', or a baseline you only compare against. The "
          "similarity measures and the evaluation still cover every ranker"),
        K("weights", Table(Number(0)), "weights of weighted_mean_rank: ranker label -> weight "
          "(site runs: site name -> weight; default the site sizes)"),
        K("tolerance", Number(0, 0.49), "share of the rankings allowed to disagree about each "
          "feature's position in the 'generic' ranking, on each side (0: the paper's strict "
          "definition, every ranking must agree; more tolerance never gives fewer blocks)", 0.0),
        K("compare", Array(String(*MEASURES)), "similarity measures between the rankers' "
          "rankings", ["spearman", "s_measure"]),
        K("compare_k", Integer(1), "top-k of the set measures (jaccard, kuncheva) and depth of "
          "rbo", 10),
        K("bootstrap", Integer(0, exclude=(1,)), "bootstrap resamples for each feature's rank "
          "interval: every ranker refit on each resample (the same rows for all), the "
          "aggregates combined resample by resample; the intervals go into features.csv "
          "(<name>.rank_low, <name>.rank_high). 0: none (each resample costs one fit per "
          "ranker)", 0),
        K("confidence", Number(0.5, 1), "coverage of the bootstrap rank intervals (0.9: the "
          "5th to the 95th percentile of a feature's rank)", 0.9),
    )),
    Section("evaluation", "How good the rankings are, on held-out samples: every ranking "
            "(ranker, aggregate, NSGA-II weighting) is refit on the training part of each "
            "cross-validation fold and judged on its test part only (nested, no selection "
            "bias). Statistics compare the rankers over blocks: the sites of a site run, else "
            "the folds.", (
        K("enabled", BOOLEAN, "false skips every evaluation", True),
        K("cv", Integer(2), "cross-validation folds of every evaluation (stratified with a "
          "class target)", 10),
    ), sections=(
        Section("classification", "Cross-validated class prediction from each ranking's top "
                "k features (the headline with a class target): a model trained on the fold's "
                "top-k features predicts the held-out classes, against random rankings "
                "(higher is better).", (
            K("enabled", SWITCH, _WHEN_CLASSES, AUTO),
            K("model", String(*CLASS_MODELS), "knn (a majority vote of n_neighbors on "
              "standardised features), svm (the error-curve paper's quadratic-kernel SVM) or "
              "logistic (L2 logistic regression)", "knn"),
            K("n_neighbors", Integer(1), "neighbours of the knn model", 5),
            K("metric", String(*CLASS_METRICS), "balanced_accuracy (the mean recall of the "
              "classes: predicting the majority class scores 1 / n_classes) or accuracy",
              "balanced_accuracy"),
            K("ks", Array(Integer(1), 1), "numbers of top features (default 1, 2, 4, ..., n)"),
            K("at_k", Integer(1), "the k at which rankers are compared and tested (the largest "
              "grid point <= at_k and < n)", 16),
            K("n_random", Integer(1), "random rankings per fold of the baseline", 10),
        )),
        Section("topk", "Top-k kNN curves: a kNN regressor on each ranking's top k features "
                "predicts all features (the unsupervised headline; lower is better).", (
            K("enabled", BOOLEAN, "compute the curves", True),
            K("metric", String(*METRICS), "mse (1NN), rmse or rmae (5NN)", "mse"),
            K("n_neighbors", Integer(1), "neighbours (default by metric)"),
            K("ks", Array(Integer(1), 1), "numbers of top features (default 1, 2, 4, ..., n)"),
            K("at_k", Integer(1), "the k at which rankers are compared and tested (the largest "
              "grid point <= at_k and < n)", 16),
            K("random_baseline", BOOLEAN, "also score random rankings", True),
            K("n_random", Integer(1), "random rankings per fold", 10),
        )),
        Section("error_curves", "FFA/RFA error curves of each ranking (quadratic-kernel SVM) "
                "and ECA against a random ranking; needs a class target.", (
            K("enabled", SWITCH, _WHEN_CLASSES, AUTO),
            K("protocol", String(*PROTOCOLS), "nested: every ranking refit on each training "
              "fold (honest); whole_data: the error-curve paper's protocol, the rankings fitted "
              "once on all samples (optimistic: the test folds helped choose the features, so "
              "pure noise beats random; reported as such)", "nested"),
            K("grid", (String("every", "geometric"), Integer(1), Array(Integer(1), 1)),
              "subset sizes: 'every', 'geometric' (1, 2, 4, ..., n), a step or a list",
              "geometric"),
            K("weighting", Array(String(*WEIGHTINGS), 1), "ECA weightings", ["uniform"]),
            K("n_random", Integer(0), "random rankings of the expected curve (plot band, "
              "magnitude weightings); 0 = none", 20),
        )),
        Section("clustering", "k-means on the top features of each ranking, scored against "
                "the classes (F1W, NMI, ACC); needs a class target. The rankings are those "
                "fitted on all samples (the Distance Rank paper's protocol): for a supervised "
                "ranker, which saw the classes it is scored against, this is optimistic.", (
            K("enabled", SWITCH, _WHEN_CLASSES, AUTO),
            K("k_features", Array(Integer(1), 1), "numbers of top features (default 1, 2, 4, "
              "..., n)"),
            K("n_restarts", Integer(1), "k-means runs averaged", 5),
            K("two_step", BOOLEAN, "the two-step evaluation for imbalanced data", False),
        )),
        Section("statistics", "Friedman + Nemenyi over the blocks (sites, else folds) on the "
                "headline score at its at_k, random baseline included; a CD diagram.", (
            K("enabled", SWITCH, "true, false or 'auto' (when there are at least two blocks "
              "and two methods)", AUTO),
            K("score", String(*STATISTICS_SCORES), "the score tested: 'auto' is the class "
              "prediction with a class target, else the top-k error", AUTO),
            K("alpha", Number(0.001, 0.5), "significance level", 0.05),
        )),
    )),
    Section("markers", "Marker features per class: every class of a class target against the "
            "rest of the samples, as scanpy's rank_genes_groups computes them (one test's "
            "statistic, log fold change, p- and q-values, fraction expressing in and out), "
            "each class's features ordered by the consensus of the member rankers fitted to "
            "'this class vs the rest'. Written to markers.csv (one row per class and feature) "
            "and drawn in the report (a dot plot of each class's top markers). Needs a class "
            "target; not in a site run.", (
        K("enabled", BOOLEAN, "compute the markers", False),
        K("rankers", Array(STRING, min_items=1), "the members ordering each class's features: "
          "registered class rankers, each fitted to the binary target 'class vs rest', and "
          "'wilcoxon' (the rank-sum z-score)", ["t_test", "wilcoxon"]),
        K("aggregate", String(*(m for m in AGGREGATIONS if m != "weighted_mean_rank")),
          "how the members' orders combine per class", "mean_rank"),
        K("test", String(*TESTS), "the test whose statistic, p- and q-values markers.csv "
          "reports: Welch's t or the Wilcoxon rank-sum (scanpy's method)", "t-test"),
        K("direction", String(*DIRECTIONS), "which features lead a class's order: higher in "
          "the class than in the rest (scanpy's default), lower, or the most different "
          "either way", "up"),
        K("n_top", Integer(1), "markers per class drawn in the report (markers.csv holds "
          "every feature)", 5),
    )),
    Section("output", "Where and what to write.", (
        K("dir", STRING, "output folder, relative to the working directory", "results"),
        K("plots", BOOLEAN, "write PNG plots", True),
        K("html", BOOLEAN, "write the self-contained report.html", True),
        K("cache", BOOLEAN, "keep finished results in <dir>/.cache (data files, never "
          "code) so an unchanged re-run resumes; edited code recomputes", True),
        K("q", Number(0, 1), "false discovery rate the feature table marks: a ranker's "
          "feature with a Benjamini-Hochberg q-value at most q is significant (features.csv "
          "holds every q-value; the report highlights and filters by this one)", 0.05),
    )),
    Section("run", "How the run executes.", (
        K("random_state", Integer(0, 2**32 - 1), "seed of every random choice", 0),
        K("n_jobs", Integer(exclude=(0,)), "parallel jobs (joblib; -1 = all the CPUs this "
          "process may use; more than that are clipped, with a warning); one layer at a "
          "time: the rankers' fits or the evaluations' folds, never both"),
        K("backend", String(*BACKENDS), "joblib backend: 'loky' leaves each library its "
          "choice (processes for folds, threads for many small fits); 'threading' and "
          "'multiprocessing' force one; 'dask' runs on a Dask cluster", "loky"),
        K("scheduler", STRING, "address of the Dask scheduler (backend = 'dask'); without it "
          "a local cluster is started"),
        K("threads", Integer(1), "BLAS/OpenMP threads per job; many small fits run fastest "
          "single-threaded, big data may gain from more", 1),
        K("verbose", Integer(0, 2), "0 silent, 1 progress bars, 2 also log steps", 1),
    )),
))
# fmt: on
