//! Misspelled schema keywords (issue 49, item 4): JSON Schema ignores a
//! keyword it does not know, so `"requried"` checks nothing and the model
//! reads it as written. capstan reports such a key at registration with the
//! keyword meant, and refuses it under `CAPSTAN_REGISTRY_STRICT_KEYWORDS`.

use capstan::ffi::*;
use capstan::providers::{export_tools, ExportOptions, Format};
use capstan::{Error, Registry, RegistryOptions, ToolDef, ToolFlags};
use serde_json::{json, Value};

/// What a newcomer wrote: both keywords of the object misspelled.
fn misspelled() -> Value {
    json!({"type": "object",
           "propertes": {"city": {"type": "string"}},
           "requried": ["city"]})
}

fn tool(parameters: Value) -> ToolDef {
    ToolDef {
        name: "weather".into(),
        description: String::new(),
        parameters,
        handler: Box::new(|call: capstan::Call| {
            let _ = call.complete_text("ok");
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    }
}

#[test]
fn a_misspelled_keyword_is_reported_with_the_keyword_meant() {
    let registry = Registry::default();
    registry.register(tool(misspelled())).unwrap();
    let export = export_tools(
        &registry.specs(),
        Format::Describe,
        &ExportOptions::default(),
    );
    let warnings: Vec<&str> = export.tools[0]["warnings"]
        .as_array()
        .expect("describe has warnings")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0]
            .starts_with("unknown keyword \"propertes\" at the root: did you mean \"properties\"?"),
        "{warnings:?}"
    );
    assert!(
        warnings[1]
            .starts_with("unknown keyword \"requried\" at the root: did you mean \"required\"?"),
        "{warnings:?}"
    );
}

#[test]
fn strict_keywords_registry_refuses_a_misspelled_keyword() {
    let registry = Registry::new(RegistryOptions {
        strict_keywords: true,
        ..RegistryOptions::default()
    });
    match registry.register(tool(misspelled())) {
        Err(Error::InvalidSchema(message)) => assert!(
            message.contains("tool \"weather\"") && message.contains("did you mean \"properties\""),
            "{message}"
        ),
        other => panic!("expected InvalidSchema, got {:?}", other.err()),
    }
    assert!(registry.is_empty());
    // Spelled right, and with vendor keys far from every keyword: registers.
    let fine = json!({"type": "object", "x-internal": true, "nullable": false,
                      "properties": {"requried": {"type": "boolean"}}, "required": ["requried"]});
    registry.register(tool(fine)).unwrap();
}

#[test]
fn strict_defaults_does_not_refuse_a_misspelled_keyword() {
    let registry = Registry::new(RegistryOptions {
        strict_defaults: true,
        ..RegistryOptions::default()
    });
    registry.register(tool(misspelled())).unwrap();
}

#[test]
fn strict_keywords_flag_reaches_the_c_abi() {
    unsafe extern "C" fn noop(_: *mut std::ffi::c_void, call: *mut capstan_call) {
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, c"ok".as_ptr(), CAPSTAN_NTS);
    }
    let parameters = std::ffi::CString::new(misspelled().to_string()).unwrap();
    for (flags, expected) in [
        (0, CAPSTAN_OK),
        (CAPSTAN_REGISTRY_STRICT_DEFAULTS, CAPSTAN_OK),
        (CAPSTAN_REGISTRY_STRICT_KEYWORDS, CAPSTAN_ERR_INVALID_SCHEMA),
    ] {
        let options = capstan_registry_options {
            struct_size: std::mem::size_of::<capstan_registry_options>() as u32,
            flags,
            max_result_bytes: 0,
        };
        let mut reg = std::ptr::null_mut();
        unsafe {
            assert_eq!(capstan_registry_new(&options, &mut reg), CAPSTAN_OK);
            let def = capstan_tool_def {
                struct_size: std::mem::size_of::<capstan_tool_def>() as u32,
                name: c"weather".as_ptr(),
                description: std::ptr::null(),
                parameters: parameters.as_ptr(),
                callback: Some(noop),
                user_data: std::ptr::null_mut(),
                destroy: None,
                timeout_ms: 0,
                max_output_chars: 0,
                flags: 0,
                mcp_meta: std::ptr::null(),
            };
            assert_eq!(
                capstan_registry_add_tool(reg, &def),
                expected,
                "flags {flags}"
            );
            capstan_registry_free(reg);
        }
    }
}
