"""tinyattn/data/batching.py: batches of similar lengths (bucket_batches, BucketedStream)."""
import re

import numpy as np
import pytest

import tinyattn as ta
from tinyattn.data import TOKEN_IDS, BucketedStream, Reordering, ToyTranslation, bucket_batches
from tinyattn.models import TransformerSeq2Seq


def uniform_lengths(n=2000, seed=0):
    return np.random.default_rng(seed).integers(5, 51, size=n)


def padding_fraction(lengths, batches):
    """The share of a batch's positions that are padding, when each batch pads to its longest."""
    return 1 - sum(lengths[b].sum() for b in batches) / sum(len(b) * lengths[b].max() for b in batches)


@pytest.mark.parametrize("n, batch_size, pool_batches", [(2000, 64, 8), (1000, 7, 3), (5, 64, 4), (64, 64, 1)])
def test_every_example_appears_exactly_once_an_epoch(n, batch_size, pool_batches):
    lengths = uniform_lengths(n)
    rng = np.random.default_rng(1)
    for _ in range(2):  # two epochs: each covers every example once
        batches = bucket_batches(lengths, batch_size, rng, pool_batches)
        together = np.concatenate(batches)
        assert sorted(together.tolist()) == list(range(n))
        assert all(1 <= len(b) <= batch_size for b in batches)


def test_batches_hold_similar_lengths_and_pad_less_than_random_ones():
    lengths = uniform_lengths()
    rng = np.random.default_rng(0)
    bucketed = bucket_batches(lengths, 64, rng, pool_batches=8)
    shuffled = rng.permutation(len(lengths))
    random = [shuffled[i:i + 64] for i in range(0, len(lengths), 64)]
    spread = np.mean([np.ptp(lengths[b]) for b in bucketed])
    assert spread < 8 and np.mean([np.ptp(lengths[b]) for b in random]) > 40
    assert padding_fraction(lengths, random) > 0.35 and padding_fraction(lengths, bucketed) < 0.1
    # one pool: the batches are consecutive slices of the sorted lengths, their ranges never overlap
    whole = sorted(bucket_batches(lengths, 64, rng, pool_batches=len(lengths)), key=lambda b: lengths[b].min())
    assert all(lengths[a].max() <= lengths[b].min() for a, b in zip(whole, whole[1:]))


def test_the_batches_come_in_a_shuffled_order_not_short_to_long():
    lengths = uniform_lengths()
    means = [lengths[b].mean() for b in bucket_batches(lengths, 64, np.random.default_rng(0), pool_batches=4)]
    assert abs(np.corrcoef(np.arange(len(means)), means)[0, 1]) < 0.5  # sorted would be near 1
    assert max(means) - min(means) > 30


def test_pairs_sort_by_the_first_length_then_the_second():
    lengths = np.array([[3, 9], [1, 5], [3, 2], [1, 1], [2, 7], [3, 5]])
    (batch,) = bucket_batches(lengths, 6, np.random.default_rng(0), pool_batches=1)
    assert lengths[batch].tolist() == [[1, 1], [1, 5], [2, 7], [3, 2], [3, 5], [3, 9]]


def test_the_same_seed_makes_the_same_epochs_and_each_epoch_reshuffles():
    lengths = uniform_lengths(500)

    def two_epochs(seed):
        rng = np.random.default_rng(seed)
        return [[b.tolist() for b in bucket_batches(lengths, 16, rng, 4)] for _ in range(2)]

    first, second = two_epochs(3)
    assert two_epochs(3) == [first, second] and first != second and two_epochs(4)[0] != first


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"bucket_batches: .*batch_size 0"):
        bucket_batches([3, 4], 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"bucket_batches: .*shape \(1, 2, 2\)"):
        bucket_batches(np.ones((1, 2, 2)), 2, np.random.default_rng(0))


def test_a_stream_serves_each_pool_once_in_few_widths_and_resumes_at_a_pool_boundary():
    data = Reordering(seed=0)
    stream = BucketedStream(data, 16, pool_batches=5, multiple=8)
    widths, served = set(), []
    for step in range(1, 11):
        source, lengths, target = stream(step)
        assert source.shape[1] % 8 == 0 and target.shape[1] % 8 == 0 and source.shape[1] >= lengths.max()
        widths.add(source.shape[1])
        served.append(np.sort(lengths))
        if step == 5:
            pool = sorted(len(s) for s, _ in stream.pairs)
            assert sorted(np.concatenate(served).tolist()) == pool  # steps 1-5: the first pool, once each
            saved = data.rng.bit_generator.state  # what fit's checkpoint keeps of the data
    assert len(widths) <= 7 and np.mean([np.ptp(s) for s in served]) < 15
    data.rng.bit_generator.state = saved  # resumed after step 5: the same steps 6-10
    resumed = BucketedStream(data, 16, pool_batches=5, multiple=8)
    assert all(np.array_equal(np.sort(resumed(step)[1]), served[step - 1]) for step in range(6, 11))


def train(compiled, steps=24):
    """A small Transformer on the quick pair's bucketed stream: losses, parameters, the compiled step."""
    data = ToyTranslation(max_phrases=4, seed=0)
    ta.manual_seed(0)
    model = TransformerSeq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, d_model=16, nhead=2,
                               num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=32)
    opt = ta.optim.Adam(model.parameters(), lr=3e-3)
    history = ta.train.fit(model, opt, model.loss, steps, batches=BucketedStream(data, 8, pool_batches=4, multiple=8),
                           compile=compiled, clip_grad_norm=1.0, stream=open("/dev/null", "w"))
    return history, [p.data.copy() for p in model.parameters()]


def test_compiled_training_on_bucketed_batches_equals_eager_and_replays_recurring_widths():
    eager, eager_params = train(False)
    compiled, compiled_params = train(True)
    np.testing.assert_allclose(compiled.losses, eager.losses, rtol=1e-6)
    for a, b in zip(compiled_params, eager_params):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    summary = compiled.compiled.explain()
    signatures = int(re.search(r"(\d+) signature", summary)[1])
    calls = [(int(n), int(r)) for n, r in re.findall(r"calls (\d+), replayed (\d+)", summary)]
    assert 1 < signatures <= 4  # widths of 1-14 words rounded up to 8 or 16: a few shapes, each recurring
    assert sum(n for n, _ in calls) == 24 and sum(r for _, r in calls) >= 24 - 2 * signatures
    assert all(r == max(0, n - 2) for n, r in calls)  # every call after a signature's two captures replays


def test_no_examples_give_no_batches():
    rng = np.random.default_rng(0)
    assert bucket_batches(np.array([], int), 4, rng) == [] and bucket_batches(np.zeros((0, 2), int), 4, rng) == []
