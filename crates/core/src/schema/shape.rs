//! What a schema says about each argument position beyond validity: the
//! `default` to fill in when a property is missing, and the scalar type a
//! string may be coerced to. Worked out once at compile time as a small graph
//! (recursive schemas become cycles), so a call walks only its own arguments.

use std::collections::{HashMap, HashSet};

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
    /// Where `default` is in the schema (a JSON Pointer).
    default_at: String,
    node: Option<usize>,
}

/// One step from an object or array down to a value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step {
    Property(String),
    Item,
}

/// A default, with where it is in the schema and where it would be filled.
#[derive(Clone, Debug)]
pub(crate) struct DefaultSite {
    pub(crate) node: usize,
    pub(crate) prop: usize,
    pub(crate) value: Value,
    /// JSON Pointer of the `default` keyword in the schema.
    pub(crate) schema_at: String,
    /// Steps from the arguments' root to the object the default is filled into.
    pub(crate) object: Vec<Step>,
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
        if builder.node(root, String::new(), true, 0).is_none() {
            return Shape::default();
        }
        let mut nodes = builder.nodes;
        mark_reachable(&mut nodes);
        match nodes.first() {
            Some(root) if root.fills || root.coerces => Shape { nodes },
            _ => Shape::default(),
        }
    }

    /// Every default, with the path of the first object (breadth first) it
    /// would be filled into.
    pub(crate) fn defaults(&self) -> Vec<DefaultSite> {
        let mut out = Vec::new();
        let mut path: Vec<Option<(usize, Step)>> = vec![None; self.nodes.len()];
        let mut seen = vec![false; self.nodes.len()];
        let mut queue = std::collections::VecDeque::new();
        if !self.nodes.is_empty() {
            seen[0] = true;
            queue.push_back(0);
        }
        while let Some(i) = queue.pop_front() {
            let node = &self.nodes[i];
            let object = steps_to(&path, i);
            for (p, prop) in node.props.iter().enumerate() {
                if let Some(value) = &prop.default {
                    out.push(DefaultSite {
                        node: i,
                        prop: p,
                        value: value.clone(),
                        schema_at: prop.default_at.clone(),
                        object: object.clone(),
                    });
                }
            }
            let children = node
                .props
                .iter()
                .filter_map(|p| p.node.map(|c| (c, Step::Property(p.name.clone()))))
                .chain(node.items.map(|c| (c, Step::Item)));
            for (child, step) in children {
                if child < seen.len() && !seen[child] {
                    seen[child] = true;
                    path[child] = Some((i, step));
                    queue.push_back(child);
                }
            }
        }
        out
    }

    pub(crate) fn prop_name(&self, node: usize, prop: usize) -> Option<String> {
        Some(self.nodes.get(node)?.props.get(prop)?.name.clone())
    }

    /// Never fills this default (it fails its own schema).
    pub(crate) fn forget_default(&mut self, node: usize, prop: usize) {
        if let Some(p) = self.nodes.get_mut(node).and_then(|n| n.props.get_mut(prop)) {
            p.default = None;
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

/// The steps from the root to node `i`, through the breadth-first parents.
fn steps_to(path: &[Option<(usize, Step)>], mut i: usize) -> Vec<Step> {
    let mut steps = Vec::new();
    while let Some(Some((parent, step))) = path.get(i) {
        steps.push(step.clone());
        i = *parent;
    }
    steps.reverse();
    steps
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
/// reached: from the nodes that have one, up their parents (the graph may
/// have cycles). Linear in the nodes and edges.
fn mark_reachable(nodes: &mut [Node]) {
    let mut parents: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        for child in node.props.iter().filter_map(|p| p.node).chain(node.items) {
            if let Some(list) = parents.get_mut(child) {
                list.push(i);
            }
        }
    }
    for (pick, set) in [
        (
            (|n: &Node| n.props.iter().any(|p| p.default.is_some())) as fn(&Node) -> bool,
            (|n: &mut Node| std::mem::replace(&mut n.fills, true)) as fn(&mut Node) -> bool,
        ),
        (
            |n: &Node| n.scalar.any(),
            |n: &mut Node| std::mem::replace(&mut n.coerces, true),
        ),
    ] {
        let mut work: Vec<usize> = (0..nodes.len()).filter(|&i| pick(&nodes[i])).collect();
        while let Some(i) = work.pop() {
            if set(&mut nodes[i]) {
                continue; // already marked, and so were its parents
            }
            work.extend(parents[i].iter().copied());
        }
    }
}

struct Builder<'a> {
    root: &'a Value,
    nodes: Vec<Node>,
    /// Schema (by address) and whether local `$ref`s are followed -> node.
    memo: HashMap<(*const Value, bool), usize>,
}

/// A schema object merged into a node: itself, a `$ref` target, an `allOf` member.
struct Part<'a> {
    schema: &'a Map<String, Value>,
    follow: bool,
    /// JSON Pointer of `schema` in the root.
    at: String,
}

impl<'a> Builder<'a> {
    /// The node for `schema` (at `at`), merging what its local `$ref` and
    /// `allOf` pull in. `follow` is false below a nested `$id`, where "#/..."
    /// no longer means our root.
    fn node(&mut self, schema: &'a Value, at: String, follow: bool, depth: usize) -> Option<usize> {
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

        let parts = self.gather(schema, at, follow, depth);
        let mut node = Node {
            scalar: parts
                .iter()
                .find_map(|part| part.schema.get("type"))
                .map_or_else(Scalars::default, |t| Scalars::of(Some(t))),
            ..Node::default()
        };
        let mut named = HashSet::new();
        for part in &parts {
            if let Some(Value::Object(props)) = part.schema.get("properties") {
                for (name, sub) in props {
                    if !named.insert(name.as_str()) {
                        continue;
                    }
                    let child_follow = part.follow && !has_id(sub);
                    let sub_at = format!("{}/properties/{}", part.at, escape(name));
                    let (default, default_at) = self.default_of(sub, &sub_at, child_follow, depth);
                    let child = self.node(sub, sub_at, child_follow, depth + 1);
                    node.props.push(Prop {
                        name: name.clone(),
                        default,
                        default_at,
                        node: child,
                    });
                }
            }
            if node.items.is_none() {
                if let Some(items) = part.schema.get("items").filter(|i| i.is_object()) {
                    let items_at = format!("{}/items", part.at);
                    node.items =
                        self.node(items, items_at, part.follow && !has_id(items), depth + 1);
                }
            }
        }
        if let Some(slot) = self.nodes.get_mut(index) {
            *slot = node;
        }
        Some(index)
    }

    /// `schema` itself, then the targets of its local `$ref` and its `allOf`
    /// members, each once. Linear in what it gathers.
    fn gather(&self, schema: &'a Value, at: String, follow: bool, depth: usize) -> Vec<Part<'a>> {
        let mut parts = Vec::new();
        let mut seen = HashSet::new();
        let mut stack = vec![(schema, at, follow, depth)];
        while let Some((schema, at, follow, depth)) = stack.pop() {
            let Some(object) = schema.as_object() else {
                continue;
            };
            if depth > MAX_DEPTH || !seen.insert(object as *const Map<String, Value>) {
                continue;
            }
            // Pushed in reverse, so that `$ref` comes before the `allOf` members, in order.
            if let Some(Value::Array(members)) = object.get("allOf") {
                for (i, member) in members.iter().enumerate().rev() {
                    let member_at = format!("{at}/allOf/{i}");
                    stack.push((member, member_at, follow && !has_id(member), depth + 1));
                }
            }
            if follow {
                if let Some((target, target_at)) = object
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| self.resolve(r))
                {
                    stack.push((target, target_at, !has_id(target), depth + 1));
                }
            }
            parts.push(Part {
                schema: object,
                follow,
                at,
            });
        }
        parts
    }

    /// The first `default` among the parts of `schema`, and where it is.
    fn default_of(
        &self,
        schema: &'a Value,
        at: &str,
        follow: bool,
        depth: usize,
    ) -> (Option<Value>, String) {
        // Only a schema with a default, or a $ref/allOf that may lead to one, is gathered.
        let leads = schema.as_object().is_some_and(|o| {
            o.contains_key("default") || o.contains_key("$ref") || o.contains_key("allOf")
        });
        if !leads {
            return (None, String::new());
        }
        self.gather(schema, at.to_owned(), follow, depth)
            .into_iter()
            .find_map(|p| {
                p.schema
                    .get("default")
                    .map(|d| (Some(d.clone()), format!("{}/default", p.at)))
            })
            .unwrap_or((None, String::new()))
    }

    /// A `$ref` of the form "#" or "#/json/pointer" (percent-encoded), in our
    /// root, and the pointer it names.
    fn resolve(&self, reference: &str) -> Option<(&'a Value, String)> {
        let pointer = reference.strip_prefix('#')?;
        if !(pointer.is_empty() || pointer.starts_with('/')) {
            return None;
        }
        let pointer = percent_decode(pointer)?;
        Some((self.root.pointer(&pointer)?, pointer))
    }
}

/// `name` as a JSON Pointer token.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn has_id(schema: &Value) -> bool {
    schema.as_object().is_some_and(|o| {
        o.get("$id")
            .or_else(|| o.get("id"))
            .is_some_and(Value::is_string)
    })
}

pub(crate) fn percent_decode(text: &str) -> Option<String> {
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
