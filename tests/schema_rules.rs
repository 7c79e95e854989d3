//! The rules a host relies on when it registers a parameters schema, one test each.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::sync::Arc;

use capstan::error::Error;
use capstan::schema::{ArgumentError, ArgumentErrors, Schema};
use serde_json::{json, Value};

fn compile(schema: Value) -> Schema {
    Schema::compile(&schema).unwrap_or_else(|e| panic!("{schema} should compile: {e}"))
}

fn schema_error(schema: Value) -> String {
    match Schema::compile(&schema) {
        Err(Error::InvalidSchema(message)) => message,
        Err(other) => panic!("{schema}: expected InvalidSchema, got {other:?}"),
        Ok(_) => panic!("{schema}: expected InvalidSchema, but it compiled"),
    }
}

fn errors(schema: &Schema, args: Value) -> ArgumentErrors {
    match schema.validate(args.clone(), false) {
        Err(errors) => errors,
        Ok(v) => panic!("{args} should be invalid, got Ok({v})"),
    }
}

fn lines(errors: &ArgumentErrors) -> Vec<String> {
    errors.0.iter().map(ToString::to_string).collect()
}

fn err(pointer: &str, message: &str) -> ArgumentError {
    ArgumentError {
        pointer: pointer.to_owned(),
        message: message.to_owned(),
    }
}

// Rule 1: the root is an object schema.

#[test]
fn root_must_be_an_object_schema() {
    let prefix = "parameters schema root must be an object schema (\"type\": \"object\"), got ";
    for (schema, got) in [
        (json!(true), "the boolean schema true"),
        (json!(false), "the boolean schema false"),
        (json!(3), "number 3"),
        (json!("object"), "string \"object\""),
        (json!([]), "array []"),
        (json!({"type": "string"}), "\"type\": \"string\""),
        (
            json!({"type": ["object", "null"]}),
            "\"type\": [\"object\",\"null\"]",
        ),
        (
            json!({}),
            "a schema with neither \"type\" nor \"properties\"",
        ),
    ] {
        assert_eq!(schema_error(schema), format!("{prefix}{got}"));
    }
    for schema in [
        json!({"type": "object"}),
        json!({"type": ["object"]}),
        json!({"properties": {"a": {"type": "string"}}}),
    ] {
        compile(schema);
    }
    // The rule is capstan's, for tools; the lower level accepts any schema.
    assert!(Schema::compile_any(&json!({"type": "string"})).is_ok());
    assert!(Schema::compile_any(&json!(true)).is_ok());
}

#[test]
fn root_without_type_still_requires_object_arguments() {
    let source = json!({"properties": {"a": {"type": "integer"}}});
    let schema = compile(source.clone());
    assert_eq!(
        errors(&schema, json!([1, 2])).0,
        vec![err("", "arguments: expected object, got array [1,2]")]
    );
    assert_eq!(schema.validate(json!({"a": 1}), false), Ok(json!({"a": 1})));
    // Without the tool rule, JSON Schema lets a non-object through.
    assert!(Schema::compile_any(&source)
        .unwrap()
        .is_valid(&json!([1, 2])));
}

#[test]
fn source_is_the_schema_as_registered() {
    let source = json!({"type": "object", "properties": {"b": {}, "a": {"default": 1}}});
    assert_eq!(compile(source.clone()).source(), &source);
}

// Rule 2: drafts, and invalid schemas named where they fail.

#[test]
fn invalid_schema_names_where() {
    let message = schema_error(json!({"type": "object", "properties": {"a": {"type": "nope"}}}));
    assert!(message.starts_with("at /properties/a/type: "), "{message}");
    assert!(message.contains("\"nope\""), "{message}");

    let message = schema_error(json!({"type": "object", "properties": {"a": {"minLength": -1}}}));
    assert_eq!(
        message,
        "at /properties/a/minLength: -1 is less than the minimum of 0"
    );

    let message = schema_error(json!({"type": "object", "required": "a"}));
    assert_eq!(message, "at /required: expected array, got string \"a\"");

    let message =
        schema_error(json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/gone"}}}));
    assert_eq!(
        message,
        "$ref target \"#/$defs/gone\" does not exist in the schema"
    );
}

#[test]
fn draft7_selected_by_dollar_schema() {
    // Draft-07 ignores the siblings of "$ref"; 2020-12 applies them.
    let body = json!({
        "type": "object",
        "properties": {"n": {"$ref": "#/definitions/int", "maximum": 5}},
        "definitions": {"int": {"type": "integer"}}
    });
    let mut draft7 = body.clone();
    draft7["$schema"] = json!("http://json-schema.org/draft-07/schema#");
    let args = json!({"n": 10});
    assert!(compile(draft7.clone()).is_valid(&args));
    assert!(!compile(body.clone()).is_valid(&args));

    // Draft-07 asserts "format" by default; 2020-12 treats it as an annotation.
    let dated = |dollar_schema: Option<&str>| {
        let mut s =
            json!({"type": "object", "properties": {"d": {"type": "string", "format": "date"}}});
        if let Some(uri) = dollar_schema {
            s["$schema"] = json!(uri);
        }
        compile(s)
    };
    let args = json!({"d": "tomorrow"});
    assert!(!dated(Some("http://json-schema.org/draft-07/schema#")).is_valid(&args));
    assert!(dated(None).is_valid(&args));
    assert!(dated(Some("https://json-schema.org/draft/2020-12/schema")).is_valid(&args));
}

#[test]
fn older_drafts_selected_by_dollar_schema() {
    // Draft-04 writes exclusiveMaximum as a boolean, which later drafts reject.
    let body =
        json!({"type": "object", "properties": {"n": {"maximum": 5, "exclusiveMaximum": true}}});
    let mut draft4 = body.clone();
    draft4["$schema"] = json!("http://json-schema.org/draft-04/schema#");
    let schema = compile(draft4);
    assert!(schema.is_valid(&json!({"n": 4})));
    assert!(!schema.is_valid(&json!({"n": 5})));
    assert!(schema_error(body).starts_with("at /properties/n/exclusiveMaximum: "));

    // 2019-09 and draft-06 are known too; draft-03 is not.
    for uri in [
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-06/schema#",
    ] {
        compile(json!({"$schema": uri, "type": "object"}));
    }
    let message = schema_error(
        json!({"$schema": "http://json-schema.org/draft-03/schema#", "type": "object"}),
    );
    assert!(message.contains("is not a supported draft"), "{message}");
}

// Rule 3: $ref resolves only inside the schema, without fetching anything.

#[test]
fn remote_ref_is_refused_without_fetching() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a local port");
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/args.json", listener.local_addr().unwrap());
    let message = schema_error(json!({"type": "object", "properties": {"a": {"$ref": url}}}));
    assert!(
        message.starts_with(&format!("$ref \"{url}\" is not local:")),
        "{message}"
    );
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        Err(e) => panic!("unexpected accept error: {e}"),
        Ok((_, peer)) => panic!("compiling the schema connected to the ref's server from {peer}"),
    }

    // A remote meta-schema is refused the same way.
    let meta = format!("http://{}/meta.json", listener.local_addr().unwrap());
    let message = schema_error(json!({"$schema": meta, "type": "object"}));
    assert!(
        message.contains(&meta) && message.contains("never fetches"),
        "{message}"
    );
    assert!(matches!(listener.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock));
}

#[test]
fn file_ref_is_refused_without_reading() {
    // The file holds a valid schema: had it been read, the schema would compile.
    let path = std::env::temp_dir().join(format!("capstan-schema-{}.json", std::process::id()));
    std::fs::write(&path, r#"{"type": "integer"}"#).unwrap();
    let url = format!("file://{}", path.display());
    let result = Schema::compile(&json!({"type": "object", "properties": {"a": {"$ref": url}}}));
    let _ = std::fs::remove_file(&path);
    match result {
        Err(Error::InvalidSchema(message)) => {
            assert!(
                message.starts_with(&format!("$ref \"{url}\" is not local:")),
                "{message}"
            )
        }
        other => panic!("expected the file ref to be refused, got {other:?}"),
    }
    // A relative ref would need a base document: refused too.
    let message =
        schema_error(json!({"type": "object", "properties": {"a": {"$ref": "other.json"}}}));
    assert!(message.contains("is not local"), "{message}");
}

#[test]
fn local_refs_resolve() {
    let schema = compile(json!({
        "type": "object",
        "properties": {"units": {"$ref": "#/$defs/units"}},
        "$defs": {"units": {"enum": ["celsius", "fahrenheit"]}}
    }));
    assert!(schema.is_valid(&json!({"units": "celsius"})));
    assert_eq!(
        lines(&errors(&schema, json!({"units": "kelvin"}))),
        ["/units: \"kelvin\" is not one of \"celsius\", \"fahrenheit\""]
    );
}

// Rule 4: regexes on the linear-time engine.

#[test]
fn pattern_uses_linear_engine() {
    for (schema, at) in [
        (
            json!({"type": "object", "properties": {"a": {"pattern": "(a)\\1"}}}),
            "at /properties/a/pattern: ",
        ),
        (
            json!({"type": "object", "properties": {"a": {"pattern": "a(?=b)"}}}),
            "at /properties/a/pattern: ",
        ),
        (
            json!({"type": "object", "patternProperties": {"^(?!x)": {}}}),
            "at /patternProperties/^(?!x): ",
        ),
    ] {
        let message = schema_error(schema.clone());
        assert!(message.starts_with(at), "{message}");
        assert!(message.contains("linear-time"), "{message}");
        // The backtracking engine (the crate's default) would have taken them:
        // the refusal is capstan's choice of engine.
        assert!(jsonschema::options().build(&schema).is_ok(), "{schema}");
    }

    let schema = compile(json!({"type": "object", "properties": {
        "zip": {"type": "string", "pattern": "^\\d{5}$"},
        "a": {"type": "string", "pattern": "^(a+)+$"}
    }}));
    assert!(schema.is_valid(&json!({"zip": "12345"})));
    assert_eq!(
        lines(&errors(&schema, json!({"zip": "1234"}))),
        ["/zip: \"1234\" does not match the pattern ^\\d{5}$"]
    );
    // The classic catastrophic-backtracking input is just a mismatch here.
    let evil = format!("{}b", "a".repeat(64));
    assert!(!schema.is_valid(&json!({ "a": evil })));
}

// Rule 5: every error, in text a model can act on.

#[test]
fn every_error_is_reported() {
    let schema = compile(json!({
        "type": "object",
        "required": ["city"],
        "additionalProperties": false,
        "properties": {
            "city": {"type": "string"},
            "units": {"enum": ["celsius", "fahrenheit"]},
            "count": {"type": "integer", "minimum": 1},
            "tags": {"type": "array", "items": {"type": "string"}}
        }
    }));
    let found = errors(
        &schema,
        json!({"units": "kelvin", "count": 0, "tags": ["a", 1, 2], "x": true}),
    );
    let mut pointers: Vec<&str> = found.0.iter().map(|e| e.pointer.as_str()).collect();
    pointers.sort_unstable();
    assert_eq!(
        pointers,
        ["", "", "/count", "/tags/1", "/tags/2", "/units"],
        "{found}"
    );
}

#[test]
fn error_text_names_pointer_and_expectation() {
    let schema = compile(json!({
        "type": "object",
        "required": ["city"],
        "additionalProperties": false,
        "properties": {
            "city": {"type": "string"},
            "units": {"enum": ["celsius", "fahrenheit"]},
            "count": {"type": "integer"},
            "name": {"type": "string", "maxLength": 10},
            "n": {"type": "integer", "minimum": 1},
            "opts": {"type": "object", "additionalProperties": false, "properties": {"fast": {}}},
            "address": {"type": "object", "required": ["zip"]},
            "maybe": {"type": ["integer", "null"]}
        }
    }));
    let found = errors(
        &schema,
        json!({
            "units": "kelvin", "count": "3", "name": "abcdefghijk", "n": 0,
            "opts": {"x": 1}, "address": {}, "maybe": "no", "x": 1
        }),
    );
    let text = found.to_string();
    let mut expected = vec![
        "Invalid arguments:",
        "- missing required property \"city\"",
        "- /units: \"kelvin\" is not one of \"celsius\", \"fahrenheit\"",
        "- /count: expected integer, got string \"3\"",
        "- /name: string is longer than 10 characters",
        "- /n: 0 is less than the minimum of 1",
        "- /opts: unexpected property \"x\" (known properties: \"fast\")",
        "- /address: missing required property \"zip\"",
        "- /maybe: expected integer or null, got string \"no\"",
        "- unexpected property \"x\" (known properties: \"city\", \"units\", \"count\", \"name\", \"n\", \"opts\", \"address\", \"maybe\")",
    ];
    let mut got: Vec<&str> = text.lines().collect();
    assert_eq!(got[0], "Invalid arguments:");
    // The order follows the validator; the set of lines is the contract.
    got.sort_unstable();
    expected.sort_unstable();
    assert_eq!(got, expected, "\n{text}");
    assert!(found
        .0
        .contains(&err("/count", "expected integer, got string \"3\"")));
    assert!(found
        .0
        .contains(&err("", "missing required property \"city\"")));
}

#[test]
fn error_wording_is_the_same_at_every_level() {
    // Keys of the arguments object and of nested objects are both "properties".
    let schema = compile(json!({"type": "object", "properties": {
        "inner": {"type": "object", "properties": {"b": {}}, "required": ["b"], "additionalProperties": false, "minProperties": 2}
    }, "required": ["a"], "additionalProperties": false, "minProperties": 3}));
    let text = errors(&schema, json!({"x": 1, "inner": {"y": 1}})).to_string();
    for line in [
        "- missing required property \"a\"",
        "- /inner: missing required property \"b\"",
        "- unexpected property \"x\" (known properties: \"inner\")",
        "- /inner: unexpected property \"y\" (known properties: \"b\")",
        "- object has fewer than 3 properties",
        "- /inner: object has fewer than 2 properties",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
    }
    assert!(!text.contains("argument "), "{text}");
}

#[test]
fn alternatives_say_what_would_match() {
    let schema = compile(json!({"type": "object", "properties": {
        "k": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "m": {"oneOf": [{"const": "fast"}, {"const": "slow"}]},
        "o": {"anyOf": [{"type": "object", "required": ["q"]}, {"type": "string"}]}
    }}));
    let mut got = lines(&errors(&schema, json!({"k": 1, "m": "medium", "o": {}})));
    got.sort_unstable();
    assert_eq!(
        got,
        [
            "/k: expected string or null, got number 1",
            "/m: \"medium\" is not one of \"fast\", \"slow\"",
            "/o: {} does not match any of the 2 alternatives (anyOf); closest: missing required property \"q\"",
        ]
    );
}

#[test]
fn long_received_values_are_truncated() {
    let schema = compile(json!({"type": "object", "properties": {
        "n": {"type": "integer"},
        "e": {"enum": ["a", "b"]}
    }}));
    let long = "x".repeat(500);
    let found = errors(&schema, json!({"n": long, "e": {"deep": [long, long]}}));
    for line in lines(&found) {
        assert!(line.contains('…'), "{line}");
        assert!(line.chars().count() < 120, "{line}");
    }
    assert!(found.0.contains(&err(
        "/n",
        &format!("expected integer, got string \"{}…\"", "x".repeat(60))
    )));
}

#[test]
fn display_caps_the_number_of_lines() {
    let schema =
        compile(json!({"type": "object", "properties": {"v": {"items": {"type": "string"}}}}));
    let found = errors(&schema, json!({"v": (0..30).collect::<Vec<i32>>()}));
    assert_eq!(found.0.len(), 30);
    let text = found.to_string();
    assert_eq!(text.lines().count(), 1 + 20 + 1, "{text}");
    assert!(text.ends_with("\n- … and 10 more errors"), "{text}");
}

// Rule 6: defaults fill what is missing.

#[test]
fn defaults_fill_missing_arguments() {
    let schema = compile(json!({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "units": {"enum": ["celsius", "fahrenheit"], "default": "celsius"},
            "days": {"type": "integer", "default": 3},
            "opts": {"type": "object", "properties": {"fast": {"type": "boolean", "default": false}}},
            "absent": {"type": "object", "properties": {"x": {"default": 1}}},
            "stops": {"type": "array", "items": {"type": "object", "properties": {"wait": {"default": 0}}}}
        }
    }));
    let filled = schema
        .validate(
            json!({"city": "Oslo", "days": 7, "opts": {}, "stops": [{}, {"wait": 5}]}),
            false,
        )
        .unwrap();
    assert_eq!(
        filled,
        json!({
            "city": "Oslo", "days": 7,
            "opts": {"fast": false},
            "stops": [{"wait": 0}, {"wait": 5}],
            "units": "celsius"
        })
    );
    // A nested object that is absent is not invented.
    assert!(filled.get("absent").is_none());
}

#[test]
fn defaults_never_override_given_values() {
    let schema = compile(json!({"type": "object", "properties": {
        "a": {"default": 1}, "b": {"default": 2}
    }}));
    assert_eq!(
        schema.validate(json!({"a": null, "b": 0}), false),
        Ok(json!({"a": null, "b": 0}))
    );
    // Invalid arguments get errors, not defaults.
    let strict =
        compile(json!({"type": "object", "required": ["q"], "properties": {"a": {"default": 1}}}));
    assert!(strict.validate(json!({}), false).is_err());
}

#[test]
fn defaults_follow_local_refs() {
    let schema = compile(json!({
        "type": "object",
        "properties": {
            "address": {"$ref": "#/$defs/address"},
            "billing": {"allOf": [{"$ref": "#/definitions/address"}]},
            "units": {"$ref": "#/$defs/units"}
        },
        "$defs": {
            "address": {"type": "object", "properties": {"country": {"type": "string", "default": "NO"}}},
            "units": {"enum": ["c", "f"], "default": "c"}
        },
        "definitions": {
            "address": {"type": "object", "properties": {"country": {"type": "string", "default": "SE"}}}
        }
    }));
    assert_eq!(
        schema.validate(json!({"address": {}, "billing": {}}), false),
        Ok(json!({"address": {"country": "NO"}, "billing": {"country": "SE"}, "units": "c"}))
    );
}

#[test]
fn recursive_schemas_fill_every_level() {
    let schema = compile(json!({
        "$ref": "#/$defs/node",
        "type": "object",
        "$defs": {"node": {
            "type": "object",
            "properties": {
                "label": {"type": "string", "default": "?"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
            }
        }}
    }));
    assert_eq!(
        schema.validate(
            json!({"children": [{"children": [{}]}, {"label": "b"}]}),
            false
        ),
        Ok(
            json!({"children": [{"children": [{"label": "?"}], "label": "?"}, {"label": "b"}], "label": "?"})
        )
    );
}

#[test]
fn arguments_without_defaults_come_back_unchanged() {
    let schema = compile(json!({"type": "object", "properties": {"a": {"type": "object"}}}));
    let args = json!({"z": 1, "a": {"b": [1, 2.5, "x"]}, "m": null});
    assert_eq!(schema.validate(args.clone(), true), Ok(args));
}

// Rule 7: coercion, only when asked.

#[test]
fn coercion_off_by_default() {
    let schema = compile(json!({"type": "object", "properties": {
        "count": {"type": "integer"}, "on": {"type": "boolean"}
    }}));
    let found = errors(&schema, json!({"count": "3", "on": "true"}));
    let mut got = lines(&found);
    got.sort_unstable();
    assert_eq!(
        got,
        [
            "/count: expected integer, got string \"3\"",
            "/on: expected boolean, got string \"true\""
        ]
    );
    assert_eq!(
        schema.validate(json!({"count": "3", "on": "true"}), true),
        Ok(json!({"count": 3, "on": true}))
    );
}

#[test]
fn coercion_reads_strings_as_declared_scalars() {
    let schema = compile(json!({
        "type": "object",
        "properties": {
            "i": {"type": "integer"},
            "f": {"type": "number"},
            "b": {"type": "boolean"},
            "whole": {"type": "integer"},
            "maybe": {"type": ["integer", "null"]},
            "nested": {"type": "object", "properties": {"n": {"type": "number"}}},
            "list": {"type": "array", "items": {"type": "integer"}},
            "viaref": {"$ref": "#/$defs/flag"}
        },
        "$defs": {"flag": {"type": "boolean"}}
    }));
    let got = schema.validate(
        json!({
            "i": "3", "f": "2.5", "b": "false", "whole": "4.0", "maybe": "-7",
            "nested": {"n": "1e3"}, "list": ["1", 2, "3"], "viaref": "true"
        }),
        true,
    );
    assert_eq!(
        got,
        Ok(json!({
            "i": 3, "f": 2.5, "b": false, "whole": 4.0, "maybe": -7,
            "nested": {"n": 1000.0}, "list": [1, 2, 3], "viaref": true
        }))
    );
}

#[test]
fn coercion_leaves_other_strings_alone() {
    let schema = compile(json!({"type": "object", "properties": {
        "i": {"type": "integer"},
        "either": {"type": ["string", "integer"]},
        "b": {"type": "boolean"}
    }}));
    // A string type allows strings: "3" stays "3".
    assert_eq!(
        schema.validate(json!({"either": "3"}), true),
        Ok(json!({"either": "3"}))
    );
    // Strings that do not read as the scalar are still errors, shown as received.
    let found = schema
        .validate(json!({"i": "2.5", "b": "yes"}), true)
        .unwrap_err();
    let mut got = lines(&found);
    got.sort_unstable();
    assert_eq!(
        got,
        [
            "/b: expected boolean, got string \"yes\"",
            "/i: expected integer, got string \"2.5\""
        ]
    );
    // Integer-valued floats already are integers: left as they are.
    assert_eq!(
        schema.validate(json!({"i": 3.0}), false),
        Ok(json!({"i": 3.0}))
    );
}

// Rule 8: no input panics.

#[test]
fn no_input_panics() {
    let mut deep_schema = json!({"type": "integer"});
    for _ in 0..200 {
        deep_schema = json!({"type": "object", "properties": {"a": deep_schema}, "additionalProperties": false});
    }
    let schemas = [
        json!(null),
        json!(1e308),
        json!([{"type": "object"}]),
        json!({"$ref": "#"}),
        json!({"type": "object", "$ref": "#", "properties": {"a": {"$ref": "#", "default": 1}}}),
        json!({"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "properties": {"x": {"$ref": "#/$defs/a"}}}),
        json!({"type": "object", "properties": {"a": {"$ref": "#/%ZZ"}}}),
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/%E2%82"}}}),
        json!({"type": "object", "properties": {"a": {"$ref": "http://[::1"}}}),
        json!({"type": "object", "properties": {"": {"default": {}}, "a/b~c": {"type": "integer"}}}),
        json!({"type": "object", "properties": {"n": {"multipleOf": 1e-308, "maximum": 1e308}}}),
        json!({"type": "object", "properties": {"p": {"pattern": "\\p{Greek}+\u{10FFFF}"}}}),
        json!({"type": "object", "properties": {"p": {"pattern": "a{1000}{1000}{1000}"}}}),
        json!({"type": "object", "enum": []}),
        json!({"type": "object", "properties": {"a": {"anyOf": []}}}),
        deep_schema,
    ];
    let mut deep_args = json!(1);
    for _ in 0..120 {
        deep_args = json!({"a": [deep_args, "x"]});
    }
    let args = [
        json!({}),
        json!(null),
        json!({"a": u64::MAX, "b": i64::MIN, "c": 1e308, "d": -0.0}),
        json!({"": {}, "a/b~c": "1", "n": "1e400", "p": "αβγ"}),
        json!({"a": "x".repeat(10_000), "n": "NaN", "i": "-0"}),
        deep_args,
    ];
    for schema in &schemas {
        for compiled in [Schema::compile(schema), Schema::compile_any(schema)]
            .into_iter()
            .flatten()
        {
            for a in &args {
                for coerce in [false, true] {
                    if let Err(errors) = compiled.validate(a.clone(), coerce) {
                        assert!(!errors.0.is_empty());
                        assert!(errors.to_string().starts_with("Invalid arguments:"));
                    }
                }
            }
        }
    }
}

#[test]
fn schemas_deeper_than_parsed_json_are_refused() {
    let nested = |levels: usize| {
        let mut schema = json!({"type": "integer"});
        for _ in 0..levels {
            schema = json!({"type": "object", "properties": {"a": schema}});
        }
        schema
    };
    // 63 levels of properties: 127 JSON levels, within what serde_json parses.
    let schema = compile(nested(63));
    let mut args = json!("x");
    for _ in 0..63 {
        args = json!({ "a": args });
    }
    assert!(!schema.is_valid(&args));
    assert_eq!(
        schema_error(nested(200)),
        "schema nests deeper than 128 levels"
    );
}

#[test]
fn a_schema_at_the_depth_limit_registers_and_one_level_more_is_refused() {
    // Every object and array counts as a level, arrays included: 63 levels
    // of properties are 127 levels, and the innermost enum adds one or two.
    let nested = |leaf: Value| {
        let mut schema = leaf;
        for _ in 0..63 {
            schema = json!({"type": "object", "properties": {"a": schema}});
        }
        schema
    };
    let at_limit = compile(nested(json!({"enum": [1]})));
    let mut args = json!(1);
    for _ in 0..63 {
        args = json!({ "a": args });
    }
    assert!(at_limit.is_valid(&args));
    assert_eq!(
        schema_error(nested(json!({"enum": [[1]]}))),
        "schema nests deeper than 128 levels"
    );
}

#[test]
fn schema_is_shared_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Schema>();
    let schema = Arc::new(compile(
        json!({"type": "object", "properties": {"n": {"type": "integer", "default": 1}}}),
    ));
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let schema = Arc::clone(&schema);
            std::thread::spawn(move || {
                (0..100).all(|_| schema.validate(json!({}), false) == Ok(json!({"n": 1})))
                    && schema.validate(json!({"n": i.to_string()}), true) == Ok(json!({"n": i}))
            })
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap());
    }
}
