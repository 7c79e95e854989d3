// capstan/providers.hpp: provider formats and turns: parse_calls, format_results, check_history,
// check_name, and what tools_export and check_history return.
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_PROVIDERS
#define CAPSTAN_HPP_PROVIDERS

#include "error.hpp"

namespace capstan {

/// Output of Registry::tools_export.
struct Export {
    std::string json;
    std::string report;  ///< [{"tool","pointer","message"}]
};

/// What check_history found (capstan_format_check_history).
struct HistoryCheck {
    bool ok = false;     ///< no finding
    std::string report;  ///< {"ok","findings":[{"kind","entry","call_id","message","repair"?}]}
    std::optional<std::string> repaired;  ///< with HistoryFlag::repair: the history, repaired, in its own shape
};

/// The tool calls of a provider response, as a normalized call array.
[[nodiscard]] inline Expected<std::string> try_parse_calls(Format fmt, std::string_view response) {
    return detail::text_out([&](char **out, std::size_t *len) {
        return capstan_format_parse_calls(static_cast<capstan_format>(fmt), detail::ptr(response), response.size(), out, len);
    });
}

/// Normalized results (execute_json's output) as the messages `fmt` expects.
[[nodiscard]] inline Expected<std::string> try_format_results(Format fmt, std::string_view results_json) {
    return detail::text_out([&](char **out, std::size_t *len) {
        return capstan_format_write_results(static_cast<capstan_format>(fmt), detail::ptr(results_json), results_json.size(),
                                      out, len);
    });
}

/// Checks a conversation the host assembled (an array of messages, input
/// items or contents, or a request body holding one) against the rules `fmt`
/// (openai_chat, openai_responses, anthropic, gemini) sets for tool calls and
/// their results: a call without a result, an orphan or second result, a
/// repeated or illegal call id, results out of order, a missing Gemini
/// thoughtSignature (HistoryFlag::gemini_signatures). With
/// HistoryFlag::repair, `repaired` holds the history mended as run_turn would
/// have answered it. INVALID_ARGUMENT for describe/mcp, text that is not
/// JSON or a history of the wrong shape (the message names the entry).
[[nodiscard]] inline Expected<HistoryCheck> try_check_history(Format fmt, std::string_view history,
                                                              Flags<HistoryFlag> flags = {}) {
    char *report = nullptr, *repaired = nullptr;
    std::size_t report_len = 0, repaired_len = 0;
    capstan_status st = capstan_format_check_history(static_cast<capstan_format>(fmt), detail::ptr(history), history.size(),
                                                     flags.bits(), &report, &report_len, &repaired, &repaired_len);
    if (st != CAPSTAN_OK) return detail::last_error(st);
    std::unique_ptr<char, detail::FreeText> g1(report), g2(repaired);
    HistoryCheck out;
    if (report) out.report.assign(report, report_len);
    if (repaired) out.repaired = std::string(repaired, repaired_len);
    out.ok = detail::ErrorJsonReader(out.report).read_ok();
    return out;
}

/// OK if every provider accepts `name` as a tool name; else why not.
[[nodiscard]] inline Expected<void> try_check_name(std::string_view name) {
    capstan_status st = capstan_name_check(detail::ptr(name), name.size());
    if (st != CAPSTAN_OK) return detail::last_error(st);
    return {};
}

#if CAPSTAN_HPP_EXCEPTIONS
inline std::string parse_calls(Format fmt, std::string_view response) { return try_parse_calls(fmt, response).value(); }
inline std::string format_results(Format fmt, std::string_view results_json) {
    return try_format_results(fmt, results_json).value();
}
inline void check_name(std::string_view name) { try_check_name(name).value(); }
inline HistoryCheck check_history(Format fmt, std::string_view history, Flags<HistoryFlag> flags = {}) {
    return try_check_history(fmt, history, flags).value();
}
#endif

}  // namespace capstan

#endif  // CAPSTAN_HPP_PROVIDERS
