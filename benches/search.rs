//! Search over the registry (issue #32), as figures: per-query time (p50,
//! p99) over 10,000 tools, the index's heap, the cost it adds to registering
//! and removing a tool, and recall@5 on a public tool-retrieval set (BFCL,
//! `bench/data/bfcl_retrieval.json`) against a plain substring match.
//! Not a test: `make bench-search` (`cargo bench --bench search`).

#[allow(dead_code)]
mod common;

use std::time::{Duration, Instant};

use capstan::search::{SearchMode, SearchOptions};
use capstan::{Registry, ToolDef, ToolFlags};
use serde_json::{json, Value};

use common::heap;

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

const TOOLS: usize = 10_000;
const QUERIES: usize = 2_000;

/// xorshift64*: the same tool set every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Zipf-like: small indices far more often.
    fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((n as f64).powf(u) - 1.0) as usize % n
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

const VERBS: &[&str] = &[
    "get",
    "list",
    "create",
    "update",
    "delete",
    "search",
    "send",
    "fetch",
    "compute",
    "convert",
    "schedule",
    "cancel",
    "book",
    "translate",
    "summarize",
    "upload",
    "download",
    "validate",
    "sync",
    "archive",
    "approve",
    "assign",
    "close",
    "merge",
    "export",
    "import",
    "notify",
    "render",
    "resolve",
    "track",
];
const NOUNS: &[&str] = &[
    "invoice",
    "customer",
    "weather",
    "forecast",
    "repository",
    "issue",
    "commit",
    "email",
    "calendar",
    "event",
    "flight",
    "hotel",
    "ticket",
    "stock",
    "price",
    "order",
    "payment",
    "refund",
    "subscription",
    "user",
    "team",
    "channel",
    "message",
    "file",
    "folder",
    "document",
    "spreadsheet",
    "row",
    "column",
    "chart",
    "report",
    "dashboard",
    "metric",
    "alert",
    "incident",
    "deployment",
    "build",
    "pipeline",
    "container",
    "cluster",
    "node",
    "pod",
    "secret",
    "key",
    "certificate",
    "domain",
    "record",
    "contact",
    "lead",
    "opportunity",
    "campaign",
    "segment",
    "product",
    "inventory",
    "warehouse",
    "shipment",
    "route",
    "vehicle",
    "driver",
    "trip",
    "restaurant",
    "recipe",
    "ingredient",
    "song",
    "playlist",
    "album",
    "artist",
    "movie",
    "show",
    "episode",
    "book",
    "author",
    "review",
    "rating",
    "comment",
    "post",
    "thread",
    "reaction",
    "photo",
    "video",
    "image",
    "thumbnail",
    "transcript",
    "translation",
    "language",
    "currency",
    "exchange",
    "rate",
    "tax",
    "expense",
    "budget",
    "account",
    "balance",
    "transaction",
    "loan",
    "policy",
    "claim",
    "patient",
    "appointment",
    "prescription",
    "doctor",
    "course",
    "lesson",
    "student",
    "grade",
    "exam",
    "job",
    "candidate",
    "interview",
    "offer",
    "employee",
    "shift",
    "timesheet",
    "vacation",
    "meeting",
    "room",
    "desk",
    "device",
    "sensor",
    "reading",
    "firmware",
    "license",
    "contract",
    "signature",
    "template",
    "form",
    "survey",
    "response",
    "question",
    "answer",
    "note",
    "task",
    "project",
    "milestone",
    "sprint",
    "epic",
    "story",
    "bug",
    "label",
    "tag",
    "webhook",
    "token",
    "session",
    "log",
    "trace",
    "span",
    "query",
    "index",
    "table",
];
const SERVICES: &[&str] = &[
    "github",
    "gitlab",
    "jira",
    "slack",
    "stripe",
    "salesforce",
    "hubspot",
    "zendesk",
    "notion",
    "linear",
    "asana",
    "trello",
    "gmail",
    "outlook",
    "gcal",
    "drive",
    "dropbox",
    "box",
    "figma",
    "shopify",
    "twilio",
    "sendgrid",
    "datadog",
    "sentry",
    "pagerduty",
    "aws",
    "gcp",
    "azure",
    "k8s",
    "docker",
    "vercel",
    "netlify",
    "cloudflare",
    "spotify",
    "youtube",
    "netflix",
    "imdb",
    "yelp",
    "uber",
    "maps",
    "airtable",
    "sheets",
    "excel",
    "quickbooks",
    "xero",
    "workday",
    "greenhouse",
    "lever",
    "zoom",
    "teams",
    "discord",
    "reddit",
    "twitter",
    "linkedin",
    "medium",
    "wordpress",
    "openweather",
    "alphavantage",
    "amadeus",
    "booking",
];
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ter", "pra", "don", "vel", "sun", "ri", "gal", "mor", "ti", "zen", "pa",
    "qua", "bel", "nor", "ex", "lin", "sa", "ro", "fen", "di", "cam", "tu", "ver", "ol", "an",
];

/// A vocabulary of made-up words for descriptions, drawn Zipf-like as
/// natural text is.
fn filler(rng: &mut Rng) -> Vec<String> {
    (0..6000)
        .map(|_| {
            let n = 2 + rng.below(3);
            (0..n).map(|_| rng.pick(SYLLABLES)).collect::<String>()
        })
        .collect()
}

struct Synthetic {
    name: String,
    description: String,
    parameters: Value,
    verb: &'static str,
    noun: &'static str,
    service: &'static str,
}

fn synthetic_tools(rng: &mut Rng, words: &[String], n: usize) -> Vec<Synthetic> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let (verb, noun, service) = (rng.pick(VERBS), rng.pick(NOUNS), rng.pick(SERVICES));
        let name = format!("{service}_{verb}_{noun}");
        if !seen.insert(name.clone()) {
            continue;
        }
        let mut description = format!("{verb} a {noun} in {service}.");
        for _ in 0..(10 + rng.below(20)) {
            description.push(' ');
            description.push_str(&words[rng.zipf(words.len())]);
        }
        let mut properties = serde_json::Map::new();
        for _ in 0..(1 + rng.below(4)) {
            let pname = format!(
                "{}_{}",
                rng.pick(NOUNS),
                rng.pick(&["id", "name", "limit", "query", "date"])
            );
            let mut pdesc = format!("The {} of the {noun}", rng.pick(NOUNS));
            for _ in 0..rng.below(6) {
                pdesc.push(' ');
                pdesc.push_str(&words[rng.zipf(words.len())]);
            }
            properties.insert(pname, json!({"type": "string", "description": pdesc}));
        }
        out.push(Synthetic {
            name,
            description,
            parameters: json!({"type": "object", "properties": properties}),
            verb,
            noun,
            service,
        });
    }
    out
}

fn def(name: &str, description: &str, parameters: Value) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: description.into(),
        parameters,
        handler: Box::new(|call: capstan::Call| {
            let _ = call.complete_text("ok");
        }),
        timeout_ms: 0,
        max_output_chars: 0,
        flags: ToolFlags::default(),
    }
}

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    let i = ((times.len() as f64 - 1.0) * p).round() as usize;
    times[i].as_secs_f64() * 1e6
}

fn mib(bytes: isize) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn timing(reg: &Registry) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let words = filler(&mut rng);
    let tools = synthetic_tools(&mut rng, &words, TOOLS + 1_000);
    let (base, extra) = tools.split_at(TOOLS);
    for t in base {
        reg.register(def(&t.name, &t.description, t.parameters.clone()))
            .expect("registers");
    }
    let words_opts = SearchOptions {
        limit: 5,
        mode: SearchMode::Words,
    };

    println!("== search over {TOOLS} tools (synthetic: service_verb_noun names, ~20-word descriptions, 1-4 parameters)");
    let before = heap::mark();
    let start = Instant::now();
    reg.search("warm up", &words_opts).expect("search");
    let build = start.elapsed();
    let index_heap = heap::mark() - before;
    println!(
        "index build (first search)            {:>9.2} ms",
        build.as_secs_f64() * 1e3
    );
    println!(
        "index heap (allocator count)          {:>9.2} MiB   (target <= 20 MiB)",
        mib(index_heap)
    );
    println!(
        "index heap (its own estimate)         {:>9.2} MiB",
        mib(reg.search_index_bytes() as isize)
    );

    // Queries as a model writes them: the tool's words, some of them
    // reworded, plus words of its description.
    let queries: Vec<String> = (0..QUERIES)
        .map(|_| {
            let t = &tools[rng.below(TOOLS)];
            let mut q = match rng.below(3) {
                0 => format!("{} {} {}", t.verb, t.noun, t.service),
                1 => format!("{} the {}s", t.verb, t.noun),
                _ => format!("{} in {}", t.noun, t.service),
            };
            for _ in 0..rng.below(3) {
                q.push(' ');
                q.push_str(&words[rng.zipf(words.len())]);
            }
            q
        })
        .collect();
    let mut times = Vec::with_capacity(QUERIES);
    let mut found = 0usize;
    for q in &queries {
        let start = Instant::now();
        let hits = reg.search(q, &words_opts).expect("search");
        times.push(start.elapsed());
        found += usize::from(!hits.is_empty());
    }
    println!(
        "words query, limit 5 ({QUERIES} queries)   p50 {:>8.1} us   p99 {:>8.1} us   (target p50 <= 1000 us); {found} with results",
        percentile(&mut times, 0.5),
        percentile(&mut times, 0.99)
    );

    let regex_opts = SearchOptions {
        limit: 5,
        mode: SearchMode::Regex,
    };
    let patterns: Vec<String> = (0..200)
        .map(|i| {
            let t = &tools[rng.below(TOOLS)];
            match i % 3 {
                0 => format!("^{}_", t.service),
                1 => format!("(?i){}.*{}", t.verb, t.noun),
                _ => t.noun.to_string(),
            }
        })
        .collect();
    let mut times = Vec::new();
    for p in &patterns {
        let start = Instant::now();
        reg.search(p, &regex_opts).expect("regex search");
        times.push(start.elapsed());
    }
    println!(
        "regex query, limit 5 (200 patterns)    p50 {:>8.1} us   p99 {:>8.1} us   (scans every tool's text)",
        percentile(&mut times, 0.5),
        percentile(&mut times, 0.99)
    );

    // What the index adds to registering and removing a tool: the same
    // 1,000 tools added to and removed from this registry (indexed) and from
    // one never searched (no index), each call timed.
    let plain = Registry::default();
    for t in base {
        plain
            .register(def(&t.name, &t.description, t.parameters.clone()))
            .expect("registers");
    }
    let cost = |reg: &Registry| {
        let mut add = Vec::new();
        let mut remove = Vec::new();
        for t in extra {
            let d = def(&t.name, &t.description, t.parameters.clone());
            let start = Instant::now();
            reg.register(d).expect("registers");
            add.push(start.elapsed());
        }
        for t in extra {
            let start = Instant::now();
            reg.unregister(&t.name).expect("unregisters");
            remove.push(start.elapsed());
        }
        (percentile(&mut add, 0.5), percentile(&mut remove, 0.5))
    };
    let (add_ix, remove_ix) = cost(reg);
    let (add_plain, remove_plain) = cost(&plain);
    println!(
        "register a tool, p50                   {add_ix:>8.1} us indexed, {add_plain:>8.1} us not: the index adds {:.1} us",
        add_ix - add_plain
    );
    println!(
        "unregister a tool, p50                 {remove_ix:>8.1} us indexed, {remove_plain:>8.1} us not: the index adds {:.1} us",
        remove_ix - remove_plain
    );
}

/// Lower-case words of 3 letters or more.
fn plain_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect();
    words.sort();
    words.dedup();
    words
}

fn recall() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/bench/data/bfcl_retrieval.json"
    );
    let data: Value = match std::fs::read_to_string(path).map(|t| serde_json::from_str(&t)) {
        Ok(Ok(v)) => v,
        _ => {
            println!(
                "recall: {path} missing or unreadable (python3 tools/bfcl_retrieval.py makes it)"
            );
            return;
        }
    };
    let empty = Vec::new();
    let tools = data["tools"].as_array().unwrap_or(&empty);
    let queries = data["queries"].as_array().unwrap_or(&empty);
    let reg = Registry::default();
    let mut plain_schema = 0;
    let mut texts = Vec::new();
    for t in tools {
        let name = t["name"].as_str().unwrap_or_default();
        let description = t["description"].as_str().unwrap_or_default();
        let parameters = t["parameters"].clone();
        if reg.register(def(name, description, parameters)).is_err() {
            // A schema capstan refuses: indexed without its parameters.
            plain_schema += 1;
            reg.register(def(name, description, json!({"type": "object"})))
                .expect("registers");
        }
        texts.push((
            name.to_string(),
            format!("{name} {description}").to_lowercase(),
        ));
    }
    texts.sort();
    let opts = SearchOptions {
        limit: 5,
        mode: SearchMode::Words,
    };
    let (mut hits_bm25, mut hits_plain, mut total) = (0usize, 0usize, 0usize);
    for q in queries {
        let question = q["question"].as_str().unwrap_or_default();
        let expected = q["tool"].as_str().unwrap_or_default();
        if question.is_empty() || expected.is_empty() {
            continue;
        }
        // Queries past the bound are cut, as a host would.
        let mut cut = question.len().min(capstan::search::MAX_QUERY_BYTES);
        while !question.is_char_boundary(cut) {
            cut -= 1;
        }
        total += 1;
        if let Ok(found) = reg.search(&question[..cut], &opts) {
            hits_bm25 += usize::from(found.iter().any(|h| h.name == expected));
        }
        // Baseline: rank tools by how many of the question's words (3
        // letters or more) occur as substrings of "name description".
        let words = plain_words(question);
        let mut scored: Vec<(usize, &str)> = texts
            .iter()
            .map(|(name, text)| {
                (
                    words.iter().filter(|w| text.contains(w.as_str())).count(),
                    name.as_str(),
                )
            })
            .filter(|(n, _)| *n > 0)
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        hits_plain += usize::from(scored.iter().take(5).any(|(_, n)| *n == expected));
    }
    println!(
        "== recall@5 on BFCL ({}): {} tools, {total} questions",
        data["source"].as_str().unwrap_or("?"),
        tools.len()
    );
    if plain_schema > 0 {
        println!("({plain_schema} tools with schemas capstan refuses, indexed without parameters)");
    }
    let pct = |n: usize| 100.0 * n as f64 / total.max(1) as f64;
    println!(
        "capstan search (BM25)                  recall@5 {:>5.1} %",
        pct(hits_bm25)
    );
    println!(
        "substring match baseline               recall@5 {:>5.1} %",
        pct(hits_plain)
    );
}

fn main() {
    // `cargo test --all-targets` runs benches once without `--bench`: skip the work.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    timing(&Registry::default());
    recall();
}
