//! The rate limit's modules import downward only: no module reaches another that reaches it back,
//! directly or through others, and none reaches the root (`mod.rs`, which declares them all and
//! re-exports). Read from the `super::` and `crate::rate_limit::` paths of each file's code, its
//! comments and test modules left out (a test may use what sits above the module it tests).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The root's name in the graph.
const ROOT: &str = "mod";

/// Each module's code without its comments and its test modules.
fn sources() -> BTreeMap<String, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rate_limit");
    let mut sources = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("the rate limit's directory") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "layers" {
            continue; // this test
        }
        let text = std::fs::read_to_string(&path).expect("a readable module");
        sources.insert(name, code_of(&text));
    }
    sources
}

/// `text` up to its first test module, without comment lines and trailing comments.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        let line = line.split_once("//").map_or(line, |(code, _)| code);
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// The first identifiers after each `super::` or `crate::rate_limit::` in `code`, a `{...}` group
/// giving each of its members'.
fn reached(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for prefix in ["super::", "crate::rate_limit::"] {
        for (at, _) in code.match_indices(prefix) {
            let rest = &code[at + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let mut depth = 0usize;
                let mut member = String::new();
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            names.insert(first_ident(&member));
                            member.clear();
                            continue;
                        }
                        _ => {}
                    }
                    member.push(c);
                }
                names.insert(first_ident(&member));
            } else {
                names.insert(first_ident(rest));
            }
        }
    }
    names.remove("");
    names
}

fn first_ident(text: &str) -> String {
    text.trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Each module and the modules it reaches: a sibling by name, the root by any other name.
fn graph(sources: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<&str> = sources
        .keys()
        .map(String::as_str)
        .filter(|m| *m != ROOT)
        .collect();
    sources
        .iter()
        .map(|(module, code)| {
            let edges = if module == ROOT {
                modules.iter().map(|m| (*m).to_string()).collect()
            } else {
                reached(code)
                    .into_iter()
                    .map(|name| {
                        if modules.contains(name.as_str()) {
                            name
                        } else {
                            ROOT.to_string()
                        }
                    })
                    .filter(|name| name != module)
                    .collect()
            };
            (module.clone(), edges)
        })
        .collect()
}

/// A cycle of `graph`, as the modules along it, if it has one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        module: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut cycle = path[at..].to_vec();
            cycle.push(module.to_string());
            return Some(cycle);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_string());
        for next in graph.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(module.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|module| visit(module, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_rate_limits_modules_import_downward_only() {
    let graph = graph(&sources());
    assert!(graph.len() > 10, "the modules were read: {graph:?}");
    if let Some(cycle) = cycle(&graph) {
        panic!(
            "the rate limit's modules import in a circle: {}",
            cycle.join(" -> ")
        );
    }
    // The layers the root's documentation names.
    for (above, below) in [
        ("limiter", "fallback"),
        ("fallback", "store"),
        ("host", "store"),
        ("store", "booking"),
        ("config", "observers"),
    ] {
        assert!(graph[above].contains(below), "{above} uses {below}");
    }
}

#[test]
fn a_module_reaching_back_is_a_cycle() {
    let code = |text: &str| code_of(text);
    let mut sources = BTreeMap::new();
    sources.insert(ROOT.to_string(), String::new());
    sources.insert(
        "a".to_string(),
        code("use super::{b::{X, Y}, c};\n// super::d is a comment\n"),
    );
    sources.insert("b".to_string(), code("fn f() { super::c::g() }"));
    sources.insert("c".to_string(), code("use super::pacing::X;\n"));
    sources.insert("pacing".to_string(), String::new());
    assert_eq!(cycle(&graph(&sources)), None);
    // `c` reaching `a` closes a circle; reaching a root item (`super::Thing`) another.
    sources.insert("c".to_string(), code("use crate::rate_limit::a::Z;"));
    assert_eq!(
        cycle(&graph(&sources)).map(|c| c.join(" -> ")),
        Some("a -> b -> c -> a".to_string())
    );
    sources.insert("c".to_string(), code("fn f() -> super::Thing { todo!() }"));
    assert!(cycle(&graph(&sources)).is_some_and(|c| c.contains(&ROOT.to_string())));
    // A test module is left out.
    sources.insert(
        "c".to_string(),
        code("fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::super::a::Z;\n}\n"),
    );
    assert_eq!(cycle(&graph(&sources)), None);
}
