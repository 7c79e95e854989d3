#!/usr/bin/env python3
"""Orders cbindgen's include/capstan.h into sections (issue #25).

cbindgen writes every constant, then every type, then every function, each in
source order; a reader wants one section per object. This reads cbindgen's
output (argv[1]) and writes the same declarations (argv[2]) as: the
conventions, a table of contents, then one section per object, each opening
with what the object is and its lifetime, with the flag bits of a family
together and in bit order. `make header` runs it after cbindgen.

It fails (exit 1) when a declaration matches no section (a new item must be
placed here) or when a type would be used before its declaration.
"""
import re
import sys

# (title, intro, [patterns in order]). An item goes to the first pattern, in
# section order, that matches its whole name; items of one pattern keep
# cbindgen's order, flags `(1u << N)` go by N.
SECTIONS = [
    ("Statuses and errors",
     """Every fallible function returns a capstan_status (CAPSTAN_OK = 0). The
last failure on the calling OS thread is read as text with
capstan_error_message, or as structured data (status, provider error kind,
code, HTTP status, retry delay, schema pointer) with capstan_error_json.
Both read it without changing it; a success empties it.""",
     [r"capstan_status", r"CAPSTAN_OK", r"CAPSTAN_ERR_\w+", r"capstan_status_name",
      r"capstan_error_message", r"capstan_error_json"]),
    ("Text, versions and features",
     """Text capstan returns through a char **out is the caller's, freed with
capstan_string_free. The version: macros for this header, functions for the
library (compare them when loading it dynamically). The feature mask says
which optional parts (MCP, streams) this build has.""",
     [r"capstan_string_free", r"CAPSTAN_VERSION_(MAJOR|MINOR|PATCH|STRING|NUMBER)",
      r"capstan_version_string", r"capstan_version_number", r"CAPSTAN_FEATURE_\w+",
      r"capstan_features_mask"]),
    ("Objects",
     """The opaque types, each made and freed by its own functions (sections
below). A capstan_registry holds tools; everything else belongs to one:
a capstan_call is one tool call handed to a tool callback; a capstan_batch
is calls submitted to run in the background; a capstan_host_batch is calls
whose quick ones the host runs itself; a capstan_approval is a call
waiting for the host's decision; a capstan_stream runs calls as a streamed
model response arrives; a capstan_mcp_server serves the registry's tools over
MCP; a capstan_mcp_mount registers an MCP server's tools in the registry.""",
     [r"capstan_registry", r"capstan_call", r"capstan_batch", r"capstan_host_batch",
      r"capstan_approval",
      r"capstan_stream", r"capstan_mcp_server", r"capstan_mcp_mount"]),
    ("Runtime: threads and hooks",
     """Process-wide: capstan's pool of threads, and the hooks its threads run
before and after any host code (so a host runtime can attach them). Nothing
here belongs to a registry.""",
     [r"capstan_destroy_fn", r"capstan_thread_hook_fn", r"capstan_runtime_\w+",
      r"CAPSTAN_RUNTIME_OPTIONS_INIT"]),
    ("Provider formats",
     """The wire formats capstan reads model responses in and writes tool
definitions and results in. The functions here need no registry.""",
     [r"capstan_format", r"CAPSTAN_FORMAT_\w+", r"capstan_format_parse_calls",
      r"capstan_format_write_results", r"CAPSTAN_HISTORY_\w+",
      r"capstan_format_check_history"]),
    ("Registry",
     """A capstan_registry holds tools and runs their calls. Made by
capstan_registry_new, freed by capstan_registry_free (which cancels what
still runs and waits for its callbacks). Any number of threads may use one at
once; only capstan_registry_free must not race other uses of it.""",
     [r"capstan_registry_options", r"CAPSTAN_REGISTRY_\w+", r"CAPSTAN_REGISTRY_OPTIONS_INIT",
      r"capstan_registry_options_init", r"capstan_registry_new", r"capstan_registry_free",
      r"capstan_registry_close"]),
    ("Tools",
     """A tool is a name, a JSON Schema for its arguments and a callback,
registered with capstan_registry_add_tool from a capstan_tool_def (copied;
its user_data is released by its destroy once the tool is removed and its
last call returned).""",
     [r"capstan_content", r"CAPSTAN_CONTENT_\w+", r"capstan_tool_fn", r"CAPSTAN_TOOL_\w+",
      r"capstan_tool_def", r"CAPSTAN_TOOL_DEF_INIT", r"capstan_tool_def_init",
      r"capstan_name_check", r"capstan_registry_add_tool", r"capstan_registry_remove_tool",
      r"capstan_export_options", r"CAPSTAN_EXPORT_\w+", r"CAPSTAN_EXPORT_OPTIONS_INIT",
      r"capstan_export_options_init", r"capstan_registry_tools_json",
      r"capstan_registry_names_json",
      r"capstan_search_options", r"CAPSTAN_SEARCH_OPTIONS_INIT", r"capstan_search_options_init",
      r"capstan_search_tool_options", r"CAPSTAN_SEARCH_TOOL_OPTIONS_INIT",
      r"capstan_search_tool_options_init", r"CAPSTAN_SEARCH_\w+",
      r"capstan_registry_search_json", r"capstan_registry_add_search_tool",
      r"capstan_registry_unload_tools"]),
    ("Calls, inside a tool",
     """A capstan_call is one call of a tool, handed to its callback. It is
completed exactly once, with capstan_call_return or capstan_call_fail, from
any thread, during or after the callback; its text lives until then.
While it runs it can report progress and send log messages.""",
     [r"capstan_log_level", r"CAPSTAN_LOG_\w+", r"capstan_call_\w+"]),
    ("Running calls",
     """Calls in the normalized form ({"id","name","arguments"}) run with
capstan_registry_execute (blocking), as a capstan_batch (below), or from a
provider's response with capstan_registry_run_turn. Each call gets exactly
one result; capstan_exec_options shape how they run.""",
     [r"capstan_outcome", r"CAPSTAN_OUTCOME_\w+", r"capstan_result", r"capstan_result_fn",
      r"capstan_exec_options", r"CAPSTAN_EXEC_\w+", r"CAPSTAN_EXEC_OPTIONS_INIT",
      r"capstan_exec_options_init", r"capstan_registry_check_call", r"capstan_registry_check_calls",
      r"capstan_registry_execute", r"capstan_registry_run_turn",
      r"capstan_registry_needs_approval"]),
    ("Batches",
     """A capstan_batch is calls running in the background, made by
capstan_batch_submit; results go to a callback or a queue
(capstan_batch_poll). Free it with capstan_batch_free at any point: a batch
still running finishes internally.""",
     [r"capstan_batch_\w+"]),
    ("Host batches",
     """A capstan_host_batch is the path of a host that runs its quick tools
(flagged CAPSTAN_TOOL_HOST_RUN) on its own thread: one crossing hands out
every checked call as one JSON array, one crossing takes every answer back,
while the batch's other calls run on the pool. Made by
capstan_host_batch_begin, freed by capstan_host_batch_free (a checked
handle: a use after the free is CAPSTAN_ERR_STALE_HANDLE).""",
     [r"capstan_host_batch_\w+"]),
    ("Main thread and wake-ups",
     """For hosts with a main loop: tools flagged CAPSTAN_TOOL_MAIN_THREAD run
when the host calls capstan_registry_pump; a notifier or a wake fd says
when there is work.""",
     [r"capstan_notify_fn", r"capstan_registry_pump", r"capstan_registry_set_notify",
      r"capstan_registry_wake_\w+"]),
    ("Approvals",
     """Calls of tools flagged CAPSTAN_TOOL_REQUIRES_APPROVAL wait for the
registry's approver, which gets a capstan_approval and decides it exactly
once (now or later, from any thread).""",
     [r"capstan_approver_fn", r"capstan_registry_set_approver", r"capstan_approval_\w+"]),
    ("Events and statistics",
     """An event hook sees each call start and end; the statistics are
per-tool counters as JSON.""",
     [r"capstan_event_kind", r"CAPSTAN_EVENT_\w+", r"capstan_event", r"capstan_event_fn",
      r"capstan_registry_set_event_hook", r"capstan_registry_stats_json"]),
    ("Durable calls: journals",
     """A capstan_journal records every call a registry runs under a run id
(capstan_exec_options.run_id) and answers a call it has a completed record
of without running its tool: a JSON Lines file, an SQLite database (feature
journal-sqlite) or the host's own store through callbacks. Opened by
capstan_journal_open_* or capstan_journal_new, freed by capstan_journal_free;
a registry using it (capstan_registry_set_journal) keeps it alive.""",
     [r"capstan_journal", r"CAPSTAN_JOURNAL_\w+", r"capstan_journal_answer",
      r"capstan_journal_(record|lookup)_fn", r"capstan_journal_callbacks",
      r"CAPSTAN_JOURNAL_CALLBACKS_INIT", r"capstan_journal_callbacks_init", r"capstan_journal_\w+", r"capstan_registry_set_journal"]),
    ("Streams",
     """A capstan_stream reads a streamed model response as it arrives
(capstan_stream_feed), passes text deltas on and starts each tool call as
soon as it is complete. Made by capstan_stream_new, ended by
capstan_stream_finish, freed by capstan_stream_free.""",
     [r"capstan_text_fn", r"capstan_stream_sink", r"CAPSTAN_STREAM_SINK_INIT",
      r"capstan_stream_sink_init", r"CAPSTAN_STREAM_\w+", r"capstan_stream_\w+"]),
    ("MCP server",
     """Serves a registry's tools over the Model Context Protocol: on stdio
(capstan_mcp_server_serve_stdio, blocking) or streamable HTTP
(capstan_mcp_server_start makes a capstan_mcp_server; stop it with
capstan_mcp_server_stop, free it with capstan_mcp_server_free).""",
     [r"capstan_mcp_server_options", r"CAPSTAN_MCP_SERVER_OPTIONS_INIT",
      r"capstan_mcp_server_options_init", r"capstan_mcp_server_\w+"]),
    ("MCP mounts",
     """A capstan_mcp_mount connects to an MCP server (a command on stdio or an
HTTP URL) and registers its tools in a registry until
capstan_mcp_mount_free. A server over HTTP that asks for OAuth is
authorized through the host's callbacks (capstan_mcp_authorize_fn, and
optionally a token store), or without a user: a client secret or key, or
a JWT from the host (capstan_mcp_assertion_fn). What a server asks while running a tool
(elicitation, sampling, roots) the host answers through
capstan_mcp_input_fn.""",
     [r"capstan_mcp_authorize_fn", r"capstan_mcp_tokens_load_fn", r"capstan_mcp_tokens_save_fn",
      r"CAPSTAN_MCP_REDIRECT_MAX", r"CAPSTAN_MCP_TOKENS_MAX", r"capstan_mcp_assertion_fn",
      r"CAPSTAN_MCP_ASSERTION_MAX", r"capstan_mcp_input_fn",
      r"CAPSTAN_MCP_INPUT_\w+", r"capstan_mcp_mount_options", r"CAPSTAN_MCP_MOUNT_OPTIONS_INIT",
      r"capstan_mcp_mount_options_init", r"CAPSTAN_MCP_RECONNECT_NEVER", r"capstan_mcp_mount_\w+"]),
]

ITEMS_MARK = "/* capstan:items */"
FUNCS_OPEN = '#ifdef __cplusplus\nextern "C" {\n#endif // __cplusplus\n'
FUNCS_CLOSE = '#ifdef __cplusplus\n}  // extern "C"\n#endif  // __cplusplus\n'


def fail(message):
    sys.stderr.write("header_sections.py: " + message + "\n")
    sys.exit(1)


def chunks(text):
    """Top-level blank-line separated chunks (a chunk's lines never blank)."""
    out, cur = [], []
    for line in text.split("\n"):
        if line.strip() == "":
            if cur:
                out.append("\n".join(cur))
                cur = []
        else:
            cur.append(line)
    if cur:
        out.append("\n".join(cur))
    return out


def declaration(chunk):
    """The chunk without its leading doc comment."""
    text = chunk
    if text.lstrip().startswith("/*"):
        end = text.index("*/") + 2
        text = text[end:]
    return text.strip()


def name_of(chunk):
    decl = declaration(chunk)
    m = re.match(r"#define\s+(\w+)", decl)
    if m:
        return m.group(1)
    m = re.search(r"\(\*\s*(\w+)\)\s*\(", decl)
    if decl.startswith("typedef") and m:
        return m.group(1)
    if decl.startswith("typedef"):
        return re.findall(r"(\w+)\s*;\s*$", decl)[0]
    m = re.search(r"\b(capstan_\w+)\s*\(", decl)
    if m:
        return m.group(1)
    fail("cannot name this declaration:\n" + chunk)


def bit(chunk):
    m = re.search(r"\(1u << (\d+)\)\s*$", declaration(chunk))
    return int(m.group(1)) if m else -1


def place(name):
    for s, (_, _, patterns) in enumerate(SECTIONS):
        for p, pattern in enumerate(patterns):
            if re.fullmatch(pattern, name):
                return s, p
    fail(f"{name} matches no section: add it to SECTIONS in tools/header_sections.py")


def banner(number, title, intro=None):
    rule = "/* " + "=" * 72 + "\n"
    text = rule + f" * {number}. {title}\n"
    if intro:
        text += " *\n" + "".join(f" * {line}\n" if line else " *\n" for line in intro.split("\n"))
    return text + " * " + "=" * 72 + " */"


def main(src, dst):
    text = open(src).read()
    if ITEMS_MARK not in text or FUNCS_OPEN not in text or FUNCS_CLOSE not in text:
        fail("unexpected cbindgen output (markers missing)")
    head, rest = text.split(ITEMS_MARK, 1)
    types_part, rest = rest.split(FUNCS_OPEN, 1)
    funcs_part, tail = rest.split(FUNCS_CLOSE, 1)
    items = []  # (section, pattern, bit, order, is_function, name, chunk)
    for order, chunk in enumerate(chunks(types_part) + chunks(funcs_part)):
        is_function = order >= len(chunks(types_part))
        name = name_of(chunk)
        s, p = place(name)
        items.append((s, p, bit(chunk), order, is_function, name, chunk))
    items.sort(key=lambda i: i[:4])

    # Every type is declared before it is used.
    typedefs = {i[5] for i in items if declaration(i[6]).startswith("typedef")}
    seen = set()
    for item in items:
        decl = re.sub(r"/\*.*?\*/", "", item[6], flags=re.S)
        if not decl.lstrip().startswith("#define"):
            for used in set(re.findall(r"\bcapstan_\w+\b", decl)) & typedefs:
                if used not in seen and used != item[5]:
                    fail(f"{item[5]} uses {used} before its declaration: reorder SECTIONS")
        seen.add(item[5])

    out = [head.rstrip("\n"), ""]
    toc = ["/*", " * Contents"]
    for n, (title, _, _) in enumerate(SECTIONS, 1):
        toc.append(f" *  {n:2}. {title}")
    toc.append(" */")
    out += ["\n".join(toc), "", FUNCS_OPEN.rstrip("\n"), ""]
    current = None
    for item in items:
        if item[0] != current:
            current = item[0]
            title, intro, _ = SECTIONS[current]
            out += [banner(current + 1, title, intro), ""]
        out += [item[6], ""]
    out += [FUNCS_CLOSE.rstrip("\n"), tail.lstrip("\n").rstrip("\n"), ""]
    open(dst, "w").write("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
