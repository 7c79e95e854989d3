//! A fuzzed parameters schema, registered through `capstan_registry_add_tool`, then
//! exported in every format (strict, Gemini-lowered and natively deferred too), with the name
//! report and the statistics. Input: one byte of tool flags, then the schema.
#![no_main]

use std::sync::OnceLock;

use capstan::ffi::*;
use capstan_fuzz::*;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const FORMATS: [capstan_format; 6] = [
    CAPSTAN_FORMAT_DESCRIBE,
    CAPSTAN_FORMAT_OPENAI_CHAT,
    CAPSTAN_FORMAT_OPENAI_RESPONSES,
    CAPSTAN_FORMAT_ANTHROPIC,
    CAPSTAN_FORMAT_GEMINI,
    CAPSTAN_FORMAT_MCP,
];

fn registry() -> Reg {
    static REG: OnceLock<Reg> = OnceLock::new();
    *REG.get_or_init(|| new_registry(0))
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, schema)) = data.split_first() else {
        return;
    };
    let reg = registry();
    let schema = c_string(schema);
    let tool_flags = u32::from(flags) & (CAPSTAN_TOOL_REQUIRES_APPROVAL | CAPSTAN_TOOL_SERIAL);
    if register(reg, c"fuzzed_tool", Some(&schema), tool_echo, 0, tool_flags) != CAPSTAN_OK {
        return;
    }
    for fmt in FORMATS {
        let (mut out, mut len) = (std::ptr::null_mut(), 0);
        let st = unsafe {
            capstan_registry_tools_json(
                reg.0,
                fmt,
                std::ptr::null(),
                &mut out,
                &mut len,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        let tools = take_json(st, out, len, "capstan_registry_tools_json").expect("export failed");
        assert!(!tools.is_null(), "format {fmt} exported null");
        for (export_flags, deferred) in [
            (CAPSTAN_EXPORT_STRICT, CAPSTAN_EXPORT_DEFERRED_HIDE),
            (CAPSTAN_EXPORT_GEMINI_LOWER, CAPSTAN_EXPORT_DEFERRED_HIDE),
            (CAPSTAN_EXPORT_STRICT, CAPSTAN_EXPORT_DEFERRED_NATIVE),
        ] {
            let opts = capstan_export_options {
                struct_size: std::mem::size_of::<capstan_export_options>() as u32,
                flags: export_flags,
                deferred,
            };
            let (mut out, mut len) = (std::ptr::null_mut(), 0);
            let (mut report, mut report_len) = (std::ptr::null_mut(), 0);
            let st = unsafe {
                capstan_registry_tools_json(
                    reg.0,
                    fmt,
                    &opts,
                    &mut out,
                    &mut len,
                    &mut report,
                    &mut report_len,
                )
            };
            check_status(st, "capstan_registry_tools_json");
            if st == CAPSTAN_OK {
                take_json(st, out, len, "capstan_registry_tools_json");
                let report = take_json(st, report, report_len, "capstan_registry_tools_json report");
                assert!(
                    report.as_ref().is_some_and(Value::is_array),
                    "report is not an array"
                );
            } else {
                assert!(
                    out.is_null() && report.is_null(),
                    "export failed but wrote its outputs"
                );
            }
        }
    }
    let (mut out, mut len) = (std::ptr::null_mut(), 0);
    let st = unsafe { capstan_registry_names_json(reg.0, &mut out, &mut len) };
    take_json(st, out, len, "capstan_registry_names_json").expect("name report failed");
    let st = unsafe { capstan_registry_remove_tool(reg.0, c"fuzzed_tool".as_ptr(), CAPSTAN_NTS) };
    assert_eq!(st, CAPSTAN_OK, "unregister: {}", last_error());
});
