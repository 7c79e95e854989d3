// The wrapper in a build without exceptions (-fno-exceptions, as many game
// engines are built): only the try_ API exists, errors come back as
// capstan::Expected, and tools fail through Output::error.
#include <mutex>
#include <thread>

#include "check.hpp"

#if CAPSTAN_HPP_EXCEPTIONS
#error "test_no_exceptions must be built with -fno-exceptions"
#endif

using capstan::Expected;
using capstan::Outcome;
using capstan::Output;
using capstan::Registry;

static void errors_come_back_as_expected_values() {
    Expected<Registry> created = Registry::create();
    CHECK(created.has_value());
    Registry reg = std::move(*created);
    Expected<void> bad = reg.try_add({"bad name!", "", ""}, [](std::string_view) { return ""; });
    CHECK(!bad && bad.error().status() == CAPSTAN_ERR_INVALID_NAME && std::string(bad.error().what()).size() > 0);
    Expected<std::string> parsed = capstan::try_parse_calls(capstan::Format::openai_chat, "{");
    CHECK(!parsed && parsed.error().status() == CAPSTAN_ERR_INVALID_RESPONSE);
    Expected<std::vector<capstan::Result>> malformed = reg.try_execute("[");
    CHECK(!malformed && malformed.error().status() == CAPSTAN_ERR_INVALID_CALLS);
}

static void tools_answer_and_fail_without_exceptions() {
    Registry reg = std::move(*Registry::create());
    CHECK(reg.try_add({"ok", "", ""}, [](std::string_view args) { return Output::json(std::string(args)); }).has_value());
    CHECK(reg.try_add({"no", "", ""}, [](std::string_view) { return Output::error("not today"); }).has_value());
    std::mutex m;  // held while the thread is stored: join only sees it whole
    std::thread worker;
    CHECK(reg.try_add({"later", "", ""}, [&](capstan::Call c) {
                 std::lock_guard<std::mutex> lock(m);
                 worker = std::thread([c = std::move(c)]() mutable { (void)c.return_text("later"); });
             }).has_value());
    Expected<std::vector<capstan::Result>> r = reg.try_execute(
        R"([{"id":"1","name":"ok","arguments":{"x":1}},{"id":"2","name":"no"},{"id":"3","name":"later"}])");
    {
        std::lock_guard<std::mutex> lock(m);
        worker.join();
    }
    CHECK(r.has_value() && r->size() == 3);
    if (r && r->size() == 3) {
        CHECK((*r)[0].outcome == Outcome::ok && (*r)[0].content == R"({"x":1})");
        CHECK((*r)[1].outcome == Outcome::tool_error && (*r)[1].content == "not today");
        CHECK((*r)[2].outcome == Outcome::ok && (*r)[2].content == "later");
    }
    Expected<std::string> tools = reg.try_tools_json(capstan::Format::anthropic);
    CHECK(tools.has_value() && check::contains(*tools, R"("name":"later")"));
}

// Asking for input without exceptions: Call::require_input's refusal is an
// Expected (the call left open), Output::input_required ends the call with
// capstan's reason.
static void a_tool_asks_for_input_without_exceptions() {
    Registry reg = std::move(*Registry::create());
    const char *ask = R"({"k":{"method":"roots/list"}})";
    CHECK(reg.try_add({"asks", "", ""}, [ask](capstan::Call &c) {
                 Expected<void> asked = c.require_input(ask, "s");
                 bool refused = !asked && asked.error().status() == CAPSTAN_ERR_UNSUPPORTED && c.open();
                 (void)c.return_text(refused ? std::string("refused: ") + std::string(c.input()) : "asked");
             }).has_value());
    CHECK(reg.try_add({"returns", "", ""}, [ask](std::string_view) { return Output::input_required(ask); }).has_value());
    Expected<std::vector<capstan::Result>> r =
        reg.try_execute(R"([{"id":"1","name":"asks"},{"id":"2","name":"returns"}])");
    CHECK(r.has_value() && r->size() == 2);
    if (r && r->size() == 2) {
        CHECK((*r)[0].outcome == Outcome::ok && (*r)[0].content == R"(refused: {"canAsk":[]})");
        CHECK((*r)[1].outcome == Outcome::tool_error && check::contains((*r)[1].content, "the tool asked for input: "));
    }
}

int main() {
    check::watchdog(120);
    errors_come_back_as_expected_values();
    tools_answer_and_fail_without_exceptions();
    a_tool_asks_for_input_without_exceptions();
    return check::report("test_no_exceptions");
}
