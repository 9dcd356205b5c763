"""Greedy generation with a key-value cache in PyTorch eager, the peer of bench/gpt_step's
`generate` line (nn::GptGenerator): the GPT of gpt_model.py, one token of prompt, then
context - 1 new tokens, each one forward of the new position over the cached keys and values
(nanoGPT's generate recomputes the whole context per token; this loop does not). f32, CPU,
torch.no_grad().

  python bench/peers/gpt_generate_torch.py --config w7|w8 --threads 1 [--runs 5]

Prints "GPT <config> generate eager threads=T tokens=N tokens_per_s median=.. ms_per_token=..".
"""
import argparse
import math
import statistics
import time

CONFIGS = {"w7": (4, 4, 128, 64), "w8": (6, 6, 384, 256)}  # layers, heads, width, context


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", choices=sorted(CONFIGS), default="w7")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--vocab", type=int, default=84)
    a = p.parse_args()
    import torch
    torch.set_num_threads(a.threads)
    import torch.nn.functional as F
    from gpt_model import Gpt, GptShape, init_weights, load_weights

    layers, heads, width, context = CONFIGS[a.config]
    model = Gpt(GptShape(layers, heads, width, context, a.vocab)).eval()
    load_weights(model, init_weights(model, 0))
    tr = model.transformer
    d = width // heads

    def step(token, pos, cache):
        x = tr.wte.weight[token] + tr.wpe.weight[pos]  # (1, C)
        for layer, block in enumerate(tr.h):
            q, k, v = block.attn.c_attn(block.ln_1(x)).split(width, dim=1)
            q, k, v = (z.view(1, heads, d) for z in (q, k, v))
            ks, vs = cache[layer]
            ks.append(k)
            vs.append(v)
            kk, vv = torch.stack(ks, 0), torch.stack(vs, 0)  # (L + 1, 1, H, D)
            s = (kk * q).sum(-1) / math.sqrt(d)  # (L + 1, 1, H)
            w = torch.softmax(s, dim=0).unsqueeze(-1)
            y = (w * vv).sum(0).reshape(1, width)
            x = x + block.attn.c_proj(y)
            x = x + block.mlp(block.ln_2(x))
        return tr.ln_f(x) @ tr.wte.weight.t()

    def generate():
        cache = [([], []) for _ in range(layers)]
        token = torch.tensor([0])
        out = []
        for pos in range(context):
            logits = step(token, pos, cache)
            token = logits.argmax(-1)
            out.append(int(token))
        return out

    with torch.no_grad():
        generate()  # warm-up
        times = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            generate()
            times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    print(f"GPT {a.config} generate eager threads={a.threads} tokens={context} "
          f"tokens_per_s median={context / med:.1f} ms_per_token={1e3 * med / context:.3f}")


if __name__ == "__main__":
    main()
