// The C++ guide's program (docs/cpp.md), built and run by `make cpp-examples`:
// one agent turn on an OpenAI Chat Completions response, with a typed tool.
#include <chrono>
#include <cstdio>
#include <string>

#include "capstan.hpp"
#include "capstan_json.hpp"  // optional: typed tools through nlohmann::json

struct Add {
    int a = 0;
    int b = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Add, a, b)

int main() {
    using namespace std::chrono_literals;
    capstan::Registry reg;
    capstan::Tool add = capstan::json::tool("add", "Add two integers.",
                                            {{"type", "object"},
                                             {"properties", {{"a", {{"type", "integer"}}}, {"b", {{"type", "integer"}}}}},
                                             {"required", {"a", "b"}}});
    add.timeout = 5s;
    reg.add(add, capstan::json::typed([](const Add &x) { return nlohmann::json{{"sum", x.a + x.b}}; }));

    // Send reg.tools_json(capstan::Format::openai_chat) as the request's "tools";
    // the model answers with two calls, the second with a bad argument:
    const char *response = R"({"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4.1",
      "choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
        "tool_calls":[
          {"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":3}"}},
          {"id":"call_2","type":"function","function":{"name":"add","arguments":"{\"a\":\"x\"}"}}]}}]})";
    capstan::ExecOptions opts;
    opts.deadline = 30s;  // every call has its result by then, whatever it waits for
    std::string messages = reg.run_turn(capstan::Format::openai_chat, response, opts);
    std::printf("%s\n", messages.c_str());  // append to the request's "messages" and ask again

    nlohmann::json out = nlohmann::json::parse(messages);
    return out.at(0).at("content") == R"({"sum":5})" && out.at(1).at("tool_call_id") == "call_2" ? 0 : 1;
}
