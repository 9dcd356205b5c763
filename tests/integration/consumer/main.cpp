// A program outside the hedra tree: includes <hedra/hedra.hpp> and nn's headers from the install
// tree, and uses a compiled program's memory plan, take with its gradient and a GPT's cached
// generation.
#include <hedra/hedra.hpp>
#include <hedra/nn/gpt_generator.hpp>

#include <cstdio>

int main() {
    using namespace hedra;
    Array a = array(std::vector<float>{1, 2, 3, 4}, Shape::of({2, 2}));
    HostArray s = compute(sum(a * a));
    std::printf("sum of squares = %g\n", s.flat(0));
    // Rows 1, 0, 1 of a; the gradient of their sum counts the picks of each row: (1, 2).
    Array ids = array(std::vector<std::int32_t>{1, 0, 1}, Shape::of({3}));
    Array x = placeholder(Shape::of({2, 2}), DType::F32, "x");
    CompiledProgram p = compile({grad(sum(take(x, ids)), x)}, {x});
    HostArray g = p({compute(a)})[0];
    std::printf("picks per row = %g %g; %s\n", g.flat(0), g.flat(2),
                p.memory() ? p.memory()->to_string().c_str() : "no memory plan");
    nn::GptConfig config{.vocab = 5, .block = 4, .layers = 1, .heads = 1, .embd = 4, .bias = true};
    nn::GptGenerator generator(config, nn::gpt_init(config, 1));
    std::vector<std::int64_t> tokens = generator.generate({{2}}, 3)[0];
    std::printf("generated %zu tokens\n", tokens.size());
    return s.flat(0) == 30.0 && g.flat(0) == 1 && g.flat(2) == 2 && tokens.size() == 3 ? 0 : 1;
}
