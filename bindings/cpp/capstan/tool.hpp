// capstan/tool.hpp: a tool: what it is (Tool) and what it hands back (Output, InputRequired).
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_TOOL
#define CAPSTAN_HPP_TOOL

#include "error.hpp"

namespace capstan {

/// What a tool hands back: text or JSON for the model, content parts
/// (images, audio, resources), or an error message (a tool_error result). A
/// std::string or const char* converts to text.
class Output {
public:
    /// input_required: the tool asks its caller for input (see
    /// Output::input_required and Call::require_input).
    enum class Kind { text, json, error, parts, input_required };

    Output(std::string text) : kind_(Kind::text), content_(std::move(text)) {}
    Output(std::string_view text) : kind_(Kind::text), content_(text) {}
    Output(const char *text) : kind_(Kind::text), content_(text ? text : "") {}

    static Output text(std::string s) { return Output(Kind::text, std::move(s)); }
    /// Checked by capstan: text that is not JSON becomes a tool_error.
    static Output json(std::string s) { return Output(Kind::json, std::move(s)); }
    /// A failure the model reads (for code built without exceptions).
    static Output error(std::string message) { return Output(Kind::error, std::move(message)); }
    /// Content parts (CAPSTAN_CONTENT_PARTS): the JSON text of an array of MCP
    /// content blocks, e.g. [{"type":"text","text":"..."},{"type":"image",
    /// "data":"<base64>","mimeType":"image/png"}], or of an object
    /// {"content":[...],"structuredContent":{...}}. Checked when the call
    /// completes: bad base64, a wrong MIME type, an unknown block or data
    /// past RegistryOptions::max_result_bytes make the call a tool_error
    /// naming the part. Each provider format renders the parts its way
    /// (format_results, run_turn); Result::content holds their text.
    static Output parts(std::string json) { return Output(Kind::parts, std::move(json)); }
    /// Asks the caller for input instead of answering (MCP 2026-07-28 multi
    /// round-trip requests; Call::require_input, which says what is asked
    /// and who can answer): `requests_json` is a JSON object of requests by
    /// key, `state` the tool's own text, back in the next round's
    /// Call::input() "requestState". When capstan refuses (a caller that
    /// cannot be asked, a request that breaks a rule), the call ends as a
    /// tool_error with capstan's reason.
    static Output input_required(std::string requests_json, std::optional<std::string> state = std::nullopt) {
        Output out(Kind::input_required, std::move(requests_json));
        out.state_ = std::move(state);
        return out;
    }

    Kind kind() const noexcept { return kind_; }
    /// The text, JSON, message or parts; for input_required, the requests.
    const std::string &content() const noexcept { return content_; }
    /// input_required only: the tool's state (none: std::nullopt).
    const std::optional<std::string> &state() const noexcept { return state_; }

private:
    Output(Kind kind, std::string content) : kind_(kind), content_(std::move(content)) {}
    Kind kind_;
    std::string content_;
    std::optional<std::string> state_{};
};

/// Thrown by a tool to ask its caller for input instead of answering (MCP
/// 2026-07-28 multi round-trip requests): the wrapper completes the call
/// with Call::require_input(requests(), state()); when capstan refuses (a
/// caller that cannot be asked, such as a plain execute or a provider
/// turn, or a request that breaks a rule), the call ends as a tool_error
/// whose text is "the tool asked for input: " and capstan's reason.
///
///   reg.add(tool, [](capstan::Call &call) {
///       if (call.input().find("\"inputResponses\"") == std::string_view::npos)
///           throw capstan::InputRequired(R"({"name":{"method":"elicitation/create",
///               "params":{"message":"Your name?","requestedSchema":{"type":"object",
///               "properties":{"name":{"type":"string"}}}}}})", "asked-name");
///       ... read the answer in call.input() ...
///   });
///
/// Without exceptions: return Output::input_required(...) or call
/// Call::require_input.
class InputRequired : public std::runtime_error {
public:
    explicit InputRequired(std::string requests_json, std::optional<std::string> state = std::nullopt)
        : std::runtime_error("the tool asked its caller for input"), requests_(std::move(requests_json)),
          state_(std::move(state)) {}
    /// The requests by key, as JSON text.
    const std::string &requests() const noexcept { return requests_; }
    const std::optional<std::string> &state() const noexcept { return state_; }
    /// The same as a tool's return value.
    Output output() const { return Output::input_required(requests_, state_); }

private:
    std::string requests_;
    std::optional<std::string> state_;
};

/// A tool as the model sees it. Empty `parameters` means {"type":"object"}.
/// Its per-call timeout is `timeout` (std::chrono), or the older
/// `timeout_ms` (deprecated): `timeout` wins when it is non-zero; 0 means
/// none; a negative `timeout` is INVALID_ARGUMENT; past UINT32_MAX ms (49.7
/// days) it is capped there.
struct Tool {
    std::string name{};
    std::string description{};
    std::string parameters{};
    std::uint32_t timeout_ms = 0;        ///< deprecated: use `timeout`
    std::uint32_t max_output_chars = 0;  ///< 0: no cap
    Flags<ToolFlag> flags{};             ///< e.g. ToolFlag::serial | ToolFlag::main_thread
    std::chrono::milliseconds timeout{0};  ///< per-call timeout from the call's start; 0: none
    /// MCP metadata (capstan_tool_def.mcp_meta) as JSON text of an object
    /// with any of "title", "annotations" ({"title"?, "readOnlyHint"?,
    /// "destructiveHint"?, "idempotentHint"?, "openWorldHint"?}),
    /// "outputSchema" (an object schema) and "icons" ([{"src", "mimeType"?,
    /// "sizes"?, "theme"?}], at most 16). Served in MCP tools/list, given by
    /// tools_json(Format::mcp) and as "mcp" in Format::describe. With an
    /// outputSchema, a result whose structured content fails it becomes a
    /// tool_error listing the failing JSON Pointers. Empty: none. Bad JSON or
    /// a mistyped field: INVALID_ARGUMENT naming it; an outputSchema that
    /// does not compile: INVALID_SCHEMA.
    std::string mcp_meta{};
};

}  // namespace capstan

#endif  // CAPSTAN_HPP_TOOL
