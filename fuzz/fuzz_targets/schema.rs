//! Schema compile + validate, both fuzzed. Input: one options byte, the
//! parameters schema, a NUL byte, the arguments. The schema is registered
//! through `capstan_registry_add_tool` (as a tool that echoes its arguments) and one
//! call runs through `capstan_registry_execute`.
//! Options: bit 0 coercing registry, bit 1 strict nulls, bit 2 arguments sent
//! as a JSON string (as OpenAI does).
#![no_main]

use std::sync::OnceLock;

use capstan::ffi::*;
use capstan_fuzz::*;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fn registries() -> &'static [Reg; 2] {
    static REGS: OnceLock<[Reg; 2]> = OnceLock::new();
    REGS.get_or_init(|| [new_registry(0), new_registry(CAPSTAN_REGISTRY_COERCE)])
}

fuzz_target!(|data: &[u8]| {
    let Some((&options, rest)) = data.split_first() else {
        return;
    };
    let split = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let schema = c_string(&rest[..split]);
    let arguments = rest.get(split + 1..).unwrap_or(b"{}");
    let reg = registries()[usize::from(options & 1)];

    if register(reg, c"t", Some(&schema), tool_echo, 0, 0) != CAPSTAN_OK {
        return;
    }
    // Arguments that are not JSON still reach capstan, as a string.
    let args_text = String::from_utf8_lossy(arguments);
    let args = match serde_json::from_str::<Value>(&args_text) {
        Ok(v) if options & 4 == 0 => v,
        _ => Value::String(args_text.into_owned()),
    };
    let calls = json!({"id": "c1", "name": "t", "arguments": args}).to_string();
    let strict = if options & 2 != 0 {
        CAPSTAN_EXEC_STRICT_NULLS as u8
    } else {
        0
    };
    let opts = exec_options(strict);
    let (mut out, mut len) = (std::ptr::null_mut(), 0);
    let st = unsafe {
        capstan_registry_execute(
            reg.0,
            calls.as_ptr().cast(),
            calls.len(),
            &opts,
            &mut out,
            &mut len,
        )
    };
    let results =
        take_json(st, out, len, "capstan_registry_execute").expect("execute refused a well-formed call");
    check_results(&results, 1, "capstan_registry_execute");
    let outcome = results[0]["outcome"].as_str();
    assert!(
        matches!(outcome, Some("ok" | "invalid_arguments")),
        "unexpected outcome {outcome:?}: {results}"
    );
    if outcome == Some("ok") {
        let content = results[0]["content"].as_str().unwrap_or_default();
        let echoed: Value = serde_json::from_str(content).expect("echoed arguments are not JSON");
        assert!(
            echoed.is_object(),
            "a tool received arguments that are not an object: {echoed}"
        );
    }
});
