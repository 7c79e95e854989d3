"""ToolRegistry.search (issue #32): ranked by words or by a pattern, over
the tools registered now; bad input raises SearchError."""

import pytest

from capstan import SearchError, ToolRegistry, tool


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return city


@tool
def send_email(recipient: str, subject: str) -> str:
    """Send a message to someone."""
    return recipient


@tool
def list_files(path: str) -> list:
    """List the entries of a directory."""
    return []


def names(hits):
    return [h["name"] for h in hits]


def test_search_ranks_by_words_over_names_descriptions_and_parameters():
    reg = ToolRegistry([get_weather, send_email, list_files])
    try:
        assert names(reg.search("emails", limit=1)) == ["send_email"]
        assert names(reg.search("directory entries", limit=1)) == ["list_files"]
        assert names(reg.search("recipient")) == ["send_email"]
        hit = reg.search("weather")[0]
        assert hit["description"] == "Current weather for a city."
        assert hit["score"] > 0
    finally:
        reg.close()


def test_search_sees_tools_added_and_removed_after_it_ran():
    reg = ToolRegistry([get_weather])
    try:
        assert reg.search("directory") == []
        reg.add(list_files)
        assert names(reg.search("directory")) == ["list_files"]
        reg.remove("list_files")
        assert reg.search("directory") == []
    finally:
        reg.close()


def test_regex_search_matches_names_first():
    reg = ToolRegistry([get_weather, send_email, list_files])
    try:
        assert names(reg.search("^send_", regex=True)) == ["send_email"]
        assert names(reg.search("(?i)CITY", regex=True)) == ["get_weather"]
    finally:
        reg.close()


def test_bad_searches_raise_search_error_naming_the_problem():
    reg = ToolRegistry([get_weather])
    try:
        with pytest.raises(SearchError, match="empty"):
            reg.search("   ")
        with pytest.raises(SearchError, match="1024"):
            reg.search("x" * 1025)
        with pytest.raises(SearchError, match="not valid"):
            reg.search("(", regex=True)
        with pytest.raises(SearchError, match="limit"):
            reg.search("weather", limit=0)
        with pytest.raises(ValueError):
            reg.search("weather", limit=101)
    finally:
        reg.close()
