//! What a plan or an apply covers: `plan --refresh=false` (the files against the state alone, no
//! call) and `--target NAME` (only the names given).

use crate::declared::{
    KINESIS_PIPE, apply, changes, directory, names_on_server, plan, recorded_id,
};
use crate::support::{Cloud, KAFKA_PIPE};

#[test]
fn a_plan_without_refresh_makes_no_call_and_a_target_applies_only_its_pipe() {
    let cloud = Cloud::start();
    let dir = directory(
        &cloud,
        "pipes",
        &[("orders.yaml", KAFKA_PIPE), ("clicks.yaml", KINESIS_PIPE)],
    );
    apply(&cloud, &dir).expect(0);
    let (orders, clicks) = (recorded_id(&dir, "orders"), recorded_id(&dir, "clicks"));

    // orders is deleted out of band, clicks changed in its file.
    cloud
        .cloudctl(&["pipe", "delete", &orders, "--wait"])
        .expect(0);
    let file = cloud.home().join("pipes/clicks.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("replicas: 1.0"));
    std::fs::write(&file, text.replace("replicas: 1.0", "replicas: 2")).unwrap();
    cloud.clear_requests();

    let quick = cloud
        .cloudctl(&["plan", "-f", &dir, "--refresh=false", "-o", "json"])
        .expect(8);
    assert!(cloud.requests().is_empty(), "{:?}", cloud.requests());
    assert_eq!(
        changes(&quick),
        [(
            "replace".into(),
            "clicks".into(),
            vec!["scaling.replicas".into()]
        )],
        "the deleted pipe is not seen without a read"
    );
    assert_eq!(quick.json()["refreshed"], false);
    assert_eq!(quick.json()["reads"], 0);
    let human = cloud
        .cloudctl(&["plan", "-f", &dir, "--refresh=false", "-o", "human"])
        .expect(8);
    assert!(
        human
            .stdout
            .contains("not refreshed: the files compared with the state alone"),
        "{}",
        human.stdout
    );

    let unknown = cloud
        .cloudctl(&["plan", "-f", &dir, "--target", "nope", "-o", "json"])
        .expect(2);
    assert!(
        unknown
            .stderr
            .contains("no pipe is declared or recorded under the target name nope"),
        "{}",
        unknown.stderr
    );

    cloud
        .cloudctl(&[
            "apply", "-f", &dir, "--target", "clicks", "--yes", "-o", "json",
        ])
        .expect(0);
    assert_ne!(recorded_id(&dir, "clicks"), clicks, "clicks was replaced");
    assert_eq!(names_on_server(&cloud), ["clicks"], "orders was left alone");
    assert_eq!(recorded_id(&dir, "orders"), orders);

    let rest = plan(&cloud, &dir).expect(8);
    assert_eq!(
        changes(&rest),
        [("recreate".into(), "orders".into(), vec![])]
    );
    apply(&cloud, &dir).expect(0);
    plan(&cloud, &dir).expect(0);
}
