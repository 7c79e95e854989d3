// The README's C++ program (section "C++"), built and run by `make cpp-examples`.
#include <cstdio>
#include <string>

#include "capstan.hpp"

int main() {
    capstan::Registry reg;
    reg.add({"add", "Add two integers.",
             R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]})"},
            [](std::string_view args) {
                int a = 0, b = 0;
                std::sscanf(std::string(args).c_str(), R"({"a":%d,"b":%d})", &a, &b);  // use a JSON library in real code
                return capstan::Output::json(std::to_string(a + b));
            });
    auto results = reg.execute(R"([{"id":"1","name":"add","arguments":{"a":2,"b":3}},)"
                               R"( {"id":"2","name":"add","arguments":{"a":"x"}}])");
    for (const capstan::Result &r : results)
        std::printf("%s: %s (%s)\n", r.id.c_str(), r.content.c_str(), capstan::outcome_name(r.outcome));
    return results.at(0).content == "5" && results.at(1).outcome == capstan::Outcome::invalid_arguments ? 0 : 1;
}
