//! `cargo xtask codegen`: regenerate every client, or check that the committed ones are current.

use std::path::Path;

use anyhow::{Context, Result};

use crate::apis::{APIS, GENERATED_DIR};
use crate::{generate, spec};

/// A generated file whose committed content differs from a fresh generation.
#[derive(Debug)]
pub struct Drift {
    /// The file, relative to the workspace root.
    pub file: String,
    /// What is wrong, one line.
    pub reason: String,
    /// A unified diff from the committed content to the fresh one (empty for a stray file).
    pub diff: String,
}

/// Generates every API in memory: `(output path relative to root, content)`, the client and the
/// copy of its spec that `api-raw` ships.
pub fn generate_all(root: &Path) -> Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    for api in &APIS {
        let spec = spec::load(&root.join(api.spec))?;
        let source = generate::generate(api, &spec)?;
        files.push((api.output.to_string(), source));
        let text = std::fs::read_to_string(root.join(api.spec))
            .with_context(|| format!("cannot read {}", api.spec))?;
        files.push((api.spec_copy.to_string(), text));
    }
    Ok(files)
}

/// Writes every generated file; returns the ones whose content changed.
pub fn write_all(root: &Path) -> Result<Vec<String>> {
    let fresh = generate_all(root)?;
    std::fs::create_dir_all(root.join(GENERATED_DIR))
        .with_context(|| format!("cannot create {GENERATED_DIR}"))?;
    let mut changed = Vec::new();
    for (file, content) in fresh {
        let path = root.join(&file);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(content.as_str()) {
            std::fs::write(&path, &content).with_context(|| format!("cannot write {file}"))?;
            changed.push(file);
        }
    }
    for stray in stray_files(root)? {
        std::fs::remove_file(root.join(&stray))
            .with_context(|| format!("cannot remove {stray}"))?;
        changed.push(stray);
    }
    Ok(changed)
}

/// Compares every committed generated file with a fresh generation.
pub fn check_all(root: &Path) -> Result<Vec<Drift>> {
    let fresh = generate_all(root)?;
    let mut drifts = Vec::new();
    for (file, content) in &fresh {
        match std::fs::read_to_string(root.join(file)) {
            Ok(committed) if &committed == content => {}
            Ok(committed) => drifts.push(Drift {
                file: file.clone(),
                reason: "differs from what the spec generates".to_string(),
                diff: unified_diff(file, &committed, content),
            }),
            Err(_) => drifts.push(Drift {
                file: file.clone(),
                reason: "is missing".to_string(),
                diff: unified_diff(file, "", content),
            }),
        }
    }
    for stray in stray_files(root)? {
        drifts.push(Drift {
            file: stray,
            reason: "is not produced by any spec (a leftover?)".to_string(),
            diff: String::new(),
        });
    }
    Ok(drifts)
}

/// Files in the generated directory that no API produces.
fn stray_files(root: &Path) -> Result<Vec<String>> {
    let dir = root.join(GENERATED_DIR);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut stray = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {GENERATED_DIR}"))?;
        let name = format!("{GENERATED_DIR}/{}", entry.file_name().to_string_lossy());
        if !APIS
            .iter()
            .any(|api| api.output == name || api.spec_copy == name)
        {
            stray.push(name);
        }
    }
    stray.sort();
    Ok(stray)
}

/// A unified diff with three lines of context, at most `MAX_DIFF_LINES` lines long.
pub fn unified_diff(file: &str, old: &str, new: &str) -> String {
    const MAX_DIFF_LINES: usize = 200;
    let diff = similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("{file} (committed)"),
            &format!("{file} (from the spec)"),
        )
        .to_string();
    let total = diff.lines().count();
    if total <= MAX_DIFF_LINES {
        return diff;
    }
    let mut cut: String = diff
        .lines()
        .take(MAX_DIFF_LINES)
        .collect::<Vec<_>>()
        .join("\n");
    cut.push_str(&format!(
        "\n... {} more diff lines\n",
        total - MAX_DIFF_LINES
    ));
    cut
}
