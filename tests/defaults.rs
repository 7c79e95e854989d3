//! A `default` that fails its own schema (issue 9, item 3): never filled in,
//! reported, and refused under `CAPSTAN_REGISTRY_STRICT_DEFAULTS`.

use capstan::ffi::*;
use capstan::providers::{export_tools, ExportOptions, Format};
use capstan::schema::Schema;
use capstan::{Error, Registry, RegistryOptions, ToolDef, ToolFlags};
use serde_json::{json, Value};

/// `{"type":"boolean","default":"false"}`, as real tool sets contain it.
fn schema() -> Value {
    json!({"type": "object", "properties": {
        "verbose": {"type": "boolean", "default": "false"},
        "limit": {"type": "integer", "default": 10},
        "filter": {"type": "object", "properties": {
            "since": {"$ref": "#/$defs/day", "default": "yesterday"}
        }}
    }, "$defs": {"day": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"}}})
}

fn tool(parameters: Value) -> ToolDef {
    ToolDef {
        name: "search".into(),
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
fn a_default_that_fails_its_schema_is_never_filled_in() {
    let compiled = Schema::compile(&schema()).unwrap();
    // "false" is truthy in Python and JS: it must not reach the tool.
    assert_eq!(
        compiled.validate(json!({"filter": {}}), false),
        Ok(json!({"limit": 10, "filter": {}}))
    );
}

#[test]
fn a_default_that_fails_its_schema_is_reported_with_its_pointer() {
    let compiled = Schema::compile(&schema()).unwrap();
    let warnings = compiled.warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("default at /properties/verbose/default (\"false\") does not match its schema (expected boolean, got string \"false\")"),
        "{warnings:?}"
    );
    assert!(
        warnings[1]
            .starts_with("default at /properties/filter/properties/since/default (\"yesterday\")"),
        "{warnings:?}"
    );
    assert!(Schema::compile(
        &json!({"type": "object", "properties": {"n": {"type": "integer", "default": 1}}})
    )
    .unwrap()
    .warnings()
    .is_empty());
}

#[test]
fn registration_succeeds_and_describe_shows_the_warnings() {
    let registry = Registry::default();
    registry.register(tool(schema())).unwrap();
    let export = export_tools(
        &registry.specs(),
        Format::Describe,
        &ExportOptions::default(),
    );
    let warnings = &export.tools[0]["warnings"];
    assert_eq!(
        warnings.as_array().map(Vec::len),
        Some(2),
        "{}",
        export.tools
    );
    assert!(warnings[0]
        .as_str()
        .unwrap()
        .contains("/properties/verbose/default"));
    // A tool without such a default has no "warnings" key.
    let mut plain = tool(json!({"type": "object"}));
    plain.flags = ToolFlags(ToolFlags::REPLACE);
    registry.register(plain).unwrap();
    let export = export_tools(
        &registry.specs(),
        Format::Describe,
        &ExportOptions::default(),
    );
    assert!(export.tools[0].get("warnings").is_none());
}

#[test]
fn strict_defaults_registry_refuses_such_a_schema() {
    let registry = Registry::new(RegistryOptions {
        strict_defaults: true,
        ..RegistryOptions::default()
    });
    match registry.register(tool(schema())) {
        Err(Error::InvalidSchema(message)) => {
            assert!(message.contains("/properties/verbose/default"), "{message}")
        }
        other => panic!("expected InvalidSchema, got {:?}", other.err()),
    }
    assert!(registry.is_empty());
    let fine = json!({"type": "object", "properties": {"n": {"type": "integer", "default": 1}}});
    registry.register(tool(fine)).unwrap();
}

#[test]
fn strict_defaults_flag_reaches_the_c_abi() {
    unsafe extern "C" fn noop(_: *mut std::ffi::c_void, call: *mut capstan_call) {
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, c"ok".as_ptr(), CAPSTAN_NTS);
    }
    let parameters = std::ffi::CString::new(schema().to_string()).unwrap();
    for (flags, expected) in [
        (0, CAPSTAN_OK),
        (CAPSTAN_REGISTRY_STRICT_DEFAULTS, CAPSTAN_ERR_INVALID_SCHEMA),
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
                name: c"search".as_ptr(),
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
            assert_eq!(capstan_registry_add_tool(reg, &def), expected);
            capstan_registry_free(reg);
        }
    }
}

#[test]
fn a_default_object_is_judged_with_its_own_defaults_filled_in() {
    // {} lacks "mode", but a call fills "mode" in: the default is fine.
    let compiled = Schema::compile(&json!({"type": "object", "properties": {
        "options": {"type": "object", "default": {}, "required": ["mode"], "properties": {
            "mode": {"type": "string", "default": "fast"}
        }}
    }}))
    .unwrap();
    assert!(compiled.warnings().is_empty(), "{:?}", compiled.warnings());
    assert_eq!(
        compiled.validate(json!({}), false),
        Ok(json!({"options": {"mode": "fast"}}))
    );
}
