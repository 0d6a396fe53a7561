mod run_support;
#[test]
fn scratch() {
    let spec = std::env::var("SCRATCH").unwrap();
    let args: Vec<&str> = spec.split(' ').collect();
    let r = run_support::run("scratch", &args);
    eprintln!(
        "{:?} {:?} {:.2}s faults {} path {}",
        args,
        r.counts,
        r.elapsed.as_secs_f64(),
        r.faults,
        r.path.display()
    );
}
