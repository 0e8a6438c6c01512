"""Long tool texts as several vectors: windows cut by word pieces, pooled per tool, cached."""

import numpy as np
import pytest

from toolsel import Tool, get_scorer
from toolsel.scorers.embedding import (EmbeddingScorer, counting_tokenizer, load_encoder,
                                       text_windows)
from toolsel.scorers.fusion import FusionScorer

# a long listing whose one sentence about refunds comes after ~400 word pieces of other text
FILLER = " ".join(f"The billing service keeps invoice number {i} in its ledger for audits."
                  for i in range(30))
LONG = Tool("billing_refund_payment", f"{FILLER} Refund a card payment to the customer who "
            "paid, in full or in part.")
OTHERS = [Tool("billing_list_invoices", "List invoices of a customer, newest first."),
          Tool("weather_lookup", "Current weather and forecast for a city."),
          Tool("send_email", "Send an email message to one or more recipients."),
          Tool("stock_price", "Latest stock price for a ticker symbol.")]
REG = [LONG, *OTHERS]


@pytest.fixture(scope="module")
def tok():
    return counting_tokenizer(load_encoder())


def test_windows_cover_the_text_in_order_within_the_budget(tok):
    (wins, none) = text_windows([LONG.description, "a short text"], ["billing refund", "x"],
                                tok, 64)
    assert none == [] and len(wins) > 4
    assert all(w.startswith("billing refund ") for w in wins)
    assert all(len(tok.encode(w).ids) <= 64 for w in wins)
    body = " ".join(w[len("billing refund "):] for w in wins)
    assert body.split() == LONG.description.split()  # every word once, in order
    # whole sentences: no window starts inside one
    assert all(w[len("billing refund "):].startswith("The") or "Refund" in w for w in wins)
    # a sentence longer than the budget is cut between words
    (cut,) = text_windows(["word " * 300], [""], tok, 40)
    assert len(cut) > 5 and " ".join(cut).split() == ["word"] * 300
    assert all(len(tok.encode(w).ids) <= 40 for w in cut)


def test_short_texts_score_exactly_as_without_windows(registry):
    plain = EmbeddingScorer(cache=False).fit(registry)
    windowed = EmbeddingScorer(cache=False, windows=128).fit(registry)
    assert len(windowed.window_tools_) == 0  # the bundled registry has no long text
    qs = ["send a direct message to alice on slack", "what's 340 divided by 12"]
    np.testing.assert_array_equal(plain.score_many(qs), windowed.score_many(qs))


@pytest.mark.parametrize("pooling", ["max", "mean_max", "mean"])
def test_a_sentence_past_the_truncation_is_found_through_its_window(pooling):
    q = "refund the card payment to the customer"
    plain = EmbeddingScorer(cache=False).fit(REG)
    windowed = EmbeddingScorer(cache=False, windows=128, window_pooling=pooling).fit(REG)
    assert windowed.window_tools_.tolist() == [0] and windowed.window_counts_[0] >= 4
    assert windowed.score(q)[0] > plain.score(q)[0] + 0.1
    assert int(np.argmax(windowed.score(q))) == 0
    # pooling by hand: the whole text's cosine and each window's
    qv = windowed.encode_queries([q])[0]
    ref = EmbeddingScorer(cache=False, windows=128).fit(REG)  # every vector kept
    own = np.r_[ref.vectors_[0] @ qv, ref.window_vectors_ @ qv]
    if pooling == "mean":  # folded into one vector per tool
        assert len(windowed.window_vectors_) == 0 and windowed.vectors_.shape == (len(REG), 384)
        np.testing.assert_array_equal(windowed.vectors_[1:], plain.vectors_[1:])
    want = {"max": own.max(), "mean": own.mean(),
            "mean_max": (own.max() + own.mean()) / 2}[pooling]
    assert windowed.score(q)[0] == pytest.approx(want, abs=1e-6)
    np.testing.assert_allclose(windowed.score(q)[1:], plain.score(q)[1:], atol=1e-9)


def test_window_vectors_are_cached_by_their_text(tmp_path):
    cold = EmbeddingScorer(cache_dir=tmp_path, windows=96).fit(REG)
    n_windows = len(cold.window_vectors_)
    assert cold.n_encoded_ == len(REG) + n_windows
    warm = EmbeddingScorer(cache_dir=tmp_path, windows=96).fit(REG)
    assert warm.n_encoded_ == 0
    fresh = EmbeddingScorer(cache=False, windows=96).fit(REG)
    np.testing.assert_allclose(warm.window_vectors_, fresh.window_vectors_, atol=1e-6)
    # another window size cuts other texts: only those are encoded, none is read wrongly
    other = EmbeddingScorer(cache_dir=tmp_path, windows=64).fit(REG)
    assert 0 < other.n_encoded_ <= len(other.window_vectors_)
    np.testing.assert_allclose(
        other.window_vectors_, EmbeddingScorer(cache=False, windows=64).fit(REG).window_vectors_,
        atol=1e-6)
    # the whole-text vectors are the same as without windows
    np.testing.assert_array_equal(other.vectors_,
                                  EmbeddingScorer(cache_dir=tmp_path).fit(REG).vectors_)


@pytest.mark.parametrize("params, match", [
    (dict(windows=8), "windows must be None or an integer from 32 to 256"),
    (dict(windows=300), "windows must be"), (dict(windows=True), "windows must be"),
    (dict(windows=128, window_pooling="median"), "window_pooling must be one of"),
])
def test_window_parameters_are_checked(params, match):
    with pytest.raises(ValueError, match=match):
        EmbeddingScorer(cache=False, **params).fit(OTHERS)


def test_fusion_passes_windows_to_its_semantic_signal():
    q = "refund the card payment to the customer"
    fused = FusionScorer(windows=128).fit(REG)
    (sem,) = [sc for kind, sc in fused.signals_ if kind == "semantic"]
    assert sem.windows == 128 and len(sem.window_tools_) == 1
    assert int(np.argmax(fused.score(q))) == 0
    # a multi-clause request's clause rows are pooled per tool too
    multi = "Refund the card payment to the customer, and then email them a receipt"
    segs = [fused.segments(multi)]
    assert len(segs[0]) == 3
    (_, _, raw), = [s for s in fused._signal_scores(segs) if s[0] == "semantic"]
    from toolsel.scorers.fusion import locate_clauses
    vecs = sem.encode_in_context([multi], [locate_clauses(multi, segs[0][1:])])[0]
    np.testing.assert_allclose(raw, sem.tool_cosines(vecs), atol=1e-6)
    assert get_scorer("default", windows=64).windows == 64


def test_prime_cache_encodes_the_windows_a_fit_needs(tmp_path):
    from toolsel.scorers.parallel import prime_cache
    info = prime_cache(REG, n_jobs=1, cache_dir=str(tmp_path), progress=False, windows=128)
    fitted = EmbeddingScorer(cache_dir=tmp_path, windows=128).fit(REG)
    assert fitted.n_encoded_ == 0
    assert info["n_texts"] == len(REG) + len(fitted.window_vectors_)
    with pytest.raises(ValueError, match="prime_cache: windows must be"):
        prime_cache(REG, n_jobs=1, cache_dir=str(tmp_path), progress=False, windows=4)


def test_default_reads_long_texts_through_window_means():
    d = get_scorer("default")
    assert (d.windows, d.window_pooling) == (128, "mean")
    d.fit(REG)
    (sem,) = [sc for kind, sc in d.signals_ if kind == "semantic"]
    assert sem.window_tools_.tolist() == [0] and len(sem.window_vectors_) == 0
    assert int(np.argmax(d.score("refund the card payment to the customer"))) == 0
    # one vector per tool and no window: the same scores as before windows
    short = FusionScorer(windows=None).fit(OTHERS)
    qs = ["list my invoices", "weather in Rome and the AAPL stock price"]
    np.testing.assert_array_equal(get_scorer("default").fit(OTHERS).score_many(qs),
                                  short.score_many(qs))
