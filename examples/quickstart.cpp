// quickstart: a matmul and a Jacobi sweep written with hedra's three operations
// (lazy maps, reshapes, reductions), computed once and checked against plain loops.
#include "hedra.hpp"

#include <cmath>
#include <cstdio>

using namespace hedra;

int main() {
    // C = A · B as a contraction: no kernel written, no BLAS called.
    const int m = 3, k = 4, n = 2;
    std::vector<float> a(m * k), b(k * n);
    for (int i = 0; i < m * k; ++i) a[i] = 0.5f * static_cast<float>(i);
    for (int i = 0; i < k * n; ++i) b[i] = static_cast<float>(i % 3) - 1.0f;
    Array A = array(a, Shape::of({m, k})), B = array(b, Shape::of({k, n}));
    Array C = matmul(A, B);

    // One Jacobi sweep on a 6x6 grid: the interior [1,5)^2 is the mean of its four neighbours;
    // overwrite keeps the boundary.
    const int g = 6;
    std::vector<float> u0(g * g);
    for (int i = 0; i < g * g; ++i) u0[i] = static_cast<float>((i * 7) % 5);
    Array u = array(u0, Shape::of({g, g}));
    Shape interior{range(1, g - 1), range(1, g - 1)};
    auto shifted = [&](std::int64_t di, std::int64_t dj) {
        // interior index (i, j) reads u[i + di, j + dj]
        return view(u, interior, AffineMap(2, 2, {1, 0, 0, 1}, {di, dj}));
    };
    Array mean4 = lazy([](auto n, auto s, auto w, auto e) { return 0.25f * (n + s + w + e); },
                       shifted(-1, 0), shifted(1, 0), shifted(0, -1), shifted(0, 1));
    Array u1 = overwrite({u, mean4});

    auto results = compute(C, u1);
    std::printf("C = A·B on backend '%s':\n", default_backend_name().c_str());
    int errors = 0;
    for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
            float want = 0;
            for (int p = 0; p < k; ++p) want += a[i * k + p] * b[p * n + j];
            double got = results[0].at({i, j});
            errors += std::fabs(got - want) > 1e-4;
            std::printf(" %8.3f", got);
        }
        std::printf("\n");
    }
    std::printf("Jacobi sweep, row 2: ");
    for (int j = 0; j < g; ++j) {
        float want = u0[2 * g + j];
        if (j > 0 && j < g - 1)
            want = 0.25f * (u0[1 * g + j] + u0[3 * g + j] + u0[2 * g + j - 1] + u0[2 * g + j + 1]);
        double got = results[1].at({2, j});
        errors += std::fabs(got - want) > 1e-5;
        std::printf("%.3f ", got);
    }
    std::printf("\n%s\n", errors ? "MISMATCH against plain loops" : "matches plain loops");
    return errors ? 1 : 0;
}
