//! A reviewable text view of a generated client: its operations and its types.
//!
//! The snapshot tests keep this view under insta, so a spec change shows up in review as a small,
//! readable diff (an operation's method, path and Rust signature; a type's fields with their JSON names)
//! instead of thousands of lines of generated code.

use std::collections::BTreeMap;
use std::fmt::Write;

use anyhow::{Context, Result, anyhow};
use openapiv3::OpenAPI;
use syn::{Attribute, Fields, ImplItem, Item, LitStr};

use crate::generate::{SUPPORT_MODULE, replacements};
use crate::spec::operations;

/// Renders the public surface of `generated` (the source generated from `spec`).
pub fn surface(spec: &OpenAPI, generated: &str) -> Result<String> {
    let file = syn::parse_file(generated).context("the generated file does not parse")?;
    let mut methods = BTreeMap::new();
    let mut types = None;
    for item in &file.items {
        match item {
            Item::Impl(block) if is_client_impl(block) => {
                for item in &block.items {
                    if let ImplItem::Fn(f) = item {
                        methods.insert(f.sig.ident.to_string(), render_signature(&f.sig));
                    }
                }
            }
            Item::Mod(module) if module.ident == "types" => {
                types = module.content.as_ref().map(|(_, items)| items);
            }
            _ => {}
        }
    }

    let mut out = String::new();
    writeln!(out, "# Operations").ok();
    for (path, method, op) in operations(spec) {
        let id = op.operation_id.as_deref().unwrap_or_default();
        let rust_name = snake_case(id);
        let signature = methods
            .get(&rust_name)
            .ok_or_else(|| anyhow!("operation {id} has no method `{rust_name}` in the client"))?;
        writeln!(out, "\n{method} {path}  ({id})").ok();
        for line in signature.lines() {
            writeln!(out, "    {line}").ok();
        }
    }

    writeln!(out, "\n# Hand-written types used in place of schemas").ok();
    for (schema, ty) in replacements(spec) {
        writeln!(out, "{schema} -> {SUPPORT_MODULE}::{ty}").ok();
    }

    writeln!(out, "\n# Types").ok();
    let mut rendered = BTreeMap::new();
    for item in types.into_iter().flatten() {
        if let Some((name, text)) = render_type_item(item) {
            rendered.insert(name, text);
        }
    }
    for text in rendered.values() {
        write!(out, "\n{text}").ok();
    }
    Ok(out)
}

fn is_client_impl(block: &syn::ItemImpl) -> bool {
    block.trait_.is_none()
        && matches!(&*block.self_ty, syn::Type::Path(p) if p.path.is_ident("Client"))
}

/// `updateServiceState` -> `update_service_state`, as progenitor names methods.
fn snake_case(id: &str) -> String {
    let mut out = String::new();
    for (i, c) in id.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn render_signature(sig: &syn::Signature) -> String {
    let file: syn::File = syn::parse_quote! { trait Surface { #sig; } };
    let text = prettyplease::unparse(&file);
    let lines: Vec<&str> = text.lines().collect();
    lines[1..lines.len().saturating_sub(1)]
        .iter()
        .map(|line| line.strip_prefix("    ").unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

fn render_type(ty: &syn::Type) -> String {
    let file: syn::File = syn::parse_quote! { type Surface = #ty; };
    let text = prettyplease::unparse(&file);
    text.trim()
        .trim_start_matches("type Surface = ")
        .trim_end_matches(';')
        .to_string()
}

fn render_type_item(item: &Item) -> Option<(String, String)> {
    match item {
        Item::Struct(s) => {
            let name = s.ident.to_string();
            let mut text = match &s.fields {
                Fields::Named(_) => format!("struct {name}\n"),
                Fields::Unnamed(fields) => {
                    let inner: Vec<String> =
                        fields.unnamed.iter().map(|f| render_type(&f.ty)).collect();
                    format!("struct {name}({})\n", inner.join(", "))
                }
                Fields::Unit => format!("struct {name}\n"),
            };
            if let Fields::Named(fields) = &s.fields {
                for field in &fields.named {
                    let ident = field
                        .ident
                        .as_ref()
                        .map(|i| i.to_string())
                        .unwrap_or_default();
                    let json = serde_rename(&field.attrs).unwrap_or_else(|| ident.clone());
                    writeln!(text, "    {ident}: {}  \"{json}\"", render_type(&field.ty)).ok();
                }
            }
            Some((name, text))
        }
        Item::Enum(e) => {
            let name = e.ident.to_string();
            let mut text = format!("enum {name}\n");
            for variant in &e.variants {
                let ident = variant.ident.to_string();
                let json = serde_rename(&variant.attrs).unwrap_or_else(|| ident.clone());
                let payload = match &variant.fields {
                    Fields::Unnamed(f) => {
                        let inner: Vec<String> =
                            f.unnamed.iter().map(|f| render_type(&f.ty)).collect();
                        format!("({})", inner.join(", "))
                    }
                    Fields::Named(_) => "{ .. }".to_string(),
                    Fields::Unit => String::new(),
                };
                writeln!(text, "    {ident}{payload}  \"{json}\"").ok();
            }
            Some((name, text))
        }
        Item::Type(t) => Some((
            t.ident.to_string(),
            format!("type {} = {}\n", t.ident, render_type(&t.ty)),
        )),
        _ => None,
    }
}

/// The `rename = "..."` of a `#[serde(...)]` attribute, if any.
fn serde_rename(attrs: &[Attribute]) -> Option<String> {
    let mut rename = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let value: LitStr = meta.value()?.parse()?;
                rename = Some(value.value());
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _: proc_macro2::Group = meta.input.parse()?;
            }
            Ok(())
        });
    }
    rename
}

#[cfg(test)]
mod tests {
    use super::snake_case;

    #[test]
    fn operation_ids_become_method_names() {
        assert_eq!(snake_case("updateServiceState"), "update_service_state");
        assert_eq!(snake_case("getAlert"), "get_alert");
    }
}
