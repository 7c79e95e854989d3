// The C++ wrapper (bindings/cpp/capstan.hpp) against the real library: one
// function per rule a C++ host relies on, named after the rule.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <type_traits>
#include <vector>

#include "check.hpp"

using capstan::Call;
using capstan::Outcome;
using capstan::Output;
using capstan::Registry;
using capstan::Result;

static const char *SUM_SCHEMA =
    R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]})";

static std::string call(const char *id, const char *name, const char *args = "{}") {
    return std::string(R"({"id":")") + id + R"(","name":")" + name + R"(","arguments":)" + args + "}";
}

static Registry with_echo() {
    Registry reg;
    reg.add({"echo", "Returns its arguments.", ""}, [](std::string_view args) { return std::string(args); });
    return reg;
}

static void handles_are_move_only() {
    static_assert(!std::is_copy_constructible_v<Registry> && std::is_nothrow_move_constructible_v<Registry>);
    static_assert(!std::is_copy_constructible_v<Call> && std::is_nothrow_move_constructible_v<Call>);
    static_assert(!std::is_copy_constructible_v<capstan::Batch> && std::is_nothrow_move_constructible_v<capstan::Batch>);
    static_assert(!std::is_copy_constructible_v<capstan::Approval>);
    Registry a = with_echo();
    Registry b = std::move(a);
    CHECK(a.get() == nullptr && b.get() != nullptr);
    auto r = b.execute(call("1", "echo", R"({"x":1})"));
    CHECK(r.size() == 1 && r[0].content == R"({"x":1})");
    auto moved_from = a.try_add({"t"}, [](std::string_view) { return ""; });
    CHECK(!moved_from && moved_from.error().status() == CAPSTAN_ERR_NULL_PARAMETER);
    a = std::move(b);  // move assignment frees nothing twice (ASan)
    CHECK(a.execute(call("2", "echo")).at(0).outcome == Outcome::ok);
}

static void string_view_tool_results_are_text_or_json() {
    Registry reg;
    reg.add({"sum", "Adds.", SUM_SCHEMA}, [](std::string_view args) {
        int a = 0, b = 0;
        std::sscanf(std::string(args).c_str(), R"({"a":%d,"b":%d})", &a, &b);
        return Output::json(std::to_string(a + b));
    });
    reg.add({"greet", "", ""}, [](std::string_view) { return "hello \"you\""; });
    reg.add({"bad_json", "", ""}, [](std::string_view) { return Output::json("{nope"); });
    reg.add({"refuse", "", ""}, [](std::string_view) { return Output::error("cannot do that"); });
    auto r = reg.execute("[" + call("1", "sum", R"({"a":2,"b":3})") + "," + call("2", "greet") + "," +
                         call("3", "bad_json") + "," + call("4", "refuse") + "]");
    CHECK(r.size() == 4);
    CHECK(r[0].index == 0 && r[0].id == "1" && r[0].name == "sum" && r[0].content == "5" && !r[0].is_error);
    CHECK(r[1].content == "hello \"you\"" && r[1].outcome == Outcome::ok);
    CHECK(r[2].outcome == Outcome::tool_error && r[2].is_error);
    CHECK(r[3].outcome == Outcome::tool_error && r[3].content == "cannot do that");
    std::string json = reg.execute_json(call("5", "sum", R"({"a":1,"b":1})"));
    CHECK_CONTAINS(json, R"("content":"2")");
    CHECK_CONTAINS(json, R"("outcome":"ok")");
}

static void model_errors_are_results_not_exceptions() {
    Registry reg;
    reg.add({"sum", "", SUM_SCHEMA}, [](std::string_view) { return "0"; });
    auto r = reg.execute("[" + call("1", "sum", R"({"a":"x"})") + "," + call("2", "nope") + "]");
    CHECK(r.size() == 2);
    CHECK(r[0].outcome == Outcome::invalid_arguments);
    CHECK(r[1].outcome == Outcome::unknown_tool);
    CHECK_CONTAINS(r[1].content, "sum");
}

static void failures_throw_error_with_status_and_message() {
    Registry reg;
    CHECK_THROWS_STATUS(reg.add({"bad name!", "", ""}, [](std::string_view) { return ""; }), CAPSTAN_ERR_INVALID_NAME);
    CHECK_THROWS_STATUS(reg.add({"t", "", R"({"type":"string"})"}, [](std::string_view) { return ""; }),
                        CAPSTAN_ERR_INVALID_SCHEMA);
    CHECK_THROWS_STATUS(reg.add({std::string("a\0b", 3), "", ""}, [](std::string_view) { return ""; }),
                        CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_THROWS_STATUS(reg.remove("missing"), CAPSTAN_ERR_NOT_FOUND);
    CHECK_THROWS_STATUS(reg.execute("not json"), CAPSTAN_ERR_INVALID_CALLS);
    CHECK_THROWS_STATUS(capstan::parse_calls(capstan::Format::openai_chat, "{"), CAPSTAN_ERR_INVALID_RESPONSE);
    CHECK_THROWS_STATUS(capstan::check_name("with space"), CAPSTAN_ERR_INVALID_NAME);
    try {
        reg.add({"t", "", R"({"type":"object","properties":{"a":{"type":"nope"}}})"}, [](std::string_view) { return ""; });
        CHECK(false);
    } catch (const capstan::Error &e) {
        CHECK(std::string(e.status_name()) == "CAPSTAN_ERR_INVALID_SCHEMA");
        CHECK(std::string(e.what()).size() > 10);  // capstan's message, not just the status
    }
}

static void errors_carry_provider_fields_and_schema_pointers() {
    // Gemini's RESOURCE_EXHAUSTED with its HTTP code and a RetryInfo delay.
    auto parsed = capstan::try_parse_calls(
        capstan::Format::gemini,
        R"({"error":{"code":429,"message":"Quota \u00e9xceeded","status":"RESOURCE_EXHAUSTED",)"
        R"("details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}})");
    CHECK(!parsed && parsed.error().status() == CAPSTAN_ERR_PROVIDER_ERROR);
    if (!parsed) {
        const auto &p = parsed.error().provider();
        CHECK(p.has_value());
        if (p) {
            CHECK(p->message == "Quota \xc3\xa9xceeded");
            CHECK(p->type == std::optional<std::string>("RESOURCE_EXHAUSTED"));
            CHECK(p->http_status == std::optional<int>(429));
            CHECK(p->retry_after == std::optional<std::chrono::milliseconds>(std::chrono::milliseconds(1500)));
        }
        CHECK(!parsed.error().schema_pointer().has_value());
    }
    Registry reg;
    auto added = reg.try_add({"t", "", R"({"type":"object","properties":{"a":{"type":"nope"}}})"},
                             [](std::string_view) { return ""; });
    CHECK(!added && added.error().status() == CAPSTAN_ERR_INVALID_SCHEMA);
    if (!added) {
        CHECK(!added.error().provider().has_value());
        const auto &ptr = added.error().schema_pointer();
        CHECK(ptr.has_value() && ptr->rfind("/properties/a", 0) == 0);
    }
    // A success clears nothing of an Error already made: it owns its fields.
    auto ok = capstan::try_parse_calls(capstan::Format::gemini, R"({"candidates":[]})");
    CHECK(ok.has_value());
}

static void try_functions_return_errors_instead_of_throwing() {
    Registry reg;
    capstan::Expected<void> added = reg.try_add({"bad name!", "", ""}, [](std::string_view) { return ""; });
    CHECK(!added && added.error().status() == CAPSTAN_ERR_INVALID_NAME);
    auto parsed = capstan::try_parse_calls(capstan::Format::anthropic, "not json");
    CHECK(!parsed && parsed.error().status() == CAPSTAN_ERR_INVALID_RESPONSE);
    auto created = Registry::create();
    CHECK(created.has_value() && created->get() != nullptr);
    auto bad = Registry::create(0x80000000u);
    CHECK(!bad && bad.error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_THROWS_STATUS(bad.value(), CAPSTAN_ERR_INVALID_ARGUMENT);
}

static void exceptions_in_tools_become_tool_errors() {
    Registry reg;
    reg.add({"sv", "", ""}, [](std::string_view) -> std::string { throw std::runtime_error("sv boom"); });
    reg.add({"ref", "", ""}, [](Call &) { throw std::logic_error("ref boom"); });
    // The Call is owned by the parameter, destroyed while the exception unwinds.
    reg.add({"byval", "", ""}, [](Call c) {
        Call inner = std::move(c);
        throw std::runtime_error("byval boom");
    });
    reg.add({"odd", "", ""}, [](std::string_view) -> std::string { throw 42; });
    // Completed before throwing: the result stands, the exception is dropped.
    reg.add({"done", "", ""}, [](Call &c) {
        (void)c.return_text("finished");
        throw std::runtime_error("late");
    });
    auto r = reg.execute("[" + call("1", "sv") + "," + call("2", "ref") + "," + call("3", "byval") + "," +
                         call("4", "odd") + "," + call("5", "done") + "]");
    CHECK(r.size() == 5);
    for (int i = 0; i < 4; i++) CHECK(r[i].outcome == Outcome::tool_error);
    CHECK_CONTAINS(r[0].content, "the tool threw: sv boom");
    CHECK_CONTAINS(r[1].content, "the tool threw: ref boom");
    CHECK_CONTAINS(r[2].content, "the tool threw: byval boom");
    CHECK_CONTAINS(r[3].content, "not a std::exception");
    CHECK(r[4].outcome == Outcome::ok && r[4].content == "finished");
}

static void tool_captures_are_destroyed_exactly_once() {
    std::atomic<int> live{0}, twice{0};
    {
        Registry reg;
        check::Probe probe(live, twice);
        reg.add({"a", "", ""}, [probe](std::string_view) { return "a"; });
        reg.add({"b", "", ""}, [probe](std::string_view) { return "b"; });
        CHECK(live.load() == 3);  // the local and one per tool
        CHECK(reg.execute(call("1", "a")).at(0).content == "a");
        // A replaced or removed tool's callable goes once its last call has
        // returned, which may be just after execute returned: wait for it.
        auto live_becomes = [&](int n) { return check::wait_until([&] { return live.load() == n; }); };
        // A duplicate is refused and its callable destroyed before try_add returns.
        auto duplicate = reg.try_add({"a", "", ""}, [probe](std::string_view) { return "a2"; });
        CHECK(!duplicate && duplicate.error().status() == CAPSTAN_ERR_INVALID_ARGUMENT && live.load() == 3);
        capstan::Tool replacing{"a", "", ""};
        replacing.flags = capstan::ToolFlag::replace;
        reg.add(replacing, [](std::string_view) { return "a2"; });
        CHECK(live_becomes(2));
        reg.remove("b");
        CHECK(live_becomes(1));
        reg.add({"c", "", ""}, [probe](std::string_view) { return "c"; });
        CHECK(live.load() == 2);
        // Registration that fails destroys the callable before returning.
        auto failed = reg.try_add({"bad name!", "", ""}, [probe](std::string_view) { return ""; });
        CHECK(!failed && live.load() == 2);
    }
    CHECK(live.load() == 0);  // freeing the registry destroyed "c"'s callable
    CHECK(twice.load() == 0);
}

static void deferred_call_completes_later_from_another_thread() {
    Registry reg;
    std::mutex m;
    std::vector<std::thread> workers;
    reg.add({"later", "", ""}, [&](Call c) {
        std::lock_guard<std::mutex> lock(m);
        workers.emplace_back([c = std::move(c)]() mutable {
            check::sleep_ms(20);
            std::string answer = "late: " + std::string(c.arguments());
            CHECK(c.return_text(answer).has_value());
            CHECK(!c.open());
        });
    });
    auto r = reg.execute("[" + call("1", "later", R"({"n":1})") + "," + call("2", "later", R"({"n":2})") + "]");
    CHECK(r.size() == 2 && r[0].content == R"(late: {"n":1})" && r[1].content == R"(late: {"n":2})");
    std::lock_guard<std::mutex> lock(m);
    for (auto &t : workers) t.join();
}

static void dropped_call_fails_with_clear_message() {
    Registry reg;
    reg.add({"forget_ref", "", ""}, [](Call &) {});
    reg.add({"forget_val", "", ""}, [](Call) {});
    reg.add({"moved_then_dropped", "", ""}, [](Call c) {
        Call kept = std::move(c);
        kept = Call();  // assigning over an open Call fails it
    });
    auto r = reg.execute("[" + call("1", "forget_ref") + "," + call("2", "forget_val") + "," +
                         call("3", "moved_then_dropped") + "]");
    CHECK(r.size() == 3);
    for (const Result &x : r) {
        CHECK(x.outcome == Outcome::tool_error);
        CHECK_CONTAINS(x.content, "dropped its capstan::Call without completing it");
    }
}

static void call_completes_exactly_once() {
    Registry reg;
    std::atomic<int> second_status{-1}, moved_status{-1};
    reg.add({"twice", "", ""}, [&](Call &c) {
        CHECK(c.return_text("first").has_value());
        auto again = c.fail("second");
        second_status = again ? CAPSTAN_OK : again.error().status();
        Call other = std::move(c);
        auto moved = c.return_text("from a moved-from handle");
        moved_status = moved ? CAPSTAN_OK : moved.error().status();
    });
    auto r = reg.execute(call("1", "twice"));
    CHECK(r.at(0).content == "first" && r[0].outcome == Outcome::ok);
    // The tool tries again after its first completion, which execute may see first.
    CHECK(check::wait_until([&] { return moved_status.load() != -1; }));
    CHECK(second_status.load() == CAPSTAN_ERR_ALREADY_COMPLETED);
    CHECK(moved_status.load() == CAPSTAN_ERR_ALREADY_COMPLETED);
}

static void late_completion_after_timeout_is_refused_and_arguments_stay_readable() {
    Registry reg;
    // The thread is stored under `m`, taken before it starts: the main thread
    // locks `m` before joining, so it never sees the thread half-assigned.
    std::mutex m;
    std::thread worker;
    std::atomic<int> late_status{-1};
    std::string seen;
    reg.add({"slow", "", "", /*timeout_ms=*/5}, [&](Call c) {
        std::lock_guard<std::mutex> lock(m);
        worker = std::thread([&, c = std::move(c)]() mutable {
            // Until the 5 ms timeout has fired (bounded: a loaded machine may delay it).
            CHECK(check::wait_until([&] { return c.cancelled(); }, 10000));
            seen = std::string(c.arguments());  // a copy: valid after the timeout (ASan)
            auto st = c.return_text("too late");
            late_status = st ? CAPSTAN_OK : st.error().status();
        });
    });
    auto r = reg.execute(call("1", "slow", R"({"payload":"abcdefghijklmnopqrstuvwxyz"})"));
    CHECK(r.at(0).outcome == Outcome::timeout);
    CHECK(check::wait_until([&] {
        std::lock_guard<std::mutex> lock(m);
        return worker.joinable();
    }));
    {
        std::lock_guard<std::mutex> lock(m);
        if (worker.joinable()) worker.join();
    }
    CHECK(seen == R"({"payload":"abcdefghijklmnopqrstuvwxyz"})");
    CHECK(late_status.load() == CAPSTAN_ERR_ALREADY_COMPLETED || late_status.load() == CAPSTAN_ERR_STALE_HANDLE);
}

static void submit_callback_gets_every_result_once() {
    Registry reg = with_echo();
    std::string calls = "[";
    for (int i = 0; i < 20; i++) calls += (i ? "," : "") + call(std::to_string(i).c_str(), "echo");
    calls += "]";
    std::mutex m;
    std::multiset<std::size_t> seen;
    capstan::Batch batch = reg.submit(calls, [&](const Result &r) {
        std::lock_guard<std::mutex> lock(m);
        if (r.outcome == Outcome::ok && r.id == std::to_string(r.index)) seen.insert(r.index);
    });
    CHECK(batch.wait(10000));
    CHECK(batch.done());
    std::lock_guard<std::mutex> lock(m);
    CHECK(seen.size() == 20);
    for (std::size_t i = 0; i < 20; i++) CHECK(seen.count(i) == 1);
}

static void polled_batch_delivers_on_the_polling_thread() {
    Registry reg;
    std::atomic<int> pool_calls{0};
    reg.add({"work", "", ""}, [&](std::string_view) {
        pool_calls++;
        return "done";
    });
    capstan::Batch batch = reg.submit_polled("[" + call("1", "work") + "," + call("2", "work") + "]");
    std::vector<Result> got;
    const std::thread::id me = std::this_thread::get_id();
    bool same_thread = true;
    CHECK(check::wait_until([&] {
        batch.poll([&](const Result &r) {
            same_thread = same_thread && std::this_thread::get_id() == me;
            got.push_back(r);
        });
        return batch.drained();
    }));
    CHECK(same_thread);
    CHECK(got.size() == 2 && pool_calls.load() == 2);
    CHECK(batch.poll().empty());
}

static void exception_from_poll_visitor_propagates_and_loses_nothing_else() {
    Registry reg = with_echo();
    capstan::Batch batch = reg.submit_polled("[" + call("1", "echo") + "," + call("2", "echo") + "," + call("3", "echo") + "]");
    CHECK(batch.wait(10000));
    int thrown = 0;
    try {
        batch.poll([](const Result &) { throw std::runtime_error("visitor"); });
    } catch (const std::runtime_error &) {
        thrown++;
    }
    CHECK(thrown == 1);
    CHECK(batch.poll().size() == 2);  // the other two are still queued
    CHECK(batch.drained());
}

static void batch_cancel_ends_pending_calls_cancelled() {
    Registry reg;
    reg.add({"until_cancelled", "", ""}, [](Call &c) {
        for (int i = 0; i < 5000 && !c.cancelled(); i++) check::sleep_ms(1);
        (void)c.return_text("stopped");
    });
    capstan::ExecOptions opts;
    opts.limit = 1;
    capstan::Batch batch = reg.submit_polled(
        "[" + call("1", "until_cancelled") + "," + call("2", "until_cancelled") + "," + call("3", "until_cancelled") + "]",
        opts);
    check::sleep_ms(20);
    batch.cancel();
    CHECK(batch.wait(10000));
    auto results = batch.poll();
    CHECK(results.size() == 3);
    int cancelled = 0;
    for (const Result &r : results) cancelled += r.outcome == Outcome::cancelled;
    CHECK(cancelled >= 2);  // the two that never started; the running one saw cancelled()
}

static void main_thread_tools_run_only_inside_pump_on_its_thread() {
    Registry reg;
    int game_state = 0;  // touched only by the pumping thread: no lock
    std::thread::id ran_on;
    reg.add({"spawn", "", "", 0, 0, capstan::tool_flag::main_thread}, [&](std::string_view) {
        ran_on = std::this_thread::get_id();
        return std::to_string(++game_state);
    });
    capstan::Batch batch = reg.submit_polled(call("1", "spawn"));
    check::sleep_ms(20);
    CHECK(game_state == 0);  // not run without pump
    std::size_t ran = 0;
    CHECK(check::wait_until([&] {
        ran += reg.pump(1);
        return batch.wait(0);
    }));
    CHECK(ran == 1 && game_state == 1 && ran_on == std::this_thread::get_id());
    CHECK(batch.poll().at(0).content == "1");
    // Blocking execute on the pumping thread runs the main-thread call itself.
    auto r = reg.execute(call("2", "spawn"));
    CHECK(r.at(0).content == "2" && ran_on == std::this_thread::get_id());
}

static void nested_execute_inside_a_tool() {
    Registry reg = with_echo();
    reg.add({"agent", "", ""}, [&reg](std::string_view) {
        auto inner = reg.execute(call("inner", "echo", R"({"deep":true})"));
        return "inner said " + inner.at(0).content;
    });
    CHECK(reg.execute(call("1", "agent")).at(0).content == R"(inner said {"deep":true})");
}

static void approver_decides_calls_needing_approval() {
    Registry reg;
    reg.add({"delete_file", "", "", 0, 0, capstan::tool_flag::requires_approval},
            [](std::string_view args) { return "deleted " + std::string(args); });
    std::atomic<int> asked{0};
    reg.set_approver([&](capstan::Approval &a) {
        asked++;
        CHECK(a.tool() == "delete_file");
        return check::contains(a.arguments(), "tmp");
    });
    auto r = reg.execute("[" + call("1", "delete_file", R"({"path":"/tmp/x"})") + "," +
                         call("2", "delete_file", R"({"path":"/etc/passwd"})") + "]");
    CHECK(asked.load() == 2);
    CHECK(r.at(0).outcome == Outcome::ok && r.at(1).outcome == Outcome::denied);
    // Ids approved up front skip the approver.
    capstan::ExecOptions opts;
    opts.approved_ids = {"3"};
    CHECK_CONTAINS(reg.needs_approval("[" + call("3", "delete_file") + "," + call("4", "delete_file") + "]", opts),
                   R"("id":"4")");
    CHECK(reg.execute(call("3", "delete_file", R"({"path":"/etc"})"), opts).at(0).outcome == Outcome::ok);
    CHECK(asked.load() == 2);

    // Deciding later, from another thread, with a reason.
    std::mutex m;  // held while the thread is stored (see the timeout test)
    std::thread decider;
    reg.set_approver([&](capstan::Approval a) {
        std::lock_guard<std::mutex> lock(m);
        decider = std::thread([a = std::move(a)]() mutable {
            check::sleep_ms(10);
            CHECK(a.deny("the user said no").has_value());
            CHECK(!a.deny().has_value());  // decided once
        });
    });
    auto later = reg.execute(call("5", "delete_file"));
    {
        std::lock_guard<std::mutex> lock(m);
        decider.join();
    }
    CHECK(later.at(0).outcome == Outcome::denied);
    CHECK_CONTAINS(later.at(0).content, "the user said no");

    // Dropped without a decision, or throwing: denied with a message.
    reg.set_approver([](capstan::Approval) {});
    CHECK_CONTAINS(reg.execute(call("6", "delete_file")).at(0).content, "without a decision");
    reg.set_approver([](capstan::Approval &) -> bool { throw std::runtime_error("ui gone"); });
    auto threw = reg.execute(call("7", "delete_file"));
    CHECK(threw.at(0).outcome == Outcome::denied);
    CHECK_CONTAINS(threw.at(0).content, "ui gone");

    reg.clear_approver();
    CHECK(reg.execute(call("8", "delete_file")).at(0).outcome == Outcome::denied);
}

static void hooks_observe_and_are_destroyed_exactly_once() {
    std::atomic<int> live{0}, twice{0};
    {
        Registry reg = with_echo();
        check::Probe probe(live, twice);
        std::mutex m;
        std::vector<capstan::EventKind> kinds;
        reg.set_event_hook([&, probe](const capstan::Event &e) {
            std::lock_guard<std::mutex> lock(m);
            if (e.tool == "echo" && e.id == "1") kinds.push_back(e.kind);
        });
        std::atomic<int> notified{0};
        reg.set_notify([&notified, probe] { notified++; });
        CHECK(reg.execute(call("1", "echo")).at(0).outcome == Outcome::ok);
        // Hooks run on capstan's threads, possibly just after the result is out.
        CHECK(check::wait_until([&] {
            std::lock_guard<std::mutex> lock(m);
            return kinds.size() == 2;
        }));
        {
            std::lock_guard<std::mutex> lock(m);
            CHECK(kinds.size() == 2 && kinds[0] == capstan::EventKind::started && kinds[1] == capstan::EventKind::finished);
        }
        capstan::Batch b = reg.submit_polled(call("2", "echo"));
        CHECK(b.wait(10000));
        CHECK(check::wait_until([&] { return notified.load() >= 1; }));
        reg.set_event_hook([probe](const capstan::Event &) { throw std::runtime_error("observer failed"); });
        CHECK(reg.execute(call("3", "echo")).at(0).outcome == Outcome::ok);  // a throwing hook changes nothing
        reg.clear_event_hook();
        reg.clear_notify();
        CHECK(live.load() >= 1);
    }
    CHECK(live.load() == 0);
    CHECK(twice.load() == 0);
}

static void provider_functions_round_trip() {
    Registry reg;
    reg.add({"sum", "Adds two integers.", SUM_SCHEMA}, [](std::string_view args) {
        int a = 0, b = 0;
        std::sscanf(std::string(args).c_str(), R"({"a":%d,"b":%d})", &a, &b);
        return Output::json(std::to_string(a + b));
    });
    CHECK_CONTAINS(reg.tools_json(capstan::Format::openai_chat), R"("name":"sum")");
    capstan::Export ex = reg.tools_export(capstan::Format::openai_chat, capstan::export_flag::strict);
    CHECK_CONTAINS(ex.json, "sum");
    CHECK(ex.report.front() == '[');
    CHECK_CONTAINS(reg.name_report(), R"("name":"sum")");
    const std::string response =
        R"({"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"call_1","type":"function",)"
        R"("function":{"name":"sum","arguments":"{\"a\":2,\"b\":3}"}}]}}]})";
    std::string calls = capstan::parse_calls(capstan::Format::openai_chat, response);
    CHECK_CONTAINS(calls, R"("id":"call_1")");
    std::string results = reg.execute_json(calls);
    std::string messages = capstan::format_results(capstan::Format::openai_chat, results);
    CHECK_CONTAINS(messages, R"("tool_call_id":"call_1")");
    CHECK(reg.run_turn(capstan::Format::openai_chat, response) == messages);
    CHECK_CONTAINS(reg.stats_json(), R"("sum")");
    capstan::check_name("fine_name");
    CHECK(std::string(capstan::version()).size() >= 5);
    CHECK(std::string(capstan::outcome_name(Outcome::invalid_arguments)) == "invalid_arguments");
}

static void wake_fd_and_close() {
    Registry reg = with_echo();
    CHECK(reg.wake_fd() >= 0);
    auto handle = reg.try_wake_handle(); // Windows only
    CHECK(!handle && handle.error().status() == CAPSTAN_ERR_UNSUPPORTED);
    CHECK(reg.close(5000));
    CHECK_THROWS_STATUS(reg.add({"late", "", ""}, [](std::string_view) { return ""; }), CAPSTAN_ERR_SHUTTING_DOWN);
    CHECK(reg.execute(call("1", "echo")).at(0).outcome == Outcome::cancelled);
}

static void flags_match_the_c_header() {
    static_assert(capstan::tool_flag::main_thread == CAPSTAN_TOOL_MAIN_THREAD);
    static_assert(capstan::exec_flag::deliver_poll == CAPSTAN_EXEC_DELIVER_POLL);
    static_assert(capstan::nts == SIZE_MAX);
    static_assert(static_cast<capstan_outcome>(Outcome::denied) == CAPSTAN_OUTCOME_DENIED);
}

#if __cplusplus >= 202002L
static void cpp20_designated_initializers() {
    Registry reg;
    reg.add({.name = "d", .description = "C++20 style", .timeout_ms = 1000},
            [](std::string_view) { return "designated"; });
    CHECK(reg.execute(call("1", "d")).at(0).content == "designated");
}
#endif

int main() {
    check::watchdog(120);
    handles_are_move_only();
    string_view_tool_results_are_text_or_json();
    model_errors_are_results_not_exceptions();
    failures_throw_error_with_status_and_message();
    try_functions_return_errors_instead_of_throwing();
    errors_carry_provider_fields_and_schema_pointers();
    exceptions_in_tools_become_tool_errors();
    tool_captures_are_destroyed_exactly_once();
    deferred_call_completes_later_from_another_thread();
    dropped_call_fails_with_clear_message();
    call_completes_exactly_once();
    late_completion_after_timeout_is_refused_and_arguments_stay_readable();
    submit_callback_gets_every_result_once();
    polled_batch_delivers_on_the_polling_thread();
    exception_from_poll_visitor_propagates_and_loses_nothing_else();
    batch_cancel_ends_pending_calls_cancelled();
    main_thread_tools_run_only_inside_pump_on_its_thread();
    nested_execute_inside_a_tool();
    approver_decides_calls_needing_approval();
    hooks_observe_and_are_destroyed_exactly_once();
    provider_functions_round_trip();
    wake_fd_and_close();
    flags_match_the_c_header();
#if __cplusplus >= 202002L
    cpp20_designated_initializers();
#endif
    return check::report("test_wrapper");
}
