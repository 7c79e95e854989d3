// The C++ wrapper against tests/fixtures/binding_behaviour.json, the table
// every binding's suite checks (issue #49.6), and duplicate registration
// (#49.5). Run from the repository root, as `make cpp-test` does.
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "check.hpp"

using capstan::Format;
using capstan::Outcome;
using capstan::Registry;
using nlohmann::json;

static json table() {
    std::ifstream in("tests/fixtures/binding_behaviour.json");
    std::stringstream text;
    text << in.rdbuf();
    return json::parse(text.str());
}

static Registry with_old() {
    Registry reg;
    reg.add({"f"}, [](std::string_view) { return "old"; });
    return reg;
}

static void expect_error(const capstan::Error &e, const json &row) {
    CHECK(std::string(e.status_name()) == row["status"].get<std::string>());
    CHECK(check::contains(e.what(), row["fragment"].get<std::string>()));
}

static void formats_have_the_tables_codes(const json &t) {
    const std::map<std::string, Format> cpp{{"describe", Format::describe},   {"openai_chat", Format::openai_chat},
                                            {"openai_responses", Format::openai_responses},
                                            {"anthropic", Format::anthropic}, {"gemini", Format::gemini},
                                            {"mcp", Format::mcp}};
    std::size_t canonical = 0;
    for (const auto &row : t["formats"]) {
        if (!row.value("canonical", false)) continue;  // C++ takes formats as Format, not by name
        canonical++;
        auto it = cpp.find(row["name"].get<std::string>());
        CHECK(it != cpp.end() && static_cast<int>(it->second) == row["code"].get<int>());
    }
    CHECK(canonical == cpp.size());
}

static void calls_without_an_id_get_the_tables_id(const json &t) {
    Registry reg = with_old();
    for (const auto &row : t["ids"]) {
        json calls = json::array();
        for (int i = 0; i <= row["index"].get<int>(); i++) calls.push_back({{"name", "f"}});
        auto results = reg.execute(calls.dump());
        CHECK(results.at(row["index"].get<std::size_t>()).id == row["id"].get<std::string>());
    }
}

static void mistakes_give_the_tables_status_or_outcome(const json &t) {
    Registry reg = with_old();
    const std::map<std::string, Outcome> outcomes{{"unknown_tool", Outcome::unknown_tool},
                                                  {"invalid_arguments", Outcome::invalid_arguments}};
    for (const auto &row : t["errors"]) {
        const std::string mistake = row["mistake"];
        if (mistake == "duplicate_registration") {
            auto refused = reg.try_add({"f"}, [](std::string_view) { return "new"; });
            CHECK(!refused);
            if (!refused) {
                expect_error(refused.error(), row);
                CHECK(check::contains(refused.error().what(), "\"f\""));
            }
            CHECK(reg.execute(R"({"name":"f"})").at(0).content == "old");
        } else if (row.contains("outcome")) {
            json call = {{"id", "a"}, {"name", mistake == "unknown_tool" ? "nope" : "f"}};
            if (row.contains("arguments")) call["arguments"] = row["arguments"];
            auto r = reg.execute(call.dump()).at(0);
            CHECK(r.outcome == outcomes.at(row["outcome"].get<std::string>()));
            CHECK(check::contains(r.content, row["fragment"].get<std::string>()));
            if (row.value("names_tool", false)) CHECK(check::contains(r.content, "nope"));
        } else if (mistake == "unknown_format") {
            auto out = reg.try_tools_json(static_cast<Format>(99));
            CHECK(!out);
            if (!out) expect_error(out.error(), row);
        } else if (mistake == "provider_shaped_call") {
            auto out = reg.try_execute(json::array({row["call"]}).dump());
            CHECK(!out);
            if (!out) expect_error(out.error(), row);
        } else {
            CHECK(!"a mistake of the table this test does not know");
        }
    }
}

static void tool_flag_replace_runs_the_new_callable() {
    Registry reg = with_old();
    capstan::Tool tool{"f"};
    tool.flags = capstan::ToolFlag::replace;
    reg.add(tool, [](std::string_view) { return "new"; });
    CHECK(reg.execute(R"({"name":"f"})").at(0).content == "new");
}

int main() {
    check::watchdog(60);
    const json t = table();
    formats_have_the_tables_codes(t);
    calls_without_an_id_get_the_tables_id(t);
    mistakes_give_the_tables_status_or_outcome(t);
    tool_flag_replace_runs_the_new_callable();
    return check::report("test_behaviour");
}
