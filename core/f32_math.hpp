// f32_math: exp, log, tanh and sigmoid of f32 computed in f32, the one definition every backend
// uses. Not an ordinary header: it holds only function definitions in the C subset that the
// generated kernels are written in (no includes, builtins only), and it is both included by the
// interpreter (core/scalar_eval.cpp, inside a namespace) and pasted into every generated
// program's prelude (core/f32_math_source.hpp), so that the reference and the compiled code
// agree bit for bit (fused multiply-adds are written as fmaf, correctly rounded everywhere, and
// nothing else may contract). Branch-free (selects, not branches), so `#pragma omp simd` loops
// calling them vectorize. Cody-Waite range reduction and Cephes' minimax polynomials; measured
// bounds against f64 over every f32 input are in docs/api.md ("Accuracy of f32 math") and
// tests/core/test_f32_math.cpp. Compile with floating-point contraction off (-ffp-contract=off).
static inline int hd_f32_bits(float x) {
    int i;
    __builtin_memcpy(&i, &x, 4);
    return i;
}
static inline float hd_f32_from_bits(int i) {
    float x;
    __builtin_memcpy(&x, &i, 4);
    return x;
}
// 2^k for -126 <= k <= 127.
static inline float hd_f32_pow2(int k) {
    return hd_f32_from_bits((k + 127) << 23);
}
// e^r for |r| <= ln2 / 2 + a little: a degree-7 polynomial (Cephes' expf).
static inline float hd_exp_f32_poly(float r) {
    float z = r * r;
    float p = 1.9875691500e-4f;
    p = __builtin_fmaf(p, r, 1.3981999507e-3f);
    p = __builtin_fmaf(p, r, 8.3334519073e-3f);
    p = __builtin_fmaf(p, r, 4.1665795894e-2f);
    p = __builtin_fmaf(p, r, 1.6666665459e-1f);
    p = __builtin_fmaf(p, r, 5.0000001201e-1f);
    p = __builtin_fmaf(p, z, r);
    return p + 1.0f;
}
// x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts, so n ln2 is exact); returns n.
static inline float hd_exp_f32_reduce(float x, float* r) {
    float fn = __builtin_floorf(__builtin_fmaf(x, 1.44269502162933349609f, 0.5f));
    float t = __builtin_fmaf(fn, -0.693359375f, x);
    *r = __builtin_fmaf(fn, 2.12194440e-4f, t);
    return fn;
}
// e^x: e^r times 2^n, in two factors where the result is subnormal (so results down to the
// subnormals are reached).
static inline float hd_exp_f32(float x) {
    const float hi = 88.72283935546875f, lo = -103.97208404541015625f;
    float xc = x > hi ? hi : (x < lo ? lo : x);
    xc = x != x ? 0.0f : xc; // (a NaN converted to int below would be undefined)
    float r;
    float fn = hd_exp_f32_reduce(xc, &r);
    float p = hd_exp_f32_poly(r);
    int n = (int)fn;
    // p * 2^n: into the exponent bits where the result is normal, else in two factors
    // (subnormal results, and n = 128 where p >= 1 overflows to inf).
    float normal = hd_f32_from_bits(hd_f32_bits(p) + (n << 23));
    // The two factors only where they are selected: evaluated for every lane (branch-free),
    // they would make subnormal intermediates, a microcode assist per lane, for every input
    // below lo (a causal mask's -inf: softmax 0.7 -> 0.3 ms).
    int ns = (n < -125 || n > 127) && !(x < lo) ? n : 0;
    int n1 = ns >> 1;
    float small = p * hd_f32_pow2(n1) * hd_f32_pow2(ns - n1);
    float e = n < -125 || n > 127 ? small : normal;
    e = x > hi ? __builtin_inff() : e;
    e = x < lo ? 0.0f : e;
    return x != x ? x : e;
}
// e^x for -80 <= x <= 80, where the result is normal: hd_exp_f32 without its special cases
// (the same value there, at half the work).
static inline float hd_exp_f32_normal(float x) {
    float r;
    float fn = hd_exp_f32_reduce(x, &r);
    return hd_f32_from_bits(hd_f32_bits(hd_exp_f32_poly(r)) + ((int)fn << 23));
}
// log x: x = m 2^e with sqrt(1/2) <= m < sqrt(2), log(m) by Cephes' polynomial in m - 1, plus
// e ln2 in two parts. Subnormal inputs are scaled by 2^23 first.
static inline float hd_log_f32(float x) {
    int sub = x < 1.17549435e-38f;
    float xs = sub ? x * 8388608.0f : x;
    int i = hd_f32_bits(xs);
    int e = ((i >> 23) & 0xff) - 126 - (sub ? 23 : 0);
    float m = hd_f32_from_bits((i & 0x007fffff) | 0x3f000000); // in [0.5, 1)
    int small = m < 0.707106781186547524f;
    e = small ? e - 1 : e;
    m = small ? m + m - 1.0f : m - 1.0f;
    float fe = (float)e;
    float z = m * m;
    float y = 7.0376836292e-2f;
    y = __builtin_fmaf(y, m, -1.1514610310e-1f);
    y = __builtin_fmaf(y, m, 1.1676998740e-1f);
    y = __builtin_fmaf(y, m, -1.2420140846e-1f);
    y = __builtin_fmaf(y, m, 1.4249322787e-1f);
    y = __builtin_fmaf(y, m, -1.6668057665e-1f);
    y = __builtin_fmaf(y, m, 2.0000714765e-1f);
    y = __builtin_fmaf(y, m, -2.4999993993e-1f);
    y = __builtin_fmaf(y, m, 3.3333331174e-1f);
    y = y * m * z;
    y = __builtin_fmaf(fe, -2.12194440e-4f, y);
    y = __builtin_fmaf(-0.5f, z, y);
    float r = m + y;
    r = __builtin_fmaf(fe, 0.693359375f, r);
    r = x == __builtin_inff() ? x : r;
    r = x == 0.0f ? -__builtin_inff() : r;
    r = x < 0.0f ? __builtin_nanf("") : r;
    return x != x ? x : r;
}
// tanh x: an odd polynomial below |x| = 0.625, else 1 - 2 / (e^2|x| + 1) with x's sign.
static inline float hd_tanh_f32(float x) {
    float a = x < 0.0f ? -x : x;
    float z = x * x;
    float p = -5.70498872745e-3f;
    p = __builtin_fmaf(p, z, 2.06390887954e-2f);
    p = __builtin_fmaf(p, z, -5.37397155531e-2f);
    p = __builtin_fmaf(p, z, 1.33314422036e-1f);
    p = __builtin_fmaf(p, z, -3.33332819422e-1f);
    float near0 = __builtin_fmaf(x * z, p, x);
    // Past 10, tanh rounds to 1 (1 - tanh(10) = 4e-9 < half an ulp below 1): e^(2a) stays
    // normal.
    float ac = a < 10.0f ? a : 10.0f;
    float big = 1.0f - 2.0f / (hd_exp_f32_normal(ac + ac) + 1.0f);
    big = x < 0.0f ? -big : big;
    float t = a < 0.625f ? near0 : big;
    return x != x || x == 0.0f ? x : t; // (x = -0 gives -0)
}
// sigmoid x = 1 / (1 + e^-x), as e^x / (1 + e^x) below 0 (so tiny results keep their digits).
static inline float hd_sigmoid_f32(float x) {
    float e = hd_exp_f32(x < 0.0f ? x : -x);
    float s = (x < 0.0f ? e : 1.0f) / (1.0f + e);
    return x != x ? x : s;
}
// bf16 and f16, the half storage formats: conversions from f32 round to nearest, ties to even
// (overflow to infinity, NaN stays a quiet NaN of the same sign); to f32 they are exact.
static inline float hd_bf16_to_f32(unsigned short h) {
    return hd_f32_from_bits((int)((unsigned)h << 16));
}
static inline unsigned short hd_f32_to_bf16(float x) {
    unsigned u = (unsigned)hd_f32_bits(x);
    unsigned rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return (unsigned short)((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : rounded);
}
static inline float hd_f16_to_f32(unsigned short h) {
    unsigned sign = ((unsigned)h & 0x8000u) << 16, e = ((unsigned)h >> 10) & 0x1fu,
             m = (unsigned)h & 0x3ffu;
    // Subnormal: m units of 2^-24, exact in f32.
    float sub = (float)m * 5.9604644775390625e-8f;
    unsigned bits = e == 0u    ? (unsigned)hd_f32_bits(sub)
                    : e == 31u ? 0x7f800000u | (m << 13)
                               : ((e + 112u) << 23) | (m << 13);
    return hd_f32_from_bits((int)(sign | bits));
}
static inline unsigned short hd_f32_to_f16(float x) {
    unsigned u = (unsigned)hd_f32_bits(x);
    unsigned sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    // Below 2^-14 the result is subnormal: adding 0.5 (whose ulp is 2^-24, the f16 subnormal
    // unit) rounds |x| to a multiple of 2^-24 in the float unit, ties to even.
    float scaled = hd_f32_from_bits((int)a) + 0.5f;
    unsigned sub = (unsigned)hd_f32_bits(scaled) - 0x3f000000u;
    // Otherwise rebias the exponent and round the 13 dropped bits to nearest even.
    unsigned normal = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
    unsigned h = a > 0x7f800000u    ? 0x7e00u
                 : a >= 0x477ff000u ? 0x7c00u
                 : a < 0x38800000u  ? sub
                                    : normal;
    return (unsigned short)(sign | h);
}
static inline float hd_round_bf16(float x) {
    return hd_bf16_to_f32(hd_f32_to_bf16(x));
}
static inline float hd_round_f16(float x) {
    return hd_f16_to_f32(hd_f32_to_f16(x));
}
