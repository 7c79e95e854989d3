// capstan_json.hpp: an optional nlohmann::json adapter for capstan.hpp.
// Needs nlohmann/json 3.x (Debian: nlohmann-json3-dev; CMake:
// find_package(nlohmann_json 3 REQUIRED) and nlohmann_json::nlohmann_json)
// and exceptions (nlohmann::json reports errors by throwing).
//
//   struct Add { int a = 0; int b = 0; };
//   NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Add, a, b)
//   struct Sum { int sum = 0; };
//   NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Sum, sum)
//
//   capstan::Registry reg;
//   reg.add(capstan::json::tool("add", "Add two integers.", schema),
//           capstan::json::typed([](const Add &x) { return Sum{x.a + x.b}; }));
//
// A typed tool reads its arguments with from_json (after capstan validated
// them against the schema and filled in its defaults) and its return value
// is written with to_json and handed back as JSON. Arguments that from_json
// refuses (the schema and the struct disagree) end the call as a tool_error
// whose message says why; an exception the tool throws does too ("the tool
// threw: ..."), as for any capstan.hpp tool. Threads and ownership are
// capstan.hpp's: the callable runs on capstan's pool threads, several calls
// at once, and is destroyed exactly once by capstan. The raw-string API of
// capstan.hpp stays as it is; this header only adds to it.
#ifndef CAPSTAN_JSON_HPP
#define CAPSTAN_JSON_HPP

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "capstan.hpp"

#if !CAPSTAN_HPP_EXCEPTIONS
#error "capstan_json.hpp needs exceptions: nlohmann::json reports errors by throwing"
#endif

namespace capstan::json {

/// A Tool whose parameters schema is a nlohmann::json value.
inline Tool tool(std::string name, std::string description, const nlohmann::json &parameters) {
    Tool t;
    t.name = std::move(name);
    t.description = std::move(description);
    t.parameters = parameters.dump();
    return t;
}

/// The Output for a tool's return value: an Output as it is, a
/// nlohmann::json as JSON, anything else converted with to_json, as JSON.
/// Text that is not valid UTF-8 throws nlohmann::json::type_error (316).
template <class R>
Output to_output(R &&value) {
    using V = std::decay_t<R>;
    if constexpr (std::is_same_v<V, Output>) {
        return std::forward<R>(value);
    } else if constexpr (std::is_same_v<V, nlohmann::json>) {
        return Output::json(value.dump());
    } else {
        return Output::json(nlohmann::json(std::forward<R>(value)).dump());
    }
}

namespace detail {

template <class F>
struct signature : signature<decltype(&F::operator())> {};
template <class R, class A>
struct signature<R (*)(A)> {
    using arg = A;
    static constexpr bool takes_call = false;
};
template <class R, class A>
struct signature<R (*)(A, const Call &)> {
    using arg = A;
    static constexpr bool takes_call = true;
};
template <class C, class R, class A>
struct signature<R (C::*)(A) const> : signature<R (*)(A)> {};
template <class C, class R, class A>
struct signature<R (C::*)(A)> : signature<R (*)(A)> {};
template <class C, class R, class A>
struct signature<R (C::*)(A, const Call &) const> : signature<R (*)(A, const Call &)> {};
template <class C, class R, class A>
struct signature<R (C::*)(A, const Call &)> : signature<R (*)(A, const Call &)> {};

}  // namespace detail

/// A tool callable for Registry::add from `fn`, called as fn(const Args&) or
/// fn(const Args&, const capstan::Call&) (for the call's id or cancelled()),
/// returning a value to_json can write, a nlohmann::json or a capstan::Output.
/// Args is read from the call's arguments with from_json.
template <class Args, class F>
auto typed(F fn) {
    static_assert(std::is_invocable_v<F &, const Args &> || std::is_invocable_v<F &, const Args &, const Call &>,
                  "a typed tool is callable as R(const Args&) or R(const Args&, const capstan::Call&)");
    return [fn = std::move(fn)](Call &call) mutable {
        std::optional<Args> args;  // Args need not be default-constructible
        try {
            args.emplace(nlohmann::json::parse(call.arguments()).template get<Args>());
        } catch (const nlohmann::json::exception &e) {
            (void)call.fail(std::string("the arguments do not fit the tool's C++ type: ") + e.what());
            return;
        }
        if constexpr (std::is_invocable_v<F &, const Args &, const Call &>) {
            static_assert(!std::is_void_v<std::invoke_result_t<F &, const Args &, const Call &>>,
                          "a typed tool returns its result");
            Output out = to_output(fn(static_cast<const Args &>(*args), static_cast<const Call &>(call)));
            (void)call.complete(out);  // refused only when the call already timed out
        } else {
            static_assert(!std::is_void_v<std::invoke_result_t<F &, const Args &>>, "a typed tool returns its result");
            Output out = to_output(fn(static_cast<const Args &>(*args)));
            (void)call.complete(out);
        }
    };
}

/// The call's input (Call::input: "canAsk", and in a later round
/// "inputResponses" and "requestState") as a JSON object; an empty object
/// when it was first read after the call was completed.
inline nlohmann::json input(const Call &call) {
    std::string_view text = call.input();
    return text.empty() ? nlohmann::json::object() : nlohmann::json::parse(text);
}

/// A capstan::InputRequired asking for `requests` (an object of requests by
/// key, each {"method", "params"}), for a tool to throw (a typed tool
/// too):
///   nlohmann::json in = capstan::json::input(call);
///   if (!in.contains("inputResponses"))
///       throw capstan::json::input_required({{"name", {{"method", "elicitation/create"},
///                                                      {"params", {{"message", "Your name?"}}}}}});
inline InputRequired input_required(const nlohmann::json &requests, std::optional<std::string> state = std::nullopt) {
    return InputRequired(requests.dump(), std::move(state));
}

/// typed<Args>(fn) with Args deduced from fn's parameter (a lambda or
/// function that is not generic).
template <class F>
auto typed(F fn) {
    using Args = std::remove_cv_t<std::remove_reference_t<typename detail::signature<std::decay_t<F>>::arg>>;
    return typed<Args>(std::move(fn));
}

}  // namespace capstan::json

#endif  // CAPSTAN_JSON_HPP
