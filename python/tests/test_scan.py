"""scan from Python: a loop traced once, against a NumPy loop; its gradient against finite
differences; reverse scans, lengths without scanned arrays, checkpoints and errors."""
import numpy as np
import pytest

import hedra as hd

RNG = np.random.default_rng(3)
XS = RNG.standard_normal((7, 4, 5)).astype(np.float64)
W = (0.5 * RNG.standard_normal((5, 5))).astype(np.float64)


def elman(xs, w, reverse=False, checkpoint=0):
    def step(carries, x):
        h = hd.tanh(x[0] + hd.matmul(carries[0], w))
        return [h], [h * 2.0]

    return hd.scan(step, [hd.zeros((4, 5), hd.f64)], [xs], reverse=reverse, checkpoint=checkpoint)


def numpy_elman(reverse=False):
    h = np.zeros((4, 5))
    ys = np.zeros_like(XS)
    for t in (reversed(range(7)) if reverse else range(7)):
        h = np.tanh(XS[t] + h @ W)
        ys[t] = 2 * h
    return h, ys


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_against_a_numpy_loop(reverse):
    carries, ys, states = elman(hd.array(XS), hd.array(W), reverse)
    h, want = numpy_elman(reverse)
    np.testing.assert_allclose(hd.compute(carries[0]), h, rtol=1e-12)
    np.testing.assert_allclose(hd.compute(ys[0]), want, rtol=1e-12)
    assert states[0].shape == hd.Shape([7, 4, 5])


def test_scan_gradient_against_finite_differences():
    w = hd.array(W)
    carries, ys, _ = elman(hd.array(XS), w, checkpoint=0)
    loss = hd.sum(ys[0] * ys[0])
    g = hd.compute(hd.grad(loss, w))
    eps = 1e-6
    for i, j in [(0, 0), (2, 3), (4, 1)]:
        d = np.zeros_like(W)
        d[i, j] = eps
        up = hd.compute(hd.sum(elman(hd.array(XS), hd.array(W + d))[1][0] ** 2))
        down = hd.compute(hd.sum(elman(hd.array(XS), hd.array(W - d))[1][0] ** 2))
        assert g[i, j] == pytest.approx((up - down) / (2 * eps), rel=1e-6)
    # Checkpointed: the same gradient.
    _, ys1, _ = elman(hd.array(XS), w, checkpoint=7)
    np.testing.assert_allclose(hd.compute(hd.grad(hd.sum(ys1[0] * ys1[0]), w)), g, rtol=1e-10)


def test_scan_length_without_scanned_arrays_and_errors():
    carries, ys, _ = hd.scan(lambda c, x: ([c[0] + 1], [c[0]]), [hd.zeros((), hd.i64)], [], length=5)
    assert int(hd.compute(carries[0])) == 5
    np.testing.assert_array_equal(hd.compute(ys[0]), np.arange(5))
    with pytest.raises(hd.Error, match="returns a pair"):
        hd.scan(lambda c, x: c, [hd.zeros((3,))], [hd.array(XS[:, 0, :3])])
    with pytest.raises(hd.Error, match="changes carry 0"):
        hd.scan(lambda c, x: ([hd.cast(c[0], hd.f64)], []), [hd.zeros((5,))], [hd.array(XS[:, 0])])


def test_nn_recurrent_lstm_against_numpy():
    from hedra import nn

    names = nn.recurrent_parameters("lstm", 3, 4)
    assert [n for n, _ in names] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    assert names[0][1] == [16, 3]
    values = nn.recurrent_init("lstm", 3, 4, seed=1)
    assert all(np.abs(v).max() <= 0.5 for v in values)  # U(+-1/sqrt(4))
    x = RNG.standard_normal((5, 2, 3)).astype(np.float32)
    output, h, c = nn.recurrent("lstm", [hd.array(v) for v in values], hd.array(x), 3, 4)
    wi, wh, bi, bh = values
    hh, cc = np.zeros((2, 4)), np.zeros((2, 4))
    sig = lambda v: 1 / (1 + np.exp(-v))
    outs = []
    for t in range(5):
        g = x[t] @ wi.T + bi + hh @ wh.T + bh
        i, f, gg, o = sig(g[:, :4]), sig(g[:, 4:8]), np.tanh(g[:, 8:12]), sig(g[:, 12:])
        cc = f * cc + i * gg
        hh = o * np.tanh(cc)
        outs.append(hh)
    np.testing.assert_allclose(hd.compute(output), np.stack(outs), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hd.compute(h)[0], hh, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hd.compute(c)[0], cc, rtol=1e-4, atol=1e-5)
    _, _, none = nn.recurrent("gru", [hd.array(v) for v in nn.recurrent_init("gru", 3, 4, seed=2)],
                              hd.array(x), 3, 4, batch_first=False, bidirectional=False)
    assert none is None
    model = nn.lstm_classifier(28, 28, 16, 10, seed=0)
    assert "lstm.weight_ih_l0" in model.names and "fc.bias" in model.names
    with pytest.raises(hd.Error, match="unknown mode 'lstn'"):
        nn.recurrent_parameters("lstn", 3, 4)
