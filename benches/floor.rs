//! The floor for the ABI single-call figure, measured the way
//! `bench/c/abi_bench.c` measures capstan_registry_execute (median of 21 rounds, wall
//! and thread CPU time), so that `make bench` can print their ratio from one
//! run.
//!
//! `cargo bench --bench floor` prints the medians in ns per call and, when
//! CAPSTAN_FLOOR_OUT names a file, writes "WALL_NS CPU_NS" there for the C
//! bench. Under `cargo test` (no `--bench` argument) it only checks that it runs.

#[allow(dead_code)] // each bench target uses a different part of it
mod common;

use std::hint::black_box;
use std::time::Instant;

use common::*;

const ROUNDS: usize = 21;
const PER_ROUND: usize = 9_524; // 21 x 9,524 = 200,004 calls, as in the C bench

/// This thread's CPU time: unlike wall time, it leaves out time spent
/// descheduled, which matters on a shared machine.
fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

fn main() {
    let validator = floor_validator();
    let run = || {
        black_box(floor(
            &validator,
            black_box(WEATHER_CALL),
            black_box(WEATHER_RESULT),
        ))
    };
    if !std::env::args().any(|a| a == "--bench") {
        run();
        return;
    }
    for _ in 0..PER_ROUND {
        run();
    }
    let mut wall = Vec::with_capacity(ROUNDS);
    let mut cpu = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let (start, cpu_start) = (Instant::now(), thread_cpu_ns());
        for _ in 0..PER_ROUND {
            run();
        }
        cpu.push((thread_cpu_ns() - cpu_start) / PER_ROUND as f64);
        wall.push(start.elapsed().as_nanos() as f64 / PER_ROUND as f64);
    }
    let (wall, cpu) = (median(&mut wall), median(&mut cpu));
    println!(
        "floor (parse + validate + render, Rust): {wall:.1} ns/call (cpu {cpu:.1}), median of {ROUNDS} rounds x {PER_ROUND}"
    );
    if let Some(path) = std::env::var_os("CAPSTAN_FLOOR_OUT") {
        if let Err(e) = std::fs::write(&path, format!("{wall:.1} {cpu:.1}\n")) {
            eprintln!("floor: cannot write {}: {e}", path.to_string_lossy());
            std::process::exit(1);
        }
    }
}
