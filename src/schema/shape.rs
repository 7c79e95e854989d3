//! What a schema says about each argument position beyond validity: the
//! `default` to fill in when a property is missing, and the scalar type a
//! string may be coerced to. Worked out once at compile time as a small graph
//! (recursive schemas become cycles), so a call walks only its own arguments.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

/// Deeper than this, the builder and the walkers stop descending. Parsed JSON
/// is shallower (serde_json stops at 128), so this only guards built values.
const MAX_DEPTH: usize = 256;

#[derive(Clone, Debug, Default)]
pub(crate) struct Shape {
    /// Node 0 is the root schema. Empty when no default or coercion exists anywhere.
    nodes: Vec<Node>,
}

#[derive(Clone, Debug, Default)]
struct Node {
    /// The scalar types a string here may become (none when "string" is allowed).
    scalar: Scalars,
    props: Vec<Prop>,
    /// Node for every item of an array here.
    items: Option<usize>,
    /// A default is reachable from here.
    fills: bool,
    /// A coercion is reachable from here.
    coerces: bool,
}

#[derive(Clone, Debug)]
struct Prop {
    name: String,
    default: Option<Value>,
    node: Option<usize>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Scalars {
    integer: bool,
    number: bool,
    boolean: bool,
}

impl Scalars {
    fn any(self) -> bool {
        self.integer || self.number || self.boolean
    }

    /// From a `type` keyword: only when it excludes "string", since a string is
    /// then certainly wrong and reading it as a scalar cannot change a valid call.
    fn of(types: Option<&Value>) -> Scalars {
        let names: Vec<&str> = match types {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => return Scalars::default(),
        };
        if names.contains(&"string") {
            return Scalars::default();
        }
        Scalars {
            integer: names.contains(&"integer"),
            number: names.contains(&"number"),
            boolean: names.contains(&"boolean"),
        }
    }

    fn parse(self, text: &str) -> Option<Value> {
        let text = text.trim();
        if self.boolean {
            match text {
                "true" => return Some(Value::Bool(true)),
                "false" => return Some(Value::Bool(false)),
                _ => {}
            }
        }
        if !(self.integer || self.number) || text.is_empty() {
            return None;
        }
        if let Ok(i) = text.parse::<i64>() {
            return Some(Value::Number(i.into()));
        }
        if let Ok(u) = text.parse::<u64>() {
            return Some(Value::Number(u.into()));
        }
        let f = text.parse::<f64>().ok().filter(|f| f.is_finite())?;
        if self.number || f.fract() == 0.0 {
            // An integer-valued float (3.0) is an integer in JSON Schema.
            Number::from_f64(f).map(Value::Number)
        } else {
            None
        }
    }
}

impl Shape {
    pub(crate) fn build(root: &Value) -> Shape {
        let mut builder = Builder {
            root,
            nodes: Vec::new(),
            memo: HashMap::new(),
        };
        if builder.node(root, true, 0).is_none() {
            return Shape::default();
        }
        let mut nodes = builder.nodes;
        mark_reachable(&mut nodes);
        match nodes.first() {
            Some(root) if root.fills || root.coerces => Shape { nodes },
            _ => Shape::default(),
        }
    }

    pub(crate) fn fills(&self) -> bool {
        self.nodes.first().is_some_and(|n| n.fills)
    }

    pub(crate) fn coerces(&self) -> bool {
        self.nodes.first().is_some_and(|n| n.coerces)
    }

    /// Inserts the `default` of every missing property, in present objects.
    pub(crate) fn fill(&self, value: &mut Value) {
        if self.fills() {
            self.fill_at(value, 0, 0);
        }
    }

    fn fill_at(&self, value: &mut Value, index: usize, depth: usize) {
        let Some(node) = self.nodes.get(index) else {
            return;
        };
        if depth > MAX_DEPTH {
            return;
        }
        match value {
            Value::Object(map) => {
                for prop in &node.props {
                    if let Some(default) = &prop.default {
                        if !map.contains_key(&prop.name) {
                            map.insert(prop.name.clone(), default.clone());
                        }
                    }
                    if let Some(child) = self.live(prop.node, |n| n.fills) {
                        if let Some(v) = map.get_mut(&prop.name) {
                            self.fill_at(v, child, depth + 1);
                        }
                    }
                }
            }
            Value::Array(items) => {
                if let Some(child) = self.live(node.items, |n| n.fills) {
                    for item in items {
                        self.fill_at(item, child, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    /// Replaces strings that the schema wants as integer/number/boolean and that
    /// read as one. Returns whether anything changed.
    pub(crate) fn coerce(&self, value: &mut Value) -> bool {
        self.coerces() && self.coerce_at(value, 0, 0)
    }

    fn coerce_at(&self, value: &mut Value, index: usize, depth: usize) -> bool {
        let Some(node) = self.nodes.get(index) else {
            return false;
        };
        if depth > MAX_DEPTH {
            return false;
        }
        match value {
            Value::String(text) if node.scalar.any() => match node.scalar.parse(text) {
                Some(parsed) => {
                    *value = parsed;
                    true
                }
                None => false,
            },
            Value::Object(map) => coerce_props(self, node, map, depth),
            Value::Array(items) => match self.live(node.items, |n| n.coerces) {
                Some(child) => items.iter_mut().fold(false, |changed, item| {
                    self.coerce_at(item, child, depth + 1) | changed
                }),
                None => false,
            },
            _ => false,
        }
    }

    fn live(&self, index: Option<usize>, wanted: impl Fn(&Node) -> bool) -> Option<usize> {
        index.filter(|&i| self.nodes.get(i).is_some_and(&wanted))
    }
}

fn coerce_props(shape: &Shape, node: &Node, map: &mut Map<String, Value>, depth: usize) -> bool {
    let mut changed = false;
    for prop in &node.props {
        if let Some(child) = shape.live(prop.node, |n| n.coerces) {
            if let Some(v) = map.get_mut(&prop.name) {
                changed |= shape.coerce_at(v, child, depth + 1);
            }
        }
    }
    changed
}

/// Sets `fills`/`coerces` on every node from which a default or a coercion can be
/// reached, by repeating until nothing changes (the graph may have cycles).
fn mark_reachable(nodes: &mut [Node]) {
    let flag = |nodes: &[Node], i: Option<usize>, pick: fn(&Node) -> bool| {
        i.and_then(|i| nodes.get(i)).is_some_and(pick)
    };
    loop {
        let mut changed = false;
        for i in 0..nodes.len() {
            let node = &nodes[i];
            let fills = node
                .props
                .iter()
                .any(|p| p.default.is_some() || flag(nodes, p.node, |n| n.fills))
                || flag(nodes, node.items, |n| n.fills);
            let coerces = node.scalar.any()
                || node
                    .props
                    .iter()
                    .any(|p| flag(nodes, p.node, |n| n.coerces))
                || flag(nodes, node.items, |n| n.coerces);
            let node = &mut nodes[i];
            if (fills, coerces) != (node.fills, node.coerces) {
                node.fills |= fills;
                node.coerces |= coerces;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

struct Builder<'a> {
    root: &'a Value,
    nodes: Vec<Node>,
    /// Schema (by address) and whether local `$ref`s are followed -> node.
    memo: HashMap<(*const Value, bool), usize>,
}

impl<'a> Builder<'a> {
    /// The node for `schema`, merging what its local `$ref` and `allOf` pull in.
    /// `follow` is false below a nested `$id`, where "#/..." no longer means our root.
    fn node(&mut self, schema: &'a Value, follow: bool, depth: usize) -> Option<usize> {
        if !schema.is_object() || depth > MAX_DEPTH {
            return None;
        }
        let key = (schema as *const Value, follow);
        if let Some(&index) = self.memo.get(&key) {
            return Some(index);
        }
        let index = self.nodes.len();
        self.nodes.push(Node::default());
        self.memo.insert(key, index);

        let mut parts = Vec::new();
        self.gather(schema, follow, depth, &mut parts);
        let mut node = Node {
            scalar: parts
                .iter()
                .find_map(|(part, _)| part.get("type"))
                .map_or_else(Scalars::default, |t| Scalars::of(Some(t))),
            ..Node::default()
        };
        for &(part, follow) in &parts {
            if let Some(Value::Object(props)) = part.get("properties") {
                for (name, sub) in props {
                    if node.props.iter().any(|p| &p.name == name) {
                        continue;
                    }
                    let child_follow = follow && !has_id(sub);
                    let default = self.default_of(sub, child_follow, depth);
                    let child = self.node(sub, child_follow, depth + 1);
                    node.props.push(Prop {
                        name: name.clone(),
                        default,
                        node: child,
                    });
                }
            }
            if node.items.is_none() {
                if let Some(items) = part.get("items").filter(|i| i.is_object()) {
                    node.items = self.node(items, follow && !has_id(items), depth + 1);
                }
            }
        }
        if let Some(slot) = self.nodes.get_mut(index) {
            *slot = node;
        }
        Some(index)
    }

    /// `schema` itself, then the targets of its local `$ref` and its `allOf` members.
    fn gather(
        &self,
        schema: &'a Value,
        follow: bool,
        depth: usize,
        parts: &mut Vec<(&'a Map<String, Value>, bool)>,
    ) {
        let Some(object) = schema.as_object() else {
            return;
        };
        if depth > MAX_DEPTH || parts.iter().any(|(p, _)| std::ptr::eq(*p, object)) {
            return;
        }
        parts.push((object, follow));
        if follow {
            if let Some(target) = object
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| self.resolve(r))
            {
                self.gather(target, !has_id(target), depth + 1, parts);
            }
        }
        if let Some(Value::Array(members)) = object.get("allOf") {
            for member in members {
                self.gather(member, follow && !has_id(member), depth + 1, parts);
            }
        }
    }

    fn default_of(&self, schema: &'a Value, follow: bool, depth: usize) -> Option<Value> {
        let mut parts = Vec::new();
        self.gather(schema, follow, depth, &mut parts);
        parts.iter().find_map(|(p, _)| p.get("default").cloned())
    }

    /// A `$ref` of the form "#" or "#/json/pointer" (percent-encoded), in our root.
    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        let pointer = reference.strip_prefix('#')?;
        if !(pointer.is_empty() || pointer.starts_with('/')) {
            return None;
        }
        self.root.pointer(&percent_decode(pointer)?)
    }
}

fn has_id(schema: &Value) -> bool {
    schema.as_object().is_some_and(|o| {
        o.get("$id")
            .or_else(|| o.get("id"))
            .is_some_and(Value::is_string)
    })
}

fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
