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
