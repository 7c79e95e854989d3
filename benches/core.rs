//! Criterion benches of the core paths through the safe Rust API: validate,
//! render, execute inline (one call), execute in parallel (a batch), register,
//! and the floor the ABI figure is compared with (see BENCHMARKS.md).

#[allow(dead_code)] // each bench target uses a different part of it
mod common;

use std::hint::black_box;
use std::time::Duration;

use capstan::call::results_to_json;
use capstan::schema::Schema;
use capstan::{
    execute, CallRequest, ContentKind, ExecOptions, Outcome, Registry, ToolDef, ToolFlags,
    ToolResult,
};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use serde_json::{json, Value};

use common::*;

const BATCH: usize = 10_000;

fn tool(
    name: &str,
    parameters: Value,
    f: impl Fn(capstan::Call) + Send + Sync + 'static,
) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: format!("{name} tool"),
        parameters,
        handler: Box::new(f),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    }
}

fn registry() -> Registry {
    let reg = Registry::default();
    reg.register(tool("get_weather", weather_schema(), |call| {
        let _ = call.complete(ContentKind::Json, WEATHER_RESULT);
    }))
    .expect("get_weather registers");
    reg.register(tool("noop", json!({"type": "object"}), |call| {
        let _ = call.complete_text("ok");
    }))
    .expect("noop registers");
    reg
}

fn trivial_calls(n: usize) -> Vec<CallRequest> {
    (0..n)
        .map(|i| CallRequest::new(format!("c{i}"), "noop", json!({})))
        .collect()
}

fn bench_floor(c: &mut Criterion) {
    let validator = floor_validator();
    c.bench_function("floor/parse_validate_render", |b| {
        b.iter(|| {
            floor(
                &validator,
                black_box(WEATHER_CALL),
                black_box(WEATHER_RESULT),
            )
        })
    });
}

fn bench_validate(c: &mut Criterion) {
    let schema = Schema::compile(&weather_schema()).expect("schema compiles");
    let args = json!({"city": "Paris", "days": 3});
    let mut g = c.benchmark_group("validate");
    g.bench_function("get_weather_valid", |b| {
        b.iter_batched(
            || args.clone(),
            |a| schema.validate(a, false),
            BatchSize::SmallInput,
        )
    });
    let bad = json!({"city": "", "units": "kelvin", "days": 40, "extra": 1});
    g.bench_function("get_weather_invalid", |b| {
        b.iter_batched(
            || bad.clone(),
            |a| schema.validate(a, false),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn bench_render(c: &mut Criterion) {
    let mut g = c.benchmark_group("render");
    g.bench_function("json_content", |b| {
        b.iter(|| capstan::render::render(ContentKind::Json, black_box(WEATHER_RESULT)))
    });
    let result = ToolResult::new("call_1", "get_weather", Outcome::Ok, WEATHER_RESULT);
    // capstan's way (a Value tree, then Display) next to serde_json's
    // io::Write path on the same tree: the gap is Display's formatter adapter.
    g.bench_function("results_json_1_display", |b| {
        b.iter(|| results_to_json(std::slice::from_ref(black_box(&result))).to_string())
    });
    g.bench_function("results_json_1_to_vec", |b| {
        b.iter(|| serde_json::to_vec(&results_to_json(std::slice::from_ref(black_box(&result)))))
    });
    g.bench_function("parse_call_1", |b| {
        b.iter(|| CallRequest::list_from_str(black_box(WEATHER_CALL)))
    });
    g.finish();
}

fn bench_execute(c: &mut Criterion) {
    let reg = registry();
    let opts = ExecOptions::default();
    let mut g = c.benchmark_group("execute");
    // What capstan_registry_execute does minus the C boundary: text in, text out.
    g.bench_function("inline_1_call_text", |b| {
        b.iter(|| {
            let calls = CallRequest::list_from_str(black_box(WEATHER_CALL)).expect("valid calls");
            results_to_json(&execute(&reg, calls, &opts)).to_string()
        })
    });
    let call = CallRequest::list_from_str(WEATHER_CALL).expect("valid calls");
    g.bench_function("inline_1_call", |b| {
        b.iter_batched(
            || call.clone(),
            |calls| execute(&reg, calls, &opts),
            BatchSize::SmallInput,
        )
    });
    g.throughput(Throughput::Elements(BATCH as u64));
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(4));
    let calls = trivial_calls(BATCH);
    for (label, options) in [
        ("parallel_10000_limit8", ExecOptions::default()),
        (
            "sequential_10000",
            ExecOptions {
                parallel: false,
                ..ExecOptions::default()
            },
        ),
    ] {
        g.bench_function(label, |b| {
            b.iter_batched(
                || calls.clone(),
                |calls| execute(&reg, calls, &options),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

fn bench_register(c: &mut Criterion) {
    let reg = Registry::default();
    let schema = realistic_schema(0);
    c.bench_function("register/realistic_tool_replace", |b| {
        b.iter_batched(
            || {
                let mut def = tool("search_catalogue", schema.clone(), |call| {
                    let _ = call.complete_text("[]");
                });
                def.flags = ToolFlags(ToolFlags::REPLACE);
                def
            },
            |def| reg.register(def),
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(
    benches,
    bench_floor,
    bench_validate,
    bench_render,
    bench_execute,
    bench_register
);
criterion_main!(benches);
