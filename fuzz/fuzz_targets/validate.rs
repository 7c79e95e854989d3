//! Arguments against a fixed set of realistic schemas (fuzz/schemas: weather,
//! file edit, SQL query, a recursive calculator, draft-07 email). Input: one
//! byte choosing the tool (low bits), the coercing registry (0x40) and strict
//! nulls (0x80), then the arguments.
#![no_main]

use std::sync::OnceLock;

use capstan::ffi::*;
use capstan_fuzz::*;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fn registries() -> &'static [Reg; 2] {
    static REGS: OnceLock<[Reg; 2]> = OnceLock::new();
    REGS.get_or_init(|| {
        [0, CAPSTAN_REGISTRY_COERCE].map(|flags| {
            let reg = new_registry(flags);
            for (name, schema) in SCHEMAS {
                let schema = c_string(schema.as_bytes());
                let st = register(reg, name, Some(&schema), tool_echo, 0, 0);
                assert_eq!(
                    st,
                    CAPSTAN_OK,
                    "{name:?} did not register: {}",
                    last_error()
                );
            }
            reg
        })
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, arguments)) = data.split_first() else {
        return;
    };
    let (name, _) = SCHEMAS[usize::from(selector & 0x3f) % SCHEMAS.len()];
    let reg = registries()[usize::from(selector & 0x40 != 0)];
    let Ok(args) = serde_json::from_slice::<Value>(arguments) else {
        return;
    };
    let calls = json!({"id": "c1", "name": name.to_str().unwrap_or_default(), "arguments": args})
        .to_string();
    let strict = if selector & 0x80 != 0 {
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
    let content = results[0]["content"].as_str().unwrap_or_default();
    match outcome {
        Some("ok") => {
            let echoed: Value =
                serde_json::from_str(content).expect("echoed arguments are not JSON");
            assert!(
                echoed.is_object(),
                "arguments that are not an object passed: {echoed}"
            );
        }
        Some("invalid_arguments") => {
            assert!(!content.is_empty(), "invalid arguments without a message");
        }
        other => panic!("unexpected outcome {other:?}: {results}"),
    }
});
