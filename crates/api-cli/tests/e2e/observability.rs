//! `cloudctl alert get` and `cloudctl dashboard list` (the observability API).

use crate::support::Cloud;

#[test]
fn an_alert_is_shown_in_both_modes() {
    let cloud = Cloud::start();
    let json = cloud
        .cloudctl(&["alert", "get", "66a1f0c2d4e5f60718293a4b", "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(json["id"], "66a1f0c2d4e5f60718293a4b");
    assert_eq!(json["name"], "Checkout p99 latency");
    assert!(json["state"].is_string());
    assert_eq!(json["channel"]["type"], "webhook");

    let human = cloud
        .cloudctl(&["alert", "get", "66a1f0c2d4e5f60718293a4b", "-o", "human"])
        .expect(0)
        .stdout;
    assert!(
        human.starts_with("ID         66a1f0c2d4e5f60718293a4b\nName       Checkout p99 latency\n"),
        "{human}"
    );
    assert!(
        !human.contains("Some(") && !human.contains("None"),
        "{human}"
    );
}

#[test]
fn dashboards_are_listed_in_both_modes() {
    let cloud = Cloud::start();
    let json = cloud
        .cloudctl(&["dashboard", "list", "-o", "json"])
        .expect(0)
        .json();
    let dashboards = json.as_array().expect("an array");
    let ids: Vec<&str> = dashboards.iter().filter_map(|d| d["id"].as_str()).collect();
    assert_eq!(
        ids,
        ["66a1f0c2d4e5f60718293a42", "66a1f0c2d4e5f60718293a46"]
    );
    assert_eq!(dashboards[0]["name"], "Checkout");
    assert!(
        dashboards[0]["tiles"]
            .as_array()
            .is_some_and(|t| t.len() == 2)
    );

    let human = cloud
        .cloudctl(&["dashboard", "list", "-o", "human"])
        .expect(0)
        .stdout;
    assert_eq!(
        human,
        "ID                        NAME      TILES  TAGS\n\
         66a1f0c2d4e5f60718293a42  Checkout  2      team:payments\n\
         66a1f0c2d4e5f60718293a46  Empty     0      -\n"
    );
}
