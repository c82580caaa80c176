//! Snapshots of the public surface of each generated client: every operation with its method, path and
//! Rust signature, and every type with its fields and their JSON names.

use xtask::apis::{APIS, workspace_root};
use xtask::{spec, surface};

fn surface_of(name: &str) -> String {
    let root = workspace_root();
    let api = APIS.iter().find(|api| api.name == name).expect("known API");
    let spec = spec::load(&root.join(api.spec)).expect("spec loads");
    let generated = std::fs::read_to_string(root.join(api.output)).expect("generated file");
    surface::surface(&spec, &generated).expect("surface renders")
}

#[test]
fn management_surface() {
    insta::assert_snapshot!(surface_of("management"));
}

#[test]
fn observability_surface() {
    insta::assert_snapshot!(surface_of("observability"));
}

#[test]
fn observability_does_not_mention_management_types() {
    let surface = surface_of("observability");
    for management_type in ["Pipe", "Service", "ReversePrivateEndpoint", "Secret"] {
        assert!(
            !surface.contains(&format!("struct {management_type}\n")),
            "{management_type}"
        );
    }
}
