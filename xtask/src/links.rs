//! `cargo xtask links`: every relative link of the built guide (`guide/book/`, after `mdbook build
//! guide`) and of the repository's Markdown front doors (README.md, CONTRIBUTING.md, CHANGELOG.md,
//! bench/README.md) reaches a file that exists, and every `#fragment` an element with that id (in
//! the HTML) or a heading with that slug (in Markdown). Links to other sites are not followed: CI has
//! no network, and their availability is not the guide's to keep.
//!
//! mdbook-linkcheck, the usual tool, is built for mdBook 0.4's renderer interface and does not run
//! with mdBook 0.5; lychee needs a build of minutes. What is checked here is small: files and ids.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// One broken link: where it is written, and what it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The file that holds the link.
    pub file: PathBuf,
    /// The link as written.
    pub link: String,
    /// What is wrong.
    pub why: String,
}

/// The `{{#include FILE[:ANCHOR]}}`s of the chapters under `src` that name no file, or an anchor
/// the file does not mark (`ANCHOR: name` ... `ANCHOR_END: name`): mdBook only warns of the first
/// and includes nothing for the second.
pub fn includes(src: &Path) -> anyhow::Result<Vec<Broken>> {
    let mut broken = Vec::new();
    for entry in std::fs::read_dir(src)? {
        let chapter = entry?.path();
        if chapter.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&chapter)?;
        let mut rest = text.as_str();
        while let Some(at) = rest.find("{{#include ") {
            rest = &rest[at + "{{#include ".len()..];
            let Some(end) = rest.find("}}") else { break };
            let link = rest[..end].trim().to_string();
            let (file, anchor) = match link.split_once(':') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (link.as_str(), None),
            };
            let target = normal(&src.join(file));
            let why = match std::fs::read_to_string(&target) {
                Err(_) => Some(format!("no file {}", target.display())),
                Ok(included) => anchor.and_then(|anchor| {
                    let marks = [format!("ANCHOR: {anchor}"), format!("ANCHOR_END: {anchor}")];
                    let marked = included
                        .lines()
                        .any(|l| l.trim_end().ends_with(marks[0].as_str()))
                        && included
                            .lines()
                            .any(|l| l.trim_end().ends_with(marks[1].as_str()));
                    (!marked).then(|| format!("no anchor {anchor:?} in {}", target.display()))
                }),
            };
            if let Some(why) = why {
                broken.push(Broken {
                    file: chapter.clone(),
                    link,
                    why,
                });
            }
        }
    }
    Ok(broken)
}

/// The broken links of the built book under `book` and of the Markdown `files`.
pub fn check(book: &Path, files: &[PathBuf]) -> anyhow::Result<Vec<Broken>> {
    let mut pages = BTreeMap::new();
    collect_html(book, &mut pages)?;
    if pages.is_empty() {
        anyhow::bail!(
            "no HTML under {} (run `mdbook build guide` first)",
            book.display()
        );
    }
    let mut broken = Vec::new();
    let ids: BTreeMap<PathBuf, BTreeSet<String>> = pages
        .iter()
        .map(|(path, html)| {
            (
                path.clone(),
                attribute_values(html, "id").into_iter().collect(),
            )
        })
        .collect();
    for (page, html) in &pages {
        for attribute in ["href", "src"] {
            for link in attribute_values(html, attribute) {
                if let Some(why) = html_target(book, page, &link, &ids) {
                    broken.push(Broken {
                        file: page.clone(),
                        link,
                        why,
                    });
                }
            }
        }
    }
    for file in files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
        for link in markdown_links(&text) {
            if let Some(why) = markdown_target(file, &link) {
                broken.push(Broken {
                    file: file.clone(),
                    link,
                    why,
                });
            }
        }
    }
    Ok(broken)
}

fn collect_html(dir: &Path, pages: &mut BTreeMap<PathBuf, String>) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() {
            collect_html(&path, pages)?;
        } else if path.extension().is_some_and(|e| e == "html") {
            pages.insert(normal(&path), std::fs::read_to_string(&path)?);
        }
    }
    Ok(())
}

/// `path` with `.` and `..` resolved by name (the files need not exist).
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A link that is not ours to check: another site, mail, or a script.
fn external(link: &str) -> bool {
    let scheme = link.split_once(':').map(|(s, _)| s);
    scheme.is_some_and(|s| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    }) || link.starts_with("//")
}

/// The values of `attribute="..."` (or `'...'`) in `html`, entities `&amp;` decoded.
pub fn attribute_values(html: &str, attribute: &str) -> Vec<String> {
    let mut values = Vec::new();
    let mut rest = html;
    let needle = format!("{attribute}=");
    while let Some(at) = rest.find(&needle) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + needle.len()..];
        if before.is_some_and(|c| !c.is_whitespace()) {
            continue;
        }
        let Some(quote) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        if let Some(end) = rest[1..].find(quote) {
            values.push(rest[1..1 + end].replace("&amp;", "&"));
            rest = &rest[1 + end..];
        }
    }
    values
}

fn split_fragment(link: &str) -> (&str, Option<&str>) {
    let link = link.split('?').next().unwrap_or(link);
    match link.split_once('#') {
        Some((path, fragment)) => (path, Some(fragment)),
        None => (link, None),
    }
}

fn html_target(
    book: &Path,
    page: &Path,
    link: &str,
    ids: &BTreeMap<PathBuf, BTreeSet<String>>,
) -> Option<String> {
    if external(link) || link.starts_with("javascript:") {
        return None;
    }
    let (path, fragment) = split_fragment(link);
    let target = if path.is_empty() {
        page.to_path_buf()
    } else {
        // A path from the site's root (mdBook's 404 page) is one from the book's.
        let from = match path.strip_prefix('/') {
            Some(rooted) => normal(&book.join(rooted)),
            None => normal(&page.parent()?.join(path)),
        };
        let target = from;
        if target.is_dir() {
            target.join("index.html")
        } else {
            target
        }
    };
    if !target.exists() {
        return Some(format!("no file {}", target.display()));
    }
    match (fragment, ids.get(&target)) {
        (Some(fragment), Some(ids)) if !fragment.is_empty() && !ids.contains(fragment) => {
            Some(format!("no id {fragment:?} in {}", target.display()))
        }
        _ => None,
    }
}

/// The targets of `[text](target)` links in Markdown, outside code.
pub fn markdown_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code holds no link.
        let prose: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, part)| part)
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                let target = rest[..end].split_whitespace().next().unwrap_or("");
                if !target.is_empty() {
                    links.push(target.to_string());
                }
                rest = &rest[end..];
            }
        }
    }
    links
}

/// The anchor GitHub and mdBook give a heading: lower case, spaces as `-`, punctuation dropped.
pub fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn markdown_target(file: &Path, link: &str) -> Option<String> {
    if external(link) {
        return None;
    }
    let (path, fragment) = split_fragment(link);
    let target = if path.is_empty() {
        file.to_path_buf()
    } else {
        normal(&file.parent()?.join(path))
    };
    if !target.exists() {
        return Some(format!("no file {}", target.display()));
    }
    let fragment = fragment.filter(|f| !f.is_empty())?;
    if target.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let text = std::fs::read_to_string(&target).ok()?;
    let mut fenced = false;
    let found = text.lines().any(|line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        !fenced && line.starts_with('#') && slug(line.trim_start_matches('#')) == fragment
    });
    (!found).then(|| format!("no heading {fragment:?} in {}", target.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_those_of_github_and_mdbook() {
        assert_eq!(
            slug(" A first `cloudctl` session"),
            "a-first-cloudctl-session"
        );
        assert_eq!(slug("The rules, once"), "the-rules-once");
        assert_eq!(slug("Exactly once: a create"), "exactly-once-a-create");
    }

    #[test]
    fn links_outside_code_and_attributes_are_found() {
        let md = "see [a](a.md#x) and `[not](b.md)`\n```\n[no](c.md)\n```\n[d](https://e.example)";
        assert_eq!(markdown_links(md), ["a.md#x", "https://e.example"]);
        let html = r#"<a href="x.html#y">x</a><p id="y" data-href="no"><img src='i.png'>"#;
        assert_eq!(attribute_values(html, "href"), ["x.html#y"]);
        assert_eq!(attribute_values(html, "id"), ["y"]);
        assert_eq!(attribute_values(html, "src"), ["i.png"]);
    }

    #[test]
    fn a_missing_file_or_heading_is_broken_and_the_rest_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let book = dir.path().join("book");
        std::fs::create_dir_all(&book).unwrap();
        std::fs::write(
            book.join("index.html"),
            r##"<a href="two.html#here">ok</a><a href="two.html#gone">no id</a><a href="three.html">no file</a><a href="https://x.example">out</a><a href="#top">top</a><h1 id="top"></h1>"##,
        )
        .unwrap();
        std::fs::write(book.join("two.html"), r#"<h2 id="here">"#).unwrap();
        let readme = dir.path().join("README.md");
        std::fs::write(
            &readme,
            "# Top\n## A first step\n[ok](#a-first-step) [no](#nowhere) [file](missing.md)\n",
        )
        .unwrap();
        let broken = check(&book, &[readme]).unwrap();
        let links: Vec<&str> = broken.iter().map(|b| b.link.as_str()).collect();
        assert_eq!(
            links,
            ["two.html#gone", "three.html", "#nowhere", "missing.md"],
            "{broken:#?}"
        );
    }

    #[test]
    fn an_include_of_a_missing_file_or_anchor_is_broken() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(
            dir.path().join("s.sh"),
            "# ANCHOR: here\nls\n# ANCHOR_END: here\n",
        )
        .unwrap();
        std::fs::write(
            src.join("a.md"),
            "{{#include ../s.sh:here}} {{#include ../s.sh:gone}} {{#include ../none.rs}} {{#include ../s.sh}}",
        )
        .unwrap();
        let broken = includes(&src).unwrap();
        let links: Vec<&str> = broken.iter().map(|b| b.link.as_str()).collect();
        assert_eq!(links, ["../s.sh:gone", "../none.rs"], "{broken:#?}");
    }
}
