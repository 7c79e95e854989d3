// A C++ program on the installed C++ wrapper alone: <capstan.hpp> and
// <capstan_json.hpp> (with nlohmann/json) from the prefix, built through
// pkg-config and through CMake's capstan::cpp / capstan::json targets
// (tests/install/run.sh). Makes one typed tool call.
// Usage: consumer_hpp EXPECTED_VERSION
#include <capstan.hpp>
#include <capstan_json.hpp>

#include <chrono>
#include <cstdio>
#include <string>

namespace app {  // named: clang warns about unused to_json/from_json in an anonymous one

struct Add {
    int a = 0;
    int b = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Add, a, b)

struct Sum {
    int sum = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Sum, sum)

}  // namespace app

using app::Add;
using app::Sum;

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s EXPECTED_VERSION\n", argv[0]);
        return 2;
    }
    if (std::string(capstan::version()) != argv[1]) {
        std::fprintf(stderr, "capstan::version() is %s, Cargo.toml says %s\n", capstan::version(), argv[1]);
        return 1;
    }
    try {
        capstan::Registry reg;
        capstan::Tool tool = capstan::json::tool(
            "add", "Add two integers.",
            {{"type", "object"},
             {"properties", {{"a", {{"type", "integer"}}}, {"b", {{"type", "integer"}}}}},
             {"required", {"a", "b"}}});
        tool.timeout = std::chrono::seconds(10);
        tool.flags = capstan::ToolFlag::serial;
        reg.add(tool, capstan::json::typed([](const Add &x) { return Sum{x.a + x.b}; }));
        capstan::ExecOptions opts;
        opts.deadline = std::chrono::seconds(30);
        std::vector<capstan::Result> results =
            reg.execute(R"([{"id":"1","name":"add","arguments":{"a":2,"b":3}}])", opts);
        std::printf("capstan %s (capstan.hpp): %s\n", capstan::version(), results.at(0).content.c_str());
        return results.at(0).content == R"({"sum":5})" && results.at(0).outcome == capstan::Outcome::ok ? 0 : 1;
    } catch (const capstan::Error &e) {
        std::fprintf(stderr, "capstan::Error %s: %s\n", e.status_name(), e.what());
        return 1;
    }
}
