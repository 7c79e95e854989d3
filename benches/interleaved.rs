//! The single synchronous call against the floor, both in this one process,
//! in interleaved rounds (issue #26, item 4): a round of `floor()`, a round
//! of `capstan_registry_execute` through the C ABI (a C-ABI tool callback
//! that returns its JSON with `capstan_call_return`, as `abi_bench.c`'s),
//! and so on. Each side's figure is the median of its rounds' thread CPU
//! time per call (and wall time); the ratio is taken from those medians.
//! Interleaving spreads a change of the machine's load over both sides,
//! and the two share one allocator and one set of caches.
//!
//! Two fixtures: the small `get_weather` schema, and the ~1 KB realistic
//! schema with a call that leaves its four defaults out.
//!
//! `cargo bench --bench interleaved` prints the table; under `cargo test`
//! (no `--bench` argument) it runs each side once as a smoke check.
//! `--lib PATH` (repeatable) runs the capstan side through that library,
//! loaded with `dlopen`, instead of the one linked in: `--lib old.so --lib
//! target/release/libcapstan.so` compares two builds in the same rounds.
//! `--profile-single N` runs only the capstan side N times (for perf).

#[allow(dead_code)] // each bench target uses a different part of it
mod common;

use std::ffi::{c_char, c_void};
use std::hint::black_box;
use std::time::Instant;

use capstan::ffi::*;
use common::*;

type Execute = unsafe extern "C" fn(
    *mut capstan_registry,
    *const c_char,
    usize,
    *const capstan_exec_options,
    *mut *mut c_char,
    *mut usize,
) -> capstan_status;

type RegistryNew = unsafe extern "C" fn(
    *const capstan_registry_options,
    *mut *mut capstan_registry,
) -> capstan_status;
type ToolDefInit = unsafe extern "C" fn(*mut capstan_tool_def) -> capstan_status;
type AddTool =
    unsafe extern "C" fn(*mut capstan_registry, *const capstan_tool_def) -> capstan_status;
type StringFree = unsafe extern "C" fn(*mut c_char);
type CallReturn = unsafe extern "C" fn(
    *mut capstan_call,
    capstan_content,
    *const c_char,
    usize,
) -> capstan_status;

/// The C functions the bench calls, from the linked-in library or one
/// loaded with `dlopen`.
struct Api {
    label: String,
    registry_new: RegistryNew,
    tool_def_init: ToolDefInit,
    add_tool: AddTool,
    execute: Execute,
    string_free: StringFree,
    call_return: CallReturn,
}

fn linked_api() -> Api {
    Api {
        label: "capstan (linked in)".into(),
        registry_new: capstan_registry_new,
        tool_def_init: capstan_tool_def_init,
        add_tool: capstan_registry_add_tool,
        execute: capstan_registry_execute,
        string_free: capstan_string_free,
        call_return: capstan_call_return,
    }
}

/// Loads `path` (kept loaded for the process) and finds the functions.
fn loaded_api(path: &str) -> Api {
    let c_path = cstring(path);
    // SAFETY: dlopen/dlsym with valid NUL-terminated strings; each symbol
    // is a function of the C ABI with the type it is cast to (capstan.h).
    unsafe {
        let lib = libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        assert!(!lib.is_null(), "cannot dlopen {path}");
        let sym = |name: &str| {
            let c_name = cstring(name);
            let f = libc::dlsym(lib, c_name.as_ptr());
            assert!(!f.is_null(), "{path} has no {name}");
            f
        };
        Api {
            label: path.to_string(),
            registry_new: std::mem::transmute::<*mut c_void, RegistryNew>(sym(
                "capstan_registry_new",
            )),
            tool_def_init: std::mem::transmute::<*mut c_void, ToolDefInit>(sym(
                "capstan_tool_def_init",
            )),
            add_tool: std::mem::transmute::<*mut c_void, AddTool>(sym("capstan_registry_add_tool")),
            execute: std::mem::transmute::<*mut c_void, Execute>(sym("capstan_registry_execute")),
            string_free: std::mem::transmute::<*mut c_void, StringFree>(sym("capstan_string_free")),
            call_return: std::mem::transmute::<*mut c_void, CallReturn>(sym("capstan_call_return")),
        }
    }
}

const ROUNDS: usize = 31;
const PER_ROUND: usize = 4_000;

/// A call to the realistic tool: `query` and `price` given, the four
/// defaulted properties left out.
const REALISTIC_CALL: &str = r#"{"id":"call_2","name":"search_catalogue","arguments":{"query":"dune","tags":["sci-fi","classic"],"price":{"max":20,"currency":"EUR"}}}"#;

fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

unsafe extern "C" fn json_tool(user_data: *mut c_void, call: *mut capstan_call) {
    // SAFETY: user_data is the Api, alive for the whole run.
    let api = &*user_data.cast::<Api>();
    let st = (api.call_return)(
        call,
        CAPSTAN_CONTENT_JSON,
        WEATHER_RESULT.as_ptr().cast::<c_char>(),
        WEATHER_RESULT.len(),
    );
    assert_eq!(st, CAPSTAN_OK, "capstan_call_return failed");
}

fn cstring(s: &str) -> std::ffi::CString {
    std::ffi::CString::new(s).expect("no NUL in fixtures")
}

struct Fixture {
    name: &'static str,
    call: &'static str,
    validator: jsonschema::Validator,
}

/// A registry of the fixtures' tools. The registry is never freed (`api`
/// lives for the process).
fn registry(api: &'static Api, fixtures: &[(&str, String)]) -> *mut capstan_registry {
    let mut reg = std::ptr::null_mut();
    // SAFETY: plain C ABI use with valid pointers.
    unsafe {
        assert_eq!((api.registry_new)(std::ptr::null(), &mut reg), CAPSTAN_OK);
        for (name, schema) in fixtures {
            let (name, schema) = (cstring(name), cstring(schema));
            let mut def: capstan_tool_def = std::mem::zeroed();
            assert_eq!((api.tool_def_init)(&mut def), CAPSTAN_OK);
            def.name = name.as_ptr();
            def.parameters = schema.as_ptr();
            def.callback = Some(json_tool);
            def.user_data = (api as *const Api).cast_mut().cast::<c_void>();
            assert_eq!((api.add_tool)(reg, &def), CAPSTAN_OK);
        }
    }
    reg
}

/// One sync call through the C ABI; the results JSON is checked once.
fn execute(api: &Api, reg: *mut capstan_registry, call: &str, check: bool) {
    let mut out: *mut c_char = std::ptr::null_mut();
    let mut len = 0usize;
    // SAFETY: valid registry, text and out pointers.
    unsafe {
        let st = (api.execute)(
            reg,
            call.as_ptr().cast::<c_char>(),
            call.len(),
            std::ptr::null(),
            &mut out,
            &mut len,
        );
        assert_eq!(st, CAPSTAN_OK, "capstan_registry_execute failed");
        if check {
            let text = std::slice::from_raw_parts(out.cast::<u8>(), len);
            let text = std::str::from_utf8(text).expect("results are UTF-8");
            assert!(text.contains(r#""outcome":"ok""#), "{text}");
        }
        (api.string_free)(out);
    }
}

/// (wall ns, thread cpu ns) per call of `f` over one round.
fn round(mut f: impl FnMut()) -> (f64, f64) {
    let (start, cpu) = (Instant::now(), thread_cpu_ns());
    for _ in 0..PER_ROUND {
        f();
    }
    (
        start.elapsed().as_nanos() as f64 / PER_ROUND as f64,
        (thread_cpu_ns() - cpu) / PER_ROUND as f64,
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut apis: Vec<&'static Api> = args
        .iter()
        .enumerate()
        .filter(|(_, a)| *a == "--lib")
        .filter_map(|(i, _)| args.get(i + 1))
        .map(|path| &*Box::leak(Box::new(loaded_api(path))))
        .collect();
    if apis.is_empty() {
        apis.push(Box::leak(Box::new(linked_api())));
    }
    let realistic = realistic_schema(0);
    let tools = [
        ("get_weather", WEATHER_SCHEMA.to_string()),
        ("search_catalogue", realistic.to_string()),
    ];
    let sides: Vec<(&Api, *mut capstan_registry)> = apis
        .iter()
        .map(|api| (*api, registry(api, &tools)))
        .collect();
    let fixtures = [
        Fixture {
            name: "get_weather (3 properties)",
            call: WEATHER_CALL,
            validator: floor_validator(),
        },
        Fixture {
            name: "search_catalogue (~1 KB schema)",
            call: REALISTIC_CALL,
            validator: jsonschema::validator_for(&realistic).expect("fixture schema compiles"),
        },
    ];
    if let Some(i) = args.iter().position(|a| a == "--profile-single") {
        let n: usize = args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(200_000);
        let (api, reg) = sides[0];
        for _ in 0..n {
            execute(api, reg, WEATHER_CALL, false);
        }
        return;
    }
    for f in &fixtures {
        for (api, reg) in &sides {
            execute(api, *reg, f.call, true);
        }
        black_box(floor(&f.validator, f.call, WEATHER_RESULT));
    }
    if !args.iter().any(|a| a == "--bench") {
        return; // `cargo test`: a smoke run only
    }
    println!(
        "single sync call vs floor(), one process, interleaved rounds ({ROUNDS} x {PER_ROUND} \
         calls a side), median per call; thread CPU time (wall in brackets)"
    );
    println!("| fixture | library | floor ns | capstan ns | ratio | goal <= 1.5x |");
    println!("|---|---|---|---|---|---|");
    for f in &fixtures {
        let floor_round = || {
            round(|| {
                drop(black_box(floor(
                    &f.validator,
                    black_box(f.call),
                    WEATHER_RESULT,
                )))
            })
        };
        let capstan_round =
            |side: usize| round(|| execute(sides[side].0, sides[side].1, black_box(f.call), false));
        // A warm-up round of each.
        floor_round();
        for side in 0..sides.len() {
            capstan_round(side);
        }
        let mut floor_samples = (vec![], vec![]);
        let mut side_samples = vec![(vec![], vec![]); sides.len()];
        for r in 0..ROUNDS {
            // Each round runs every side once, starting at a different one.
            for k in 0..=sides.len() {
                let at = (r + k) % (sides.len() + 1);
                let (wall, cpu) = if at == sides.len() {
                    let s = floor_round();
                    floor_samples.0.push(s.0);
                    floor_samples.1.push(s.1);
                    continue;
                } else {
                    capstan_round(at)
                };
                side_samples[at].0.push(wall);
                side_samples[at].1.push(cpu);
            }
        }
        let fw = median(&mut floor_samples.0);
        let fc = median(&mut floor_samples.1);
        for (side, (wall, cpu)) in side_samples.iter_mut().enumerate() {
            let (cw, cc) = (median(wall), median(cpu));
            println!(
                "| {} | {} | {fc:.0} ({fw:.0}) | {cc:.0} ({cw:.0}) | {:.2}x ({:.2}x) | {} |",
                f.name,
                sides[side].0.label,
                cc / fc,
                cw / fw,
                if cc / fc <= 1.5 { "met" } else { "NO" }
            );
            if side == 0 {
                // The row of `make bench-bindings` (issue #46, item 6).
                let row = serde_json::json!({
                    "binding": "core", "case": "lone call", "tool": f.name,
                    "metric": "cpu ns/call", "capstan": cc.round(),
                    "peer": "the same work in Rust (benches/common floor: parse, validate, render)",
                    "peer_value": fc.round(), "goal": "<= 1.5x peer", "met": cc / fc <= 1.5,
                });
                println!("BENCH-ROW {row}");
            }
        }
    }
}
