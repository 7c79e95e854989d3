// capstan_json.hpp, the nlohmann::json adapter, against the real library:
// typed tools take a struct through from_json and return one through
// to_json; the raw-string API keeps working beside them.
#include <stdexcept>
#include <string>

#include "capstan_json.hpp"
#include "check.hpp"

using capstan::Call;
using capstan::Outcome;
using capstan::Output;
using capstan::Registry;
using nlohmann::json;

// Not in an anonymous namespace: clang warns that the to_json/from_json the
// macros define there are unused when only one of them is.
namespace types {

struct Add {
    int a = 0;
    int b = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Add, a, b)

struct Sum {
    int sum = 0;
    std::string note;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Sum, sum, note)

// No default constructor: read through an adl_serializer.
struct City {
    explicit City(std::string n) : name(std::move(n)) {}
    std::string name;
};

}  // namespace types

using types::Add;
using types::City;
using types::Sum;

namespace {

const json ADD_SCHEMA = {
    {"type", "object"},
    {"properties", {{"a", {{"type", "integer"}}}, {"b", {{"type", "integer"}, {"default", 10}}}}},
    {"required", {"a"}}};

std::string call(const char *id, const char *name, const char *args = "{}") {
    return std::string(R"({"id":")") + id + R"(","name":")" + name + R"(","arguments":)" + args + "}";
}

}  // namespace

namespace nlohmann {
template <>
struct adl_serializer<City> {
    static City from_json(const json &j) { return City(j.at("city").get<std::string>()); }
};
}  // namespace nlohmann

static void typed_tools_read_a_struct_and_return_one() {
    Registry reg;
    reg.add(capstan::json::tool("add", "Add two integers.", ADD_SCHEMA),
            capstan::json::typed([](const Add &x) { return Sum{x.a + x.b, "ok"}; }));
    auto r = reg.execute(call("1", "add", R"({"a":2,"b":3})"));
    CHECK(r.at(0).outcome == Outcome::ok);
    CHECK(json::parse(r.at(0).content) == json({{"sum", 5}, {"note", "ok"}}));
    // The schema's default reaches the struct (capstan fills it in first).
    auto d = reg.execute(call("2", "add", R"({"a":1})"));
    CHECK(json::parse(d.at(0).content).at("sum") == 11);
    // Arguments that fail the schema never reach the tool.
    CHECK(reg.execute(call("3", "add", R"({"a":"x"})")).at(0).outcome == Outcome::invalid_arguments);
    // The schema given as nlohmann::json is what the model sees.
    CHECK_CONTAINS(reg.tools_json(capstan::Format::openai_chat), R"("default":10)");
}

static void arguments_that_do_not_fit_the_struct_are_a_tool_error() {
    Registry reg;
    // The schema lets "b" be a string; the struct wants an int.
    reg.add({"loose", "", R"({"type":"object","properties":{"a":{"type":"integer"},"b":{}},"required":["a"]})"},
            capstan::json::typed<Add>([](const Add &x) { return x.a; }));
    auto r = reg.execute(call("1", "loose", R"({"a":1,"b":"two"})"));
    CHECK(r.at(0).outcome == Outcome::tool_error);
    CHECK_CONTAINS(r.at(0).content, "the arguments do not fit the tool's C++ type");
    CHECK_CONTAINS(r.at(0).content, "type_error");
}

static void results_may_be_json_output_or_plain_values() {
    Registry reg;
    reg.add({"j", "", ""}, capstan::json::typed<json>([](const json &) { return json{{"k", {1, 2}}}; }));
    reg.add({"out", "", ""}, capstan::json::typed<json>([](const json &) { return Output::text("plain text"); }));
    reg.add({"str", "", ""}, capstan::json::typed<json>([](const json &) { return std::string("a \"string\""); }));
    reg.add({"parts", "", ""}, capstan::json::typed<json>([](const json &) {
                return Output::parts(json::array({{{"type", "text"}, {"text", "part one"}}}).dump());
            }));
    auto r = reg.execute("[" + call("1", "j") + "," + call("2", "out") + "," + call("3", "str") + "," +
                         call("4", "parts") + "]");
    CHECK(r.at(0).content == R"({"k":[1,2]})");
    CHECK(r.at(1).content == "plain text");
    CHECK(r.at(2).content == "a \"string\"");  // a JSON string renders as its text
    CHECK(r.at(3).outcome == Outcome::ok && r.at(3).content == "part one");
}

static void a_typed_tool_may_read_its_call() {
    Registry reg;
    reg.add({"who", "", ""}, capstan::json::typed([](const json &, const Call &c) {
                return json{{"id", std::string(c.id())}, {"tool", std::string(c.tool())}, {"cancelled", c.cancelled()}};
            }));
    auto r = reg.execute(call("call_7", "who"));
    CHECK(json::parse(r.at(0).content) == json({{"id", "call_7"}, {"tool", "who"}, {"cancelled", false}}));
}

// A typed tool reads its input and asks for more by throwing
// capstan::json::input_required; a plain execute cannot answer, so the call
// is a tool error saying why.
static void a_typed_tool_reads_its_input_and_asks_for_more() {
    Registry reg;
    std::string can_ask = "unset";
    reg.add({"asks", "", ""}, capstan::json::typed([&can_ask](const json &, const Call &c) -> json {
                json in = capstan::json::input(c);
                can_ask = in.at("canAsk").dump();
                if (!in.contains("inputResponses"))
                    throw capstan::json::input_required({{"where", {{"method", "roots/list"}}}}, "asked");
                return in["inputResponses"];
            }));
    auto r = reg.execute(call("1", "asks"));
    CHECK(can_ask == "[]");
    CHECK(r.at(0).outcome == Outcome::tool_error);
    CHECK_CONTAINS(r.at(0).content, "the tool asked for input: ");
    CHECK_CONTAINS(r.at(0).content, "roots/list");
}

static void args_without_default_constructor_and_function_pointers() {
    Registry reg;
    reg.add({"city", "", R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})"},
            capstan::json::typed<City>([](const City &c) { return "weather in " + c.name; }));
    CHECK(reg.execute(call("1", "city", R"({"city":"Oslo"})")).at(0).content == "weather in Oslo");
    Sum (*fn)(const Add &) = [](const Add &x) { return Sum{x.a * x.b, "times"}; };
    reg.add(capstan::json::tool("mul", "", ADD_SCHEMA), capstan::json::typed(fn));
    CHECK(json::parse(reg.execute(call("2", "mul", R"({"a":3,"b":4})")).at(0).content).at("sum") == 12);
}

static void exceptions_and_bad_utf8_become_tool_errors() {
    Registry reg;
    reg.add({"boom", "", ""}, capstan::json::typed<json>([](const json &) -> json { throw std::runtime_error("no disk"); }));
    reg.add({"bytes", "", ""}, capstan::json::typed<json>([](const json &) { return json(std::string("\xff\xfe")); }));
    auto r = reg.execute("[" + call("1", "boom") + "," + call("2", "bytes") + "]");
    CHECK(r.at(0).outcome == Outcome::tool_error);
    CHECK_CONTAINS(r.at(0).content, "the tool threw: no disk");
    CHECK(r.at(1).outcome == Outcome::tool_error);
    CHECK_CONTAINS(r.at(1).content, "UTF-8");
}

static void the_raw_string_api_works_beside_typed_tools() {
    Registry reg;
    reg.add({"raw", "", ""}, [](std::string_view args) { return Output::json(std::string(args)); });
    reg.add(capstan::json::tool("add", "", ADD_SCHEMA), capstan::json::typed([](const Add &x) { return x.a + x.b; }));
    auto r = reg.execute("[" + call("1", "raw", R"({"x":1})") + "," + call("2", "add", R"({"a":1,"b":2})") + "]");
    CHECK(r.at(0).content == R"({"x":1})" && r.at(1).content == "3");
}

int main() {
    check::watchdog(120);
    typed_tools_read_a_struct_and_return_one();
    arguments_that_do_not_fit_the_struct_are_a_tool_error();
    results_may_be_json_output_or_plain_values();
    a_typed_tool_may_read_its_call();
    a_typed_tool_reads_its_input_and_asks_for_more();
    args_without_default_constructor_and_function_pointers();
    exceptions_and_bad_utf8_become_tool_errors();
    the_raw_string_api_works_beside_typed_tools();
    return check::report("test_json");
}
