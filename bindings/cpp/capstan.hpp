// capstan.hpp: a header-only C++17 wrapper over capstan's C ABI (capstan.h).
//
//   capstan::Registry reg;
//   reg.add({"add", "Add two integers.", schema}, [](std::string_view args) {
//       return capstan::Output::json(...);
//   });
//   std::vector<capstan::Result> results = reg.execute(calls_json);
//
// Ownership and threads follow capstan.h; in C++ terms:
//  - Registry, Batch, Call and Approval are move-only RAII handles.
//  - A tool's callable (and its captures) is owned by capstan from `add` on
//    and destroyed exactly once: when the tool is replaced or removed and its
//    last call is done, when the registry is freed, or at once if `add` fails.
//    It runs on capstan's pool threads (main-thread tools: inside `pump`), so
//    it must be safe to call from any thread, several at a time.
//  - Errors: the throwing functions throw capstan::Error (status + message,
//    plus the provider's error fields and a schema error's JSON Pointer).
//    Every one has a `try_` twin returning capstan::Expected<T> instead, and
//    only those exist when exceptions are disabled (-fno-exceptions).
//  - An exception escaping a tool becomes that call's tool_error result (the
//    model reads "the tool threw: <what()>"); one escaping an approver denies
//    the call. Exceptions never cross into capstan.
#ifndef CAPSTAN_HPP
#define CAPSTAN_HPP

// The wrapper in one header per area, as capstan.h has sections, in the
// order they build on one another (registry.hpp, the Registry class, uses
// them all); each includes what it needs, and this one includes them all.
#include "capstan/base.hpp"
#include "capstan/error.hpp"
#include "capstan/tool.hpp"
#include "capstan/call.hpp"
#include "capstan/hooks.hpp"
#include "capstan/approval.hpp"
#include "capstan/execution.hpp"
#include "capstan/stream.hpp"
#include "capstan/search.hpp"
#include "capstan/providers.hpp"
#include "capstan/runtime.hpp"
#include "capstan/mcp_server.hpp"
#include "capstan/mcp_mount.hpp"
#include "capstan/journal.hpp"
#include "capstan/registry.hpp"

#endif  // CAPSTAN_HPP
