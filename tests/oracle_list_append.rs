mod oracle;
use isolde::check::{check_history, CheckOptions};
use isolde::history::read::read_history;

#[test]
fn smoke() {
    for f in [
        "checker-test--G0-1",
        "checker-test--G1a-1",
        "README-example",
    ] {
        let p = format!("/work/shared/conformance/list-append/{f}.edn");
        let bytes = std::fs::read(&p).unwrap();
        let h = read_history(&bytes[..], &p, None).unwrap();
        for m in ["serializable", "strict-serializable"] {
            let r = check_history(
                &h,
                &CheckOptions {
                    models: Some(vec![m.into()]),
                    ..Default::default()
                },
            );
            eprintln!(
                "{f} {m}: {:?} {:?} not={:?} notes={:?}",
                r.valid, r.anomaly_types, r.not, r.notes
            );
        }
    }
    let h = oracle::concurrent(&[(0, oracle::Outcome::Ok, "ax1")]);
    eprintln!("{}", h.to_edn());
    let hh = read_history(h.to_edn().as_bytes(), "x", None).unwrap();
    let r = check_history(
        &hh,
        &CheckOptions {
            models: Some(vec!["serializable".into()]),
            ..Default::default()
        },
    );
    eprintln!("{:?} {:?}", r.valid, r.anomaly_types);
}
