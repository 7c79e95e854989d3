//! capstan's provider formats and what is built on them: tools exported
//! and calls parsed in OpenAI Chat and Responses, Anthropic, Gemini and MCP
//! shapes (`providers`), one agent turn (`turn`), streamed responses
//! (`stream`), history checks and repair (`history`) and a registry's tools
//! exported (`export`, which hides deferred tools the search tool has not
//! found). Above `capstan-core`, below the MCP bridge and
//! the C ABI: it knows no MCP transport and no C.

pub mod export;
pub mod history;
pub mod providers;
pub mod stream;
pub mod turn;

pub use turn::run_turn;
