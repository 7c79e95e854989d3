//! The built-in search tool as the provider formats show it: the exports of
//! a registry's tools, which leave out the deferred tools the search tool
//! (`capstan_core::search_tool`) has not found yet.

use capstan_core::registry::Registry;

use crate::providers::{export_tools, Export, ExportNote, ExportOptions, Format};

/// A registry's tools in a provider's format (`Registry::export_tools`).
pub trait ExportTools {
    /// The tools as format `fmt` takes them: what `capstan_registry_tools_json`
    /// writes (see the implementation for `Registry`).
    fn export_tools(&self, fmt: Format, opts: &ExportOptions) -> Export;
}

impl ExportTools for Registry {
    /// The tools as format `fmt` takes them: what `capstan_registry_tools_json`
    /// writes. `describe` lists every tool. The provider formats leave out the
    /// deferred tools not yet loaded, unless `opts.native_search` (OpenAI
    /// Responses and Anthropic): then every tool is exported, deferred ones
    /// with `defer_loading: true`, and the export is remembered: it decides
    /// how the model's searches in that format are answered (OpenAI: the
    /// `tool_search_output` definitions are strict like this export;
    /// Anthropic: the search tool's results are `tool_reference` blocks
    /// after a native export, JSON after another one).
    fn export_tools(&self, fmt: Format, opts: &ExportOptions) -> Export {
        let native =
            opts.native_search && matches!(fmt, Format::OpenAiResponses | Format::Anthropic);
        match fmt {
            Format::OpenAiResponses => self.note_native_export(Some(native && opts.strict), None),
            Format::Anthropic => self.note_native_export(None, Some(native)),
            _ => {}
        }
        let specs = match fmt {
            Format::Describe => self.specs(),
            _ if native => self.specs(),
            _ => self.visible_specs(),
        };
        let opts = ExportOptions {
            native_search: native,
            search_tool: self.search_tool_config().map(|c| c.name),
            ..opts.clone()
        };
        let mut export = export_tools(&specs, fmt, &opts);
        if native && opts.search_tool.is_none() && fmt == Format::Anthropic {
            if let Some(tool) = specs.iter().find(|s| s.flags.deferred()) {
                export.report.push(ExportNote {
                    tool: tool.name.clone(),
                    pointer: String::new(),
                    message: "deferred tools are exported with defer_loading but no search tool \
                              is registered to find them (capstan_registry_add_search_tool)"
                        .into(),
                });
            }
        }
        export
    }
}
