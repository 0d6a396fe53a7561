//! Embeds the checker: reads a history, checks it against the models given,
//! prints the human-readable report and exits like `isolde check`.
//!
//! ```text
//! cargo run --example embed                                # a built-in G1c history
//! cargo run --example embed -- history.edn serializable    # any history, any models
//! ```

use isolde::{check, read_history, read_history_file, render_report, CheckOptions, Validity};
use std::path::Path;

/// T2 reads T1's append to y, but the final read of x puts T2's append to x
/// before T1's: a G1c cycle, so not even read committed holds.
const G1C: &str = "{:index 0, :type :ok, :process 0, :value [[:append :x 1] [:r :y [1]]]}
{:index 1, :type :ok, :process 1, :value [[:append :x 2] [:append :y 1]]}
{:index 2, :type :ok, :process 2, :value [[:r :x [1 2]]]}";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (name, read) = match args.first() {
        Some(path) => (path.clone(), read_history_file(Path::new(path), None)),
        None => ("G1c".to_string(), read_history(G1C.as_bytes(), "G1c", None)),
    };
    let history = read.unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(4)
    });
    let models = args.get(1).map_or("serializable", String::as_str);
    let options = CheckOptions {
        models: Some(models.split(',').map(str::to_string).collect()),
        ..Default::default()
    };
    if let Err(e) = isolde::validate_options(&options) {
        eprintln!("{e}");
        std::process::exit(2);
    }
    let report = check(&history, &options);
    print!("{}", render_report(&history, &report, &name));
    std::process::exit(match report.valid {
        Validity::True => 0,
        Validity::False => 1,
        Validity::Unknown => 3,
    })
}
