//! The facades' names: a small root and each public thing under one name (issue 48), read from the
//! rustdoc JSON the public-API step builds.
//!
//! Every public item reachable from the crate's root is walked, through its public modules; a
//! `pub use` counts as a name of the thing it names (rustdoc gives each re-exported item one id,
//! whichever path it is re-exported from). A module re-exported from another crate (`raw`,
//! `redact`) is one name: its contents are that crate's.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use serde_json::Value;

/// The crates users depend on by name, whose public names this rule holds.
pub const FACADES: [&str; 2] = ["api-mgmt", "api-obs"];

/// The most names a facade's root may hold (items, re-exports and modules).
pub const MAX_ROOT_NAMES: usize = 25;

/// The public names of a crate, from its rustdoc JSON.
#[derive(Debug, Default)]
pub struct PublicNames {
    /// The names at the crate's root.
    pub root: Vec<String>,
    /// Each public thing, by the path rustdoc gives it where it is defined (or its id), with every
    /// path it can be named by here.
    pub paths: BTreeMap<String, Vec<String>>,
}

impl PublicNames {
    /// Reads the names from a crate's rustdoc JSON.
    pub fn from_rustdoc(json: &Value) -> Result<Self> {
        let root = json["root"]
            .as_u64()
            .context("rustdoc JSON without a root id")?;
        let mut names = PublicNames::default();
        let crate_name = item(json, root)?["name"]
            .as_str()
            .context("the root module has no name")?
            .to_string();
        walk(json, root, &crate_name, true, &mut names)?;
        Ok(names)
    }

    /// Reads the names from the rustdoc JSON file at `path`.
    pub fn from_file(path: &std::path::Path) -> Result<Self> {
        let read =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let json: Value = serde_json::from_slice(&read)
            .with_context(|| format!("{} is not JSON", path.display()))?;
        Self::from_rustdoc(&json)
    }

    /// What breaks the rule, one line each (empty when it holds).
    pub fn problems(&self, krate: &str) -> Vec<String> {
        let mut problems = Vec::new();
        if self.root.len() > MAX_ROOT_NAMES {
            problems.push(format!(
                "{krate}: {} public names at the root, at most {MAX_ROOT_NAMES} ({})",
                self.root.len(),
                self.root.join(", ")
            ));
        }
        for paths in self.paths.values().filter(|paths| paths.len() > 1) {
            problems.push(format!(
                "{krate}: one thing under {} names: {}",
                paths.len(),
                paths.join(", ")
            ));
        }
        problems
    }
}

/// Where rustdoc says the thing `id` is defined (`api_core::management::pipe::Pipe`), the same in
/// the JSON of two versions; its id where rustdoc gives no path.
fn defined_at(json: &Value, id: u64) -> String {
    json["paths"][id.to_string()]["path"]
        .as_array()
        .map(|path| {
            path.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("::")
        })
        .unwrap_or_else(|| format!("#{id}"))
}

/// A public path of `before` that `after` does not have: where the thing is named now, if anywhere.
#[derive(Debug, PartialEq, Eq)]
pub struct Moved {
    /// The path in `before`.
    pub from: String,
    /// The thing's paths in `after` (none: removed).
    pub to: Vec<String>,
}

/// The paths of `before` that `after` no longer has, each with where its thing is now. Unlike
/// cargo-semver-checks, which sees only a crate's own items, this follows re-exports of another
/// crate's items too.
pub fn moved(before: &PublicNames, after: &PublicNames) -> Vec<Moved> {
    let now: std::collections::BTreeSet<&String> = after.paths.values().flatten().collect();
    let mut moved = Vec::new();
    for (thing, paths) in &before.paths {
        for from in paths.iter().filter(|path| !now.contains(path)) {
            // A crate's own item moved between its private modules has another definition path:
            // it is found by its name, when one path of `after` alone ends with it.
            let to = after.paths.get(thing).cloned().unwrap_or_else(|| {
                let name = last(from);
                let named: Vec<String> = now
                    .iter()
                    .filter(|path| last(path) == name)
                    .map(|path| path.to_string())
                    .collect();
                if named.len() == 1 { named } else { Vec::new() }
            });
            moved.push(Moved {
                from: from.clone(),
                to,
            });
        }
    }
    moved.sort_by(|a, b| a.from.cmp(&b.from));
    moved
}

fn last(path: &str) -> &str {
    path.rsplit("::").next().unwrap_or(path)
}

fn item(json: &Value, id: u64) -> Result<&Value> {
    json["index"]
        .get(id.to_string())
        .with_context(|| format!("rustdoc JSON names the item {id} but does not hold it"))
}

/// Records the public names of the module `id` (named by `path`), and of its public modules.
fn walk(json: &Value, id: u64, path: &str, is_root: bool, names: &mut PublicNames) -> Result<()> {
    let module = &item(json, id)?["inner"]["module"];
    let items = module["items"]
        .as_array()
        .with_context(|| format!("{path} is not a module in the rustdoc JSON"))?;
    for child in items {
        let child = child.as_u64().context("a module item id is a number")?;
        let entry = item(json, child)?;
        if entry["visibility"].as_str() != Some("public") {
            continue;
        }
        let inner = &entry["inner"];
        let (name, thing) = if let Some(use_) = inner.get("use") {
            let name = use_["name"].as_str().unwrap_or("*").to_string();
            if use_["is_glob"].as_bool() == Some(true) {
                let source = use_["source"].as_str().unwrap_or("?");
                (format!("{source}::*"), use_["id"].as_u64())
            } else {
                (name, use_["id"].as_u64())
            }
        } else {
            let Some(name) = entry["name"].as_str() else {
                continue; // an impl block
            };
            (name.to_string(), Some(child))
        };
        let full = format!("{path}::{name}");
        if is_root {
            names.root.push(name.clone());
        }
        if let Some(thing) = thing {
            names
                .paths
                .entry(defined_at(json, thing))
                .or_default()
                .push(full.clone());
        }
        if inner.get("module").is_some() {
            walk(json, child, &full, false, names)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A crate `demo` with a struct `Client` at the root, a module `pipes` with `Pipe`, and the
    /// re-exports `extra` adds to the root.
    fn demo(extra: &[(&str, u64)]) -> Value {
        let mut index = json!({
            "0": {"name": "demo", "visibility": "public", "inner": {"module": {"items": [1, 2]}}},
            "1": {"name": "Client", "visibility": "public", "inner": {"struct": {}}},
            "2": {"name": "pipes", "visibility": "public", "inner": {"module": {"items": [3, 4]}}},
            "3": {"name": "Pipe", "visibility": "public", "inner": {"struct": {}}},
            "4": {"name": "Hidden", "visibility": "crate", "inner": {"struct": {}}},
        });
        let mut root_items = vec![1, 2];
        for (n, (name, target)) in extra.iter().enumerate() {
            let id = 100 + n as u64;
            index[id.to_string()] = json!({
                "name": null, "visibility": "public",
                "inner": {"use": {"source": "x", "name": name, "id": target, "is_glob": false}},
            });
            root_items.push(id);
        }
        index["0"]["inner"]["module"]["items"] = json!(root_items);
        json!({"root": 0, "index": index})
    }

    #[test]
    fn a_thing_under_one_name_and_a_small_root_hold() {
        let names = PublicNames::from_rustdoc(&demo(&[("Other", 7)])).unwrap();
        assert_eq!(names.root, ["Client", "pipes", "Other"]);
        assert_eq!(names.problems("demo"), Vec::<String>::new());
        assert_eq!(names.paths["#3"], ["demo::pipes::Pipe"]);
    }

    #[test]
    fn a_thing_re_exported_at_the_root_as_well_is_named_twice() {
        let names = PublicNames::from_rustdoc(&demo(&[("Pipe", 3)])).unwrap();
        assert_eq!(
            names.problems("demo"),
            ["demo: one thing under 2 names: demo::pipes::Pipe, demo::Pipe"]
        );
    }

    #[test]
    fn an_alias_is_a_second_name() {
        let names = PublicNames::from_rustdoc(&demo(&[("Handle", 1)])).unwrap();
        assert_eq!(
            names.problems("demo"),
            ["demo: one thing under 2 names: demo::Client, demo::Handle"]
        );
    }

    #[test]
    fn a_root_of_more_than_25_names_is_refused() {
        let extra: Vec<(String, u64)> = (0..24).map(|n| (format!("Name{n}"), 1000 + n)).collect();
        let extra: Vec<(&str, u64)> = extra.iter().map(|(n, id)| (n.as_str(), *id)).collect();
        let names = PublicNames::from_rustdoc(&demo(&extra)).unwrap();
        let problems = names.problems("demo");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0]
                .starts_with("demo: 26 public names at the root, at most 25 (Client, pipes, Name0"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_move_is_found_by_where_the_thing_is_defined() {
        let mut before = demo(&[("Other", 7), ("Gone", 8)]);
        before["paths"] = json!({"7": {"path": ["core_crate", "x", "Other"]}});
        let mut after = demo(&[]);
        // `Other` now sits in `pipes`, re-exported from the same definition (another id).
        after["index"]["200"] = json!({
            "name": null, "visibility": "public",
            "inner": {"use": {"source": "x", "name": "Other", "id": 9, "is_glob": false}},
        });
        after["index"]["2"]["inner"]["module"]["items"] = json!([3, 4, 200]);
        after["paths"] = json!({"9": {"path": ["core_crate", "x", "Other"]}});
        let before = PublicNames::from_rustdoc(&before).unwrap();
        let after = PublicNames::from_rustdoc(&after).unwrap();
        assert_eq!(
            moved(&before, &after),
            [
                Moved {
                    from: "demo::Gone".into(),
                    to: vec![]
                },
                Moved {
                    from: "demo::Other".into(),
                    to: vec!["demo::pipes::Other".into()]
                },
            ]
        );
        assert_eq!(moved(&after, &after), []);

        // The crate's own `Client`, defined elsewhere now, and found by its name.
        let mut moved_client = demo(&[]);
        moved_client["index"]["2"]["inner"]["module"]["items"] = json!([3, 4, 1]);
        moved_client["index"]["0"]["inner"]["module"]["items"] = json!([2]);
        moved_client["paths"] = json!({"1": {"path": ["demo", "handles", "Client"]}});
        let mut before = demo(&[]);
        before["paths"] = json!({"1": {"path": ["demo", "Client"]}});
        assert_eq!(
            moved(
                &PublicNames::from_rustdoc(&before).unwrap(),
                &PublicNames::from_rustdoc(&moved_client).unwrap()
            ),
            [Moved {
                from: "demo::Client".into(),
                to: vec!["demo::pipes::Client".into()]
            }]
        );
    }

    #[test]
    fn a_json_without_the_items_it_names_is_an_error() {
        let broken = json!({"root": 0, "index": {
            "0": {"name": "demo", "visibility": "public", "inner": {"module": {"items": [9]}}},
        }});
        let error = PublicNames::from_rustdoc(&broken).unwrap_err();
        assert!(error.to_string().contains("the item 9"), "{error}");
    }
}
