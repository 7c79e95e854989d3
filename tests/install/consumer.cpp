// A C++ program built against an installed capstan only, through CMake's
// find_package(capstan) (tests/install/run.sh). Makes one real tool call.
// Usage: consumer EXPECTED_VERSION
#include <capstan.h>

#include <cstdio>
#include <memory>
#include <string>

namespace {

struct RegistryDeleter {
    void operator()(capstan_registry *reg) const { capstan_registry_free(reg); }
};
struct TextDeleter {
    void operator()(char *text) const { capstan_string_free(text); }
};

void add(void *, capstan_call *call) {
    size_t len;
    std::string args = capstan_call_arguments(call, &len);
    int a = 0, b = 0;
    if (std::sscanf(args.c_str(), "{\"a\":%d,\"b\":%d}", &a, &b) != 2) {
        capstan_call_fail(call, "unexpected arguments", CAPSTAN_NTS);
        return;
    }
    std::string out = std::to_string(a + b);
    capstan_call_return(call, CAPSTAN_CONTENT_JSON, out.c_str(), out.size());
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s EXPECTED_VERSION\n", argv[0]);
        return 2;
    }
    if (std::string(capstan_version_string()) != argv[1]) {
        std::fprintf(stderr, "capstan_version_string() is %s, Cargo.toml says %s\n", capstan_version_string(), argv[1]);
        return 1;
    }
    capstan_registry *raw = nullptr;
    if (capstan_registry_new(nullptr, &raw) != CAPSTAN_OK) {
        std::fprintf(stderr, "capstan_registry_new failed\n");
        return 1;
    }
    std::unique_ptr<capstan_registry, RegistryDeleter> reg(raw);
    capstan_tool_def def{};
    def.struct_size = sizeof def;
    def.name = "add";
    def.description = "Add two integers.";
    def.parameters = R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]})";
    def.callback = add;
    def.timeout_ms = 10000;
    if (capstan_registry_add_tool(reg.get(), &def) != CAPSTAN_OK) {
        char msg[256];
        capstan_error_message(msg, sizeof msg);
        std::fprintf(stderr, "capstan_registry_add_tool: %s\n", msg);
        return 1;
    }
    const char *calls = R"([{"id":"1","name":"add","arguments":{"a":2,"b":3}}])";
    char *out = nullptr;
    size_t n = 0;
    int status = capstan_registry_execute(reg.get(), calls, CAPSTAN_NTS, nullptr, &out, &n);
    std::unique_ptr<char, TextDeleter> results(out);
    std::string text = results ? std::string(results.get(), n) : std::string();
    std::printf("capstan %s (C++): %s\n", capstan_version_string(), text.c_str());
    bool ok = status == CAPSTAN_OK && text.find(R"("content":"5")") != std::string::npos &&
              text.find(R"("outcome":"ok")") != std::string::npos;
    return ok ? 0 : 1;
}
