// capstan/search.hpp: tool search: the options of Registry::search_json and add_search_tool.
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_SEARCH
#define CAPSTAN_HPP_SEARCH

#include "base.hpp"

namespace capstan {

/// Options of Registry::search_json (capstan_search_options).
struct SearchOptions {
    Flags<SearchFlag> flags{};  ///< SearchFlag::regex: the query is a regular expression; else words (BM25)
    std::uint32_t limit = 0;    ///< at most this many results, 1 to 100; 0: 5
};

/// Options of Registry::add_search_tool (capstan_search_tool_options).
struct SearchToolOptions {
    std::string name{};         ///< empty: "tool_search"
    std::string description{};  ///< empty: capstan's default, telling the model how to search
    Flags<SearchFlag> flags{};  ///< how the model's query is read
    std::uint32_t limit = 0;    ///< tools listed per search, 1 to 100; 0: 5
};

}  // namespace capstan

#endif  // CAPSTAN_HPP_SEARCH
