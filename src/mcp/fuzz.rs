//! Entry points for the fuzz target `mount_reader` (fuzz/fuzz_targets): the
//! mount's stdio reader, the bound on tool results and the tools/list
//! conversion, reached without a child process. Not a public API.

use rmcp::model::{JsonRpcMessage, ServerResult};
use serde_json::Value;

use super::bounds::{self, Listing};
use super::wire::{Bad, Frame, Framer};

pub use super::bounds::{bound_message, bound_tool_result, MAX_RESULT_BLOCKS};

/// What the reader made of a byte stream.
#[derive(Debug, Default)]
pub struct Read {
    /// Messages read (as JSON), in order.
    pub messages: Vec<Value>,
    /// Lines that could not be read: their id, whether they were requests,
    /// and why.
    pub bad: Vec<(Option<Value>, bool, String)>,
    /// Tools listed by the tools/list pages among the messages: name,
    /// description length, problem.
    pub listed: Vec<(String, usize, Option<String>)>,
    /// Why a listing stopped, if one did.
    pub listing_error: Option<String>,
}

/// Feeds `data` to a `Framer` (lines of at most `max_line` bytes, tool
/// results bounded by `result_bytes`) in pieces of `piece` bytes, and each
/// tools/list page it reads to one listing.
pub fn read(data: &[u8], piece: usize, max_line: usize, result_bytes: u64) -> Read {
    let mut framer = Framer::new(max_line, result_bytes);
    let mut out = Read::default();
    let mut listing = Listing::default();
    for mut chunk in data.chunks(piece.max(1)) {
        while !chunk.is_empty() {
            let (took, frame) = framer.push(chunk);
            chunk = &chunk[took..];
            match frame {
                Some(Frame::Message(message)) => {
                    out.messages
                        .push(serde_json::to_value(&*message).unwrap_or(Value::Null));
                    if let JsonRpcMessage::Response(response) = *message {
                        if let ServerResult::ListToolsResult(page) = response.result {
                            if out.listing_error.is_none() {
                                if let Err(e) = bounds::list_page(&mut listing, page) {
                                    out.listing_error = Some(e);
                                }
                            }
                        }
                    }
                }
                Some(Frame::Bad(Bad { id, request, why })) => out.bad.push((id, request, why)),
                None => {}
            }
            if took == 0 {
                break;
            }
        }
    }
    out.listed = listing
        .tools
        .into_iter()
        .map(|t| (t.name, t.description.chars().count(), t.problem))
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fuzz_entry_reads_messages_bad_lines_and_listings() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"a\",\"inputSchema\":{}}],\"nextCursor\":\"x\"}}\n\xff\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[],\"nextCursor\":\"x\"}}\n";
        let read = read(input, 7, 1 << 20, 1 << 20);
        assert_eq!(read.messages.len(), 2);
        assert_eq!(read.bad.len(), 1);
        assert_eq!(read.listed, [("a".to_string(), 0, None)]);
        assert!(read.listing_error.unwrap().contains("repeats"));
    }
}
