// capstan.hpp's std::chrono durations, typed flags, and what capstan 0.4
// added (content parts, history check/repair, tool search with deferred
// tools, batch deadlines, check_call), against the real library: one
// function per rule, named after the rule.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>
#include <type_traits>
#include <utility>

#include "check.hpp"

using namespace std::chrono_literals;
using capstan::Call;
using capstan::ExecFlag;
using capstan::Flags;
using capstan::Format;
using capstan::Outcome;
using capstan::Output;
using capstan::Registry;
using capstan::ToolFlag;

static std::string call(const char *id, const char *name, const char *args = "{}") {
    return std::string(R"({"id":")") + id + R"(","name":")" + name + R"(","arguments":)" + args + "}";
}

// ---- typed flags -----------------------------------------------------------

template <class A, class B, class = void>
struct can_or : std::false_type {};
template <class A, class B>
struct can_or<A, B, std::void_t<decltype(std::declval<A>() | std::declval<B>())>> : std::true_type {};

static void flags_are_typed_and_combine_with_or() {
    static_assert(static_cast<std::uint32_t>(ToolFlag::deferred) == CAPSTAN_TOOL_DEFERRED);
    static_assert(static_cast<std::uint32_t>(ToolFlag::wait_for_response) == CAPSTAN_TOOL_WAIT_FOR_RESPONSE);
    static_assert(static_cast<std::uint32_t>(ExecFlag::early_dispatch) == CAPSTAN_EXEC_EARLY_DISPATCH);
    static_assert(static_cast<std::uint32_t>(capstan::HistoryFlag::repair) == CAPSTAN_HISTORY_REPAIR);
    static_assert(static_cast<std::uint32_t>(capstan::SearchFlag::regex) == CAPSTAN_SEARCH_REGEX);
    static_assert(static_cast<std::uint32_t>(capstan::RegistryFlag::strict_defaults) == CAPSTAN_REGISTRY_STRICT_DEFAULTS);
    constexpr Flags<ToolFlag> f = ToolFlag::serial | ToolFlag::main_thread;
    static_assert(f.bits() == (CAPSTAN_TOOL_SERIAL | CAPSTAN_TOOL_MAIN_THREAD));
    static_assert(f.has(ToolFlag::serial) && !f.has(ToolFlag::deferred));
    // A flag of another kind does not combine or convert.
    static_assert(can_or<ToolFlag, ToolFlag>::value && can_or<Flags<ExecFlag>, ExecFlag>::value);
    static_assert(!can_or<ToolFlag, ExecFlag>::value && !can_or<Flags<ToolFlag>, ExecFlag>::value);
    static_assert(!std::is_convertible_v<ExecFlag, Flags<ToolFlag>>);
    static_assert(!std::is_convertible_v<ToolFlag, std::uint32_t>);
    // The older raw constants still convert (deprecated, kept building).
    static_assert(Flags<ToolFlag>(capstan::tool_flag::serial).has(ToolFlag::serial));
    capstan::Tool t{"raw", "", "", 0, 0, capstan::tool_flag::requires_approval};
    CHECK(t.flags.has(ToolFlag::requires_approval));

    // Bits capstan does not know are refused as in C.
    Registry reg;
    auto bad = reg.try_add({"t", "", "", 0, 0, Flags<ToolFlag>(1u << 30)}, [](std::string_view) { return ""; });
    CHECK(!bad && bad.error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
    // A typed exec flag reaches capstan: sequential runs calls in order.
    std::atomic<int> running{0}, overlapped{0};
    reg.add({"s", "", ""}, [&](std::string_view) {
        if (running.fetch_add(1) != 0) overlapped++;
        check::sleep_ms(2);
        running--;
        return "";
    });
    capstan::ExecOptions o;
    o.flags = ExecFlag::sequential;
    auto r = reg.execute("[" + call("1", "s") + "," + call("2", "s") + "," + call("3", "s") + "]", o);
    CHECK(r.size() == 3 && overlapped == 0);
}

// ---- std::chrono -----------------------------------------------------------

static void durations_round_up_to_whole_milliseconds_and_cap() {
    using capstan::detail::ms_up;
    CHECK(ms_up(0ms, UINT32_MAX) == 0);
    CHECK(ms_up(-5ms, UINT32_MAX) == 0);
    CHECK(ms_up(1us, UINT32_MAX) == 1);  // never 0, which would mean "none"
    CHECK(ms_up(1500us, UINT32_MAX) == 2);
    CHECK(ms_up(2s, UINT32_MAX) == 2000);
    CHECK(ms_up(std::chrono::duration<double>(0.0015), UINT32_MAX) == 2);
    CHECK(ms_up(std::chrono::hours(24 * 365), UINT32_MAX) == UINT32_MAX);
    CHECK(ms_up(std::chrono::nanoseconds::max(), UINT32_MAX - 1) == UINT32_MAX - 1);
}

static void a_chrono_timeout_ends_a_stuck_call() {
    Registry reg;
    auto stuck = [](Call c) {
        while (!c.cancelled()) check::sleep_ms(1);
        (void)c.return_text("late");
    };
    capstan::Tool t{"stuck", "", ""};
    t.timeout = 20ms;
    reg.add(t, stuck);
    auto r = reg.execute(call("1", "stuck"));
    CHECK(r.at(0).outcome == Outcome::timeout);
    // ExecOptions::timeout overrides a tool without one.
    reg.add({"stuck2", "", ""}, stuck);
    capstan::ExecOptions o;
    o.timeout = 20ms;
    CHECK(reg.execute(call("2", "stuck2"), o).at(0).outcome == Outcome::timeout);
}

static void negative_durations_are_refused_and_the_callable_destroyed() {
    Registry reg;
    std::atomic<int> live{0}, twice{0};
    {
        capstan::Tool t{"neg", "", ""};
        t.timeout = -1ms;
        auto added = reg.try_add(t, [p = check::Probe(live, twice)](std::string_view) { return ""; });
        CHECK(!added && added.error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(added.error().what(), "Tool::timeout");
    }
    CHECK(live == 0 && twice == 0);
    reg.add({"echo", "", ""}, [](std::string_view a) { return std::string(a); });
    capstan::ExecOptions o;
    o.deadline = -1s;
    auto r = reg.try_execute(call("1", "echo"), o);
    CHECK(!r && r.error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(r.error().what(), "deadline");
    capstan::RuntimeOptions ro;
    ro.keep_alive = -1s;
    CHECK(capstan::try_configure_runtime(ro).error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
}

static void batch_wait_pump_and_close_take_durations() {
    Registry reg;
    std::atomic<bool> release{false};
    reg.add({"gate", "", ""}, [&](Call c) {
        while (!release) check::sleep_ms(1);
        (void)c.return_text("open");
    });
    capstan::Batch b = reg.submit_polled(call("1", "gate"));
    CHECK(!b.wait(1ms));  // not done: a finite wait returns
    release = true;
    CHECK(b.wait(10s));
    CHECK(b.poll().at(0).content == "open");
    CHECK(reg.pump(1ms) == 0);  // nothing queued for the main thread
    CHECK(reg.close(5s));
}

// ---- deadline ----------------------------------------------------------------

static void a_deadline_ends_a_call_waiting_for_a_pump() {
    Registry reg;
    reg.add({"on_main", "", "", 0, 0, ToolFlag::main_thread}, [](std::string_view) { return "ran"; });
    capstan::ExecOptions o;
    o.deadline = 50ms;
    // This thread never pumps this registry: the call waits for a pump.
    auto r = reg.execute(call("1", "on_main"), o);
    CHECK(r.at(0).outcome == Outcome::timeout);
    CHECK_CONTAINS(r.at(0).content, "capstan_registry_pump");
}

// ---- content parts -------------------------------------------------------------

static const char *PNG_PARTS =
    R"([{"type":"text","text":"a chart"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}])";

static void tools_return_content_parts_rendered_per_provider() {
    Registry reg;
    reg.add({"chart", "", ""}, [](std::string_view) { return Output::parts(PNG_PARTS); });
    auto r = reg.execute(call("c1", "chart"));
    CHECK(r.at(0).outcome == Outcome::ok);
    CHECK(r.at(0).content == "a chart\n[image: image/png, 8 bytes]");
    std::string results = reg.execute_json(call("c1", "chart"));
    CHECK_CONTAINS(results, R"("parts":)");
    std::string anthropic = capstan::format_results(Format::anthropic, results);
    CHECK_CONTAINS(anthropic, R"("type":"image")");
    CHECK_CONTAINS(anthropic, R"("data":"iVBORw0KGgo=")");
    std::string responses = capstan::format_results(Format::openai_responses, results);
    CHECK_CONTAINS(responses, "data:image/png;base64,iVBORw0KGgo=");
}

static void bad_parts_fail_the_call_and_return_invalid_content() {
    Registry reg;
    std::atomic<int> status{-1};
    reg.add({"bad", "", ""}, [&](Call c) {
        auto done = c.return_parts(R"([{"type":"image","data":"not base64!","mimeType":"image/png"}])");
        status = done ? CAPSTAN_OK : done.error().status();
    });
    auto r = reg.execute(call("1", "bad"));
    CHECK(r.at(0).outcome == Outcome::tool_error);
    CHECK(check::wait_until([&] { return status != -1; }));  // stored after the completion execute waited for
    CHECK(status == CAPSTAN_ERR_INVALID_CONTENT);
    CHECK_CONTAINS(r.at(0).content, "base64");
    // RegistryOptions::max_result_bytes bounds the decoded data.
    capstan::RegistryOptions opts;
    opts.max_result_bytes = 4;
    Registry small(opts);
    small.add({"chart", "", ""}, [](std::string_view) { return Output::parts(PNG_PARTS); });
    auto s = small.execute(call("2", "chart"));
    CHECK(s.at(0).outcome == Outcome::tool_error);
}

// ---- history check and repair ------------------------------------------------

static void history_check_finds_and_repairs_a_missing_result() {
    const char *history = R"([{"role":"user","content":"add"},
        {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"{}"}}]}])";
    capstan::HistoryCheck checked = capstan::check_history(Format::openai_chat, history);
    CHECK(!checked.ok && !checked.repaired);
    CHECK_CONTAINS(checked.report, R"("kind":"missing_result")");
    capstan::HistoryCheck fixed = capstan::check_history(Format::openai_chat, history, capstan::HistoryFlag::repair);
    CHECK(fixed.repaired.has_value());
    CHECK_CONTAINS(fixed.repaired.value_or(""), R"("tool_call_id":"c1")");
    CHECK(capstan::check_history(Format::openai_chat, fixed.repaired.value_or("")).ok);
    CHECK_THROWS_STATUS(capstan::check_history(Format::mcp, "[]"), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_THROWS_STATUS(capstan::check_history(Format::openai_chat, "{not json"), CAPSTAN_ERR_INVALID_ARGUMENT);
}

// ---- tool search -------------------------------------------------------------

static void search_finds_tools_and_loads_deferred_ones() {
    Registry reg;
    reg.add({"get_weather", "Current weather for a city.", "", 0, 0, ToolFlag::deferred},
            [](std::string_view) { return "sunny"; });
    reg.add({"send_email", "Send an email to someone.", ""}, [](std::string_view) { return "sent"; });
    CHECK_CONTAINS(reg.search_json("weather"), R"("name":"get_weather")");
    capstan::SearchOptions regex;
    regex.flags = capstan::SearchFlag::regex;
    std::string by_regex = reg.search_json("^send_", regex);
    CHECK_CONTAINS(by_regex, R"("mode":"regex")");
    CHECK_CONTAINS(by_regex, R"("name":"send_email")");
    CHECK_THROWS_STATUS(reg.search_json(""), CAPSTAN_ERR_INVALID_ARGUMENT);

    // Deferred: not exported until the search tool finds it.
    CHECK(!check::contains(reg.tools_json(Format::openai_chat), "get_weather"));
    capstan::SearchToolOptions st;
    st.name = "find_tools";
    reg.add_search_tool(st);
    auto r = reg.execute(call("s1", "find_tools", R"({"query":"weather in a city"})"));
    CHECK(r.at(0).outcome == Outcome::ok);
    CHECK_CONTAINS(r.at(0).content, "get_weather");
    CHECK_CONTAINS(reg.tools_json(Format::openai_chat), "get_weather");
    reg.unload_tools();
    CHECK(!check::contains(reg.tools_json(Format::openai_chat), "get_weather"));
    // Callable all along.
    CHECK(reg.execute(call("w", "get_weather")).at(0).content == "sunny");
}

static void check_call_validates_without_running() {
    Registry reg;
    std::atomic<int> ran{0};
    reg.add({"add", "", R"({"type":"object","properties":{"a":{"type":"integer","default":1}}})"},
            [&](std::string_view) { ran++; return ""; });
    capstan::CheckedCall ok = reg.check_call("add", "{}");
    CHECK(ok.outcome == Outcome::ok && ok.text == R"({"a":1})");
    CHECK(reg.check_call("add", R"({"a":"x"})").outcome == Outcome::invalid_arguments);
    CHECK(reg.check_call("nope", "{}").outcome == Outcome::unknown_tool);
    CHECK(ran == 0);
}

// ---- streams -----------------------------------------------------------------

#define CHUNK(s) "data: {\"choices\":[{\"index\":0,\"delta\":" s ",\"finish_reason\":null}]}\n\n"

static void a_stream_passes_text_on_and_runs_calls_as_they_complete() {
    Registry reg;
    reg.add({"add", "", R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}})"},
            [](std::string_view args) {
                int a = 0, b = 0;
                std::sscanf(std::string(args).c_str(), R"({"a":%d,"b":%d})", &a, &b);
                return Output::json(std::to_string(a + b));
            });
    const std::string body =
        CHUNK("{\"content\":\"Adding both.\"}")
        CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
              "\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":2,\"}}]}")
        CHUNK("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"b\\\":3}\"}}]}")
        CHUNK("{\"tool_calls\":[{\"index\":1,\"id\":\"call_2\",\"type\":\"function\","
              "\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":40,\\\"b\\\":2}\"}}]}")
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
        "data: [DONE]\n\n";
    std::mutex m;
    std::string text;
    std::vector<capstan::Result> results;
    capstan::StreamCallbacks cb;
    cb.on_text = [&](std::string_view t) { text += t; };  // the feeding thread
    cb.on_result = [&](const capstan::Result &r) {
        std::lock_guard<std::mutex> lock(m);
        results.push_back(r);
    };
    capstan::ExecOptions o;
    o.flags = ExecFlag::early_dispatch;
    capstan::Stream stream = reg.stream(Format::openai_chat, cb, o);
    for (std::size_t i = 0; i < body.size(); i += 7) stream.feed(std::string_view(body).substr(i, 7));  // split anywhere
    std::string turn = stream.finish();
    CHECK(text == "Adding both.");
    CHECK(results.size() == 2);
    for (const capstan::Result &r : results) CHECK(r.content == (r.index == 0 ? "5" : "42"));
    CHECK_CONTAINS(turn, R"("tool_call_id":"call_1","content":"5")");
    CHECK_CONTAINS(turn, R"("tool_call_id":"call_2","content":"42")");
    CHECK_THROWS_STATUS(stream.finish(), CAPSTAN_ERR_WRONG_CONTEXT);  // once only

    // Errors are sticky and reach finish; a moved-from stream says so.
    capstan::Stream bad = reg.stream(Format::openai_chat);
    CHECK_THROWS_STATUS(bad.feed("data: {not json\n\n"), CAPSTAN_ERR_INVALID_RESPONSE);
    CHECK_THROWS_STATUS(bad.finish(), CAPSTAN_ERR_INVALID_RESPONSE);
    capstan::Stream moved = std::move(bad);
    CHECK(bad.try_feed("x").error().status() == CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_THROWS_STATUS(reg.stream(Format::mcp), CAPSTAN_ERR_INVALID_ARGUMENT);
}

// ExecFlag::whole_turn (CAPSTAN_EXEC_WHOLE_TURN): the array starts with the
// assistant message holding the thinking block and its signature unchanged.
static void whole_turn_starts_with_the_thinking_block() {
    Registry reg;
    reg.add({"add", "Adds one.", R"({"type":"object","properties":{"a":{"type":"integer"}}})"},
            [](std::string_view) { return Output::json("2"); });
    const std::string thinking = R"({"type":"thinking","thinking":"Add one.","signature":"EqQBCkYIBRgCKkD/sig=="})";
    const std::string response = R"({"id":"msg_t","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[)" +
                                 thinking +
                                 R"(,{"type":"tool_use","id":"toolu_1","name":"add","input":{"a":1}}],)"
                                 R"("stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}})";
    capstan::ExecOptions opts;
    opts.flags = ExecFlag::whole_turn;
    const std::string turn = reg.run_turn(Format::anthropic, response, opts);
    const std::size_t assistant = turn.find(R"("role":"assistant")");
    const std::size_t block = turn.find(thinking);
    const std::size_t result = turn.find(R"("tool_result")");
    CHECK(turn.front() == '[');
    CHECK(assistant != std::string::npos && block != std::string::npos && result != std::string::npos);
    CHECK(assistant < block && block < result);
    CHECK(turn.find(R"("tool_result")") > turn.find(R"("role":"user")"));
    // without the flag: the results only, no thinking block
    CHECK(reg.run_turn(Format::anthropic, response).find("thinking") == std::string::npos);
}

// ---- progress, Gemini lowering, runtime shutdown ------------------------------

static capstan_status status_of(const capstan::Expected<void> &e) { return e ? CAPSTAN_OK : e.error().status(); }

static void progress_reaches_the_event_hook_and_bad_reports_are_refused() {
    Registry reg;
    std::mutex mu;
    std::vector<std::string> seen;  // "progress/total/message"
    reg.set_event_hook([&](const capstan::Event &e) {
        if (e.kind != capstan::EventKind::progress) return;
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g/%g/", e.progress, e.total);
        std::lock_guard<std::mutex> lock(mu);
        seen.push_back(buf + std::string(e.message) + "/" + std::string(e.tool));
    });
    std::vector<capstan_status> refused;
    std::size_t seen_after_first = 99;
    std::atomic<bool> tool_done{false};
    reg.add({"steps", "", ""}, [&](Call &c) {
        CHECK(c.progress(1, 4, "one").has_value());
        {
            std::lock_guard<std::mutex> lock(mu);
            seen_after_first = seen.size();  // the hook ran before progress() returned
        }
        refused.push_back(status_of(c.progress(1, 4, "same value")));
        refused.push_back(status_of(c.progress(5, -1)));
        refused.push_back(status_of(c.progress(5, 0, "\xff")));
        CHECK(c.progress(2.5).has_value());
        (void)c.return_text("done");
        refused.push_back(status_of(c.progress(3)));  // completed by this handle
        tool_done = true;  // last: execute may have returned already
    });
    CHECK(reg.execute(call("c1", "steps")).at(0).content == "done");
    CHECK(check::wait_until([&] { return tool_done.load(); }));
    CHECK(seen_after_first == 1);
    CHECK(seen.size() == 2);
    CHECK(seen.size() == 2 && seen[0] == "1/4/one/steps" && seen[1] == "2.5/0//steps");
    CHECK(refused.size() == 4);
    CHECK(refused.size() == 4 && refused[0] == CAPSTAN_ERR_INVALID_ARGUMENT && refused[1] == CAPSTAN_ERR_INVALID_ARGUMENT &&
          refused[2] == CAPSTAN_ERR_INVALID_UTF8 && refused[3] == CAPSTAN_ERR_ALREADY_COMPLETED);
}

static void log_messages_reach_the_event_hook_in_order_and_bad_ones_are_refused() {
    Registry reg;
    std::mutex mu;
    std::vector<std::string> seen;  // "level/message/tool"
    reg.set_event_hook([&](const capstan::Event &e) {
        if (e.kind != capstan::EventKind::log) return;
        std::lock_guard<std::mutex> lock(mu);
        seen.push_back(std::string(capstan::log_level_name(e.level)) + "/" + std::string(e.message) + "/" +
                       std::string(e.tool));
    });
    std::vector<capstan_status> refused;
    std::size_t seen_after_first = 99;
    std::atomic<bool> tool_done{false};
    reg.add({"chatty", "", ""}, [&](Call &c) {
        CHECK(c.log(capstan::LogLevel::info, "starting").has_value());
        {
            std::lock_guard<std::mutex> lock(mu);
            seen_after_first = seen.size();  // the hook ran before log() returned
        }
        refused.push_back(status_of(c.log(static_cast<capstan::LogLevel>(8), "no such level")));
        refused.push_back(status_of(c.log(capstan::LogLevel::info, std::string(64 * 1024 + 1, 'x'))));
        refused.push_back(status_of(c.log(capstan::LogLevel::info, "\xff")));
        CHECK(c.log(capstan::LogLevel::warning, "disk almost full").has_value());
        (void)c.return_text("done");
        refused.push_back(status_of(c.log(capstan::LogLevel::error, "late")));  // completed by this handle
        tool_done = true;  // last: execute may have returned already
    });
    CHECK(reg.execute(call("c1", "chatty")).at(0).content == "done");
    CHECK(check::wait_until([&] { return tool_done.load(); }));
    CHECK(seen_after_first == 1);
    CHECK(seen.size() == 2);
    CHECK(seen.size() == 2 && seen[0] == "info/starting/chatty" && seen[1] == "warning/disk almost full/chatty");
    CHECK(refused.size() == 4);
    CHECK(refused.size() == 4 && refused[0] == CAPSTAN_ERR_INVALID_ARGUMENT && refused[1] == CAPSTAN_ERR_INVALID_ARGUMENT &&
          refused[2] == CAPSTAN_ERR_INVALID_UTF8 && refused[3] == CAPSTAN_ERR_ALREADY_COMPLETED);
    // the MCP names, both ways
    CHECK(std::string(capstan::log_level_name(capstan::LogLevel::emergency)) == "emergency");
    CHECK(std::string(capstan::log_level_name(static_cast<capstan::LogLevel>(8))) == "unknown");
    CHECK(capstan::log_level_from_name("notice") == capstan::LogLevel::notice);
    CHECK(!capstan::log_level_from_name("warn").has_value());
}

static void gemini_lowering_writes_the_openapi_subset() {
    Registry reg;
    reg.add({"t", "", R"({"type":"object","$defs":{"p":{"type":"string","pattern":"^x","const":"xy"}},)"
                      R"("properties":{"v":{"$ref":"#/$defs/p"}},"required":["v"]})"},
            [](std::string_view) { return ""; });
    std::string plain = reg.tools_json(Format::gemini);
    CHECK_CONTAINS(plain, R"("parametersJsonSchema":)");
    capstan::Export low = reg.tools_export(Format::gemini, capstan::ExportFlag::gemini_lower);
    CHECK(low.json.find("parametersJsonSchema") == std::string::npos);
    CHECK(low.json.find("$ref") == std::string::npos && low.json.find("$defs") == std::string::npos);
    CHECK_CONTAINS(low.json, R"("parameters":{"type":"OBJECT")");
    CHECK_CONTAINS(low.json, R"("v":{"type":"STRING","pattern":"^x","enum":["xy"]})");
    CHECK_CONTAINS(low.report, R"("pointer":"/$defs")");
}

static void configure_runtime_caps_the_pool_threads() {
    Registry reg;
    std::atomic<int> running{0}, most{0};
    reg.add({"slow", "", ""}, [&](std::string_view) {
        int n = ++running;
        for (int m = most.load(); n > m && !most.compare_exchange_weak(m, n);) {
        }
        check::sleep_ms(20);
        --running;
        return "ok";
    });
    capstan::RuntimeOptions ro;
    ro.threads = 2;
    ro.keep_alive = 1s;
    capstan::configure_runtime(ro);
    std::string calls = "[";
    for (int i = 0; i < 12; i++) calls += (i ? "," : "") + call(std::to_string(i).c_str(), "slow");
    calls += "]";
    capstan::ExecOptions o;
    o.limit = 8;
    capstan::Batch b = reg.submit_polled(calls, o);
    CHECK(b.wait(30s));  // a timed wait only waits: every call runs on the pool
    std::vector<capstan::Result> results = b.poll();
    CHECK(results.size() == 12);
    for (const capstan::Result &r : results) CHECK(r.outcome == Outcome::ok);
    CHECK(most >= 1 && most <= 2);
    capstan::configure_runtime({});  // the defaults again
}

// Last: it joins capstan's threads (process-wide).
static void runtime_shutdown_joins_the_pool_and_capstan_goes_on_after_it() {
    Registry reg;
    std::atomic<bool> started{false}, release{false};
    reg.add({"held", "", ""}, [&](std::string_view) {
        started = true;
        while (!release) check::sleep_ms(1);
        return "released";
    });
    reg.add({"echo", "", ""}, [](std::string_view a) { return std::string(a); });
    capstan::ExecOptions seq;
    seq.flags = ExecFlag::sequential;
    capstan::Batch held = reg.submit_polled(call("h", "held"), seq);  // runs on a pool thread
    CHECK(check::wait_until([&] { return started.load(); }));
    auto busy = capstan::try_shutdown_runtime(50ms);
    CHECK(!busy && busy.error().status() == CAPSTAN_ERR_TIMEOUT);
    CHECK(!busy && std::strlen(busy.error().what()) > 0);
    release = true;
    CHECK(held.wait(10s));
    CHECK(held.poll().at(0).content == "released");
    CHECK(capstan::try_shutdown_runtime(10s).has_value());
    // the next call starts the threads it needs again
    CHECK(reg.execute(call("1", "echo", R"({"x":1})"), seq).at(0).content == R"({"x":1})");
    capstan::shutdown_runtime();
}

int main() {
    check::watchdog(120);
    flags_are_typed_and_combine_with_or();
    durations_round_up_to_whole_milliseconds_and_cap();
    a_chrono_timeout_ends_a_stuck_call();
    negative_durations_are_refused_and_the_callable_destroyed();
    batch_wait_pump_and_close_take_durations();
    a_deadline_ends_a_call_waiting_for_a_pump();
    tools_return_content_parts_rendered_per_provider();
    bad_parts_fail_the_call_and_return_invalid_content();
    history_check_finds_and_repairs_a_missing_result();
    search_finds_tools_and_loads_deferred_ones();
    check_call_validates_without_running();
    a_stream_passes_text_on_and_runs_calls_as_they_complete();
    whole_turn_starts_with_the_thinking_block();
    progress_reaches_the_event_hook_and_bad_reports_are_refused();
    log_messages_reach_the_event_hook_in_order_and_bad_ones_are_refused();
    gemini_lowering_writes_the_openapi_subset();
    configure_runtime_caps_the_pool_threads();
    runtime_shutdown_joins_the_pool_and_capstan_goes_on_after_it();
    return check::report("test_release");
}
