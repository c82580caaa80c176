//! `cloudctl endpoint list|register`.

use crate::support::Cloud;

#[test]
fn reverse_private_endpoints_are_listed_in_both_modes() {
    let cloud = Cloud::start();
    let json = cloud
        .cloudctl(&["endpoint", "list", "-o", "json"])
        .expect(0)
        .json();
    let endpoints = json.as_array().expect("an array");
    assert_eq!(endpoints.len(), 2);
    assert_eq!(endpoints[0]["id"], "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f");
    assert_eq!(endpoints[0]["serviceId"], cloud.service("running"));
    assert_eq!(endpoints[0]["type"], "MSK_MULTI_VPC");
    assert_eq!(endpoints[0]["status"], "Ready");

    let human = cloud
        .cloudctl(&["endpoint", "list", "-o", "human"])
        .expect(0)
        .stdout;
    let lines: Vec<&str> = human.lines().collect();
    assert_eq!(lines.len(), 3, "{human}");
    assert!(
        lines[0].starts_with("ID  ") && lines[0].contains("STATUS"),
        "{human}"
    );
    assert!(
        lines[1].starts_with("c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f  MSK_MULTI_VPC"),
        "{human}"
    );
    // Columns line up: STATUS starts at the same place on every line.
    let at = lines[0].find("STATUS").unwrap();
    assert!(lines[1][at..].starts_with("Ready"), "{human}");

    let stopped = cloud.service("stopped");
    let one = cloud
        .run(
            cloud
                .command()
                .env("CLOUD_SERVICE_ID", &stopped)
                .args(["endpoint", "list", "-o", "json"]),
        )
        .expect(0)
        .json();
    assert_eq!(one.as_array().map(Vec::len), Some(1));
}

#[test]
fn a_private_endpoint_is_registered_in_both_modes() {
    let cloud = Cloud::start();
    let json = cloud
        .cloudctl(&[
            "endpoint",
            "register",
            "--id",
            "vpce-0123456789abcdef0",
            "--description",
            "CI runners",
            "-o",
            "json",
        ])
        .expect(0)
        .json();
    assert_eq!(
        json,
        serde_json::json!({"id": "vpce-0123456789abcdef0", "description": "CI runners"})
    );
    let human = cloud
        .cloudctl(&[
            "endpoint",
            "register",
            "--id",
            "vpce-0fedcba9876543210",
            "--description",
            "laptops",
            "-o",
            "human",
        ])
        .expect(0)
        .stdout;
    assert_eq!(
        human,
        "ID           vpce-0fedcba9876543210\nDescription  laptops\n"
    );

    let empty = cloud
        .cloudctl(&[
            "endpoint",
            "register",
            "--id",
            " ",
            "--description",
            "x",
            "-o",
            "json",
        ])
        .expect(2)
        .error();
    assert_eq!(empty["code"], "VALIDATION_ERROR");
}
