"""hd.nn's transformer pieces: attention against NumPy, gradient clipping, the GPT of
examples/gpt_char, and learning-rate schedules driving a Trainer."""
import math

import numpy as np
import pytest

import hedra as hd
from hedra import nn


def attention_reference(x, w_qkv, b_qkv, w_proj, b_proj, heads):
    B, T, C = x.shape
    D = C // heads
    qkv = x @ w_qkv.T + b_qkv
    q, k, v = qkv[..., :C], qkv[..., C:2 * C], qkv[..., 2 * C:]
    out = np.zeros_like(x)
    mask = np.triu(np.full((T, T), -np.inf), 1)
    for h in range(heads):
        s = slice(h * D, (h + 1) * D)
        scores = q[..., s] @ k[..., s].transpose(0, 2, 1) / math.sqrt(D) + mask
        p = np.exp(scores - scores.max(-1, keepdims=True))
        out[..., s] = (p / p.sum(-1, keepdims=True)) @ v[..., s]
    return out @ w_proj.T + b_proj


def test_causal_self_attention_matches_numpy():
    rng = np.random.default_rng(0)
    B, T, C, H = 2, 5, 8, 2
    args = [rng.normal(size=(B, T, C)), rng.normal(size=(3 * C, C)), rng.normal(size=3 * C),
            rng.normal(size=(C, C)), rng.normal(size=C)]
    got = hd.compute(nn.causal_self_attention(*args, heads=H))
    np.testing.assert_allclose(got, attention_reference(*args, H), rtol=1e-9, atol=1e-9)


def test_clip_grad_norm():
    g = [hd.array(np.array([3.0, 0.0])), hd.array(np.array([4.0]))]
    clipped, total = nn.clip_grad_norm(g, max_norm=1.0)
    assert hd.compute(total) == pytest.approx(5.0)
    np.testing.assert_allclose(hd.compute(clipped[0]), [3 / (5 + 1e-6), 0])


def test_gpt_loss_at_init_is_near_uniform():
    config = nn.GptConfig(vocab=11, block=8, layers=1, heads=2, embd=16)
    assert (config.vocab, config.block, config.layers, config.heads, config.embd, config.bias) == \
        (11, 8, 1, 2, 16, True)
    params = nn.gpt_init(config, seed=0)
    names = nn.gpt_parameters(config)
    assert len(names) == len(params) and names[0][0].startswith("transformer.")
    assert all(tuple(shape) == p.shape for (_, shape, _), p in zip(names, params))
    tokens = np.arange(16, dtype=np.int64).reshape(2, 8) % 11
    logits = hd.compute(nn.gpt_logits(config, params, tokens))
    assert logits.shape == (2, 8, 11)
    loss = hd.compute(nn.gpt_loss(config, params, tokens, (tokens + 1) % 11))
    assert abs(loss - math.log(11)) < 0.2


def test_schedules_drive_a_trainer():
    cosine = nn.WarmupCosine(lr=1.0, min_lr=0.1, warmup=2, decay_steps=10)
    assert (cosine.lr, cosine.min_lr, cosine.warmup, cosine.decay_steps) == (1.0, 0.1, 2, 10)
    assert cosine(0) < cosine(2) == pytest.approx(1.0) and cosine(10) == pytest.approx(0.1)
    constant = nn.ConstantLr(lr=0.05)
    assert constant(123) == constant.lr == 0.05
    config = nn.GptConfig(vocab=7, block=4, layers=1, heads=1, embd=8)
    # nn::embedding does not take a symbolic batch: the hd.Error raised in the Python loss
    # reaches the Trainer as hedra::Error, which then compiles a program per batch size.
    trainer = nn.Trainer(lambda p, i: nn.gpt_loss(config, p, i[0], i[1]),
                         [nn.InputSpec([-1, 4], hd.i64), nn.InputSpec([-1, 4], hd.i64)],
                         nn.gpt_init(config, seed=1), nn.AdamW(lr=1e-2),
                         param_names=[n for n, _, _ in nn.gpt_parameters(config)], clip_norm=1.0)
    tokens = np.arange(8, dtype=np.int64).reshape(2, 4) % 7
    schedule = nn.WarmupCosine(lr=3e-2, min_lr=3e-3, warmup=2, decay_steps=20)
    losses = [trainer.step([tokens, (tokens + 1) % 7], lr=schedule(s)) for s in range(15)]
    assert losses[-1] < losses[0]


def test_gpt_generator_matches_the_full_forward_and_repeats_with_a_seed():
    config = nn.GptConfig(vocab=13, block=12, layers=1, heads=2, embd=16)
    params = nn.gpt_init(config, seed=3)
    generator = nn.GptGenerator(config, params, batch=2)
    assert generator.last_logits.shape == (0, 0)
    prompt = [[1, 2, 3], [4, 5, 6]]
    new = generator.generate(prompt, 5)
    assert [len(row) for row in new] == [5, 5]
    assert generator.programs_compiled == 2 and generator.compile_seconds > 0
    # Greedy decoding with the cache = the argmax of the full forward at each position.
    for row, tokens in zip(prompt, new):
        text = list(row)
        for token in tokens:
            logits = hd.compute(nn.gpt_logits(config, params, np.array([text], dtype=np.int64)))
            assert token == int(np.argmax(logits[0, -1]))
            text.append(token)
    full = np.array([row + tokens for row, tokens in zip(prompt, new)], dtype=np.int64)
    want = hd.compute(nn.gpt_logits(config, params, full[:, :-1]))[:, -1]
    np.testing.assert_allclose(generator.last_logits, want, rtol=1e-5, atol=1e-5)
    # Sampling repeats with its seed; top_k=1 is greedy.
    draws = [nn.GptGenerator(config, params, batch=2, backend="openmp", num_threads=1)
             .generate(prompt, 6, temperature=0.8, top_k=5, seed=7) for _ in range(2)]
    assert draws[0] == draws[1]
    top1 = nn.GptGenerator(config, params, batch=2).generate(prompt, 5, temperature=1.0, top_k=1)
    assert top1 == new
    with pytest.raises(hd.Error):
        generator.generate([[1] * 10, [2] * 10], 5)  # past the context of 12
