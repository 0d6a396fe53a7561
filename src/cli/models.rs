//! `isolde check --model bank|counter|set|set-full|long-fork|comments|sequential|cas-register|mutex`:
//! the one
//! entry point of elle-cli's non-transactional models into the CLI.

use super::check::{worse, CheckArgs, FormatArg, ModelArg, ReportDir};
use super::exit;
use isolde::history::read::Format;
use isolde::model::Validity;
use isolde::models::{self, Model, Options};
use std::io::Write;

/// The library model a `--model` names (`None` for the transactional ones).
fn model(m: ModelArg) -> Option<Model> {
    Some(match m {
        ModelArg::Bank => Model::Bank,
        ModelArg::Counter => Model::Counter,
        ModelArg::Set => Model::Set,
        ModelArg::SetFull => Model::SetFull,
        ModelArg::LongFork => Model::LongFork,
        ModelArg::CasRegister => Model::CasRegister,
        ModelArg::Mutex => Model::Mutex,
        ModelArg::Comments => Model::Comments,
        ModelArg::Sequential => Model::Sequential,
        ModelArg::ListAppend | ModelArg::RwRegister => return None,
    })
}

/// Checks every file against `m`: prints `FILE<TAB>verdict`, the JSON
/// result (`-v`) or the readable report (`-x`), and with `-d` writes the
/// model's report page; returns the exit code.
pub fn run(m: ModelArg, args: &CheckArgs) -> anyhow::Result<i32> {
    let Some(model) = model(m) else {
        anyhow::bail!("{m:?} is a transactional model, checked by `check::run`");
    };
    let name = clap::ValueEnum::to_possible_value(&m)
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    if let Some(dir) = &args.directory {
        if let Err(e) = isolde::report::dir::prepare(dir) {
            eprintln!("isolde: {e}");
            return Ok(exit::USAGE);
        }
    }
    let mut out_dir = args
        .directory
        .as_deref()
        .map(|d| ReportDir::new(d, args.files.len()));
    let options = Options {
        bank: models::bank::BankOptions {
            negative_balances: args.allow_negative_balances,
            total_amount: args.total_amount,
        },
        group_size: args.group_size,
        linearizable: models::linearizable::LinOptions {
            time_limit_ms: Some(args.check.solver_timeout),
            ..Default::default()
        },
    };
    let format = match args.format {
        Some(FormatArg::Onelite) => Some(Format::OneLite),
        Some(FormatArg::Json) => Some(Format::Json),
        Some(FormatArg::Edn) => Some(Format::Edn),
        None => None,
    };
    let mut worst = exit::VALID;
    let stdout = std::io::stdout();
    let mut closed = false;
    for file in &args.files {
        let label = file.display().to_string();
        let read = if file.as_os_str() == "-" {
            models::read_ops(std::io::stdin(), "<stdin>", format)
        } else {
            models::read_ops_file(file, format)
        };
        let checked = read.and_then(|ops| models::check(model, &ops, &options).map(|c| (ops, c)));
        let (ops, checked) = match checked {
            Ok(x) => x,
            Err(e) => {
                eprintln!("isolde: {e}");
                worst = worse(worst, exit::INPUT_ERROR);
                if let Some(d) = &mut out_dir {
                    d.unreadable(file, e.to_string());
                }
                continue;
            }
        };
        if !closed {
            let mut out = stdout.lock();
            let printed = if args.check.verbose {
                let mut j = serde_json::Map::new();
                j.insert("file".into(), label.clone().into());
                if let serde_json::Value::Object(m) = checked.to_json(&ops) {
                    j.extend(m);
                }
                serde_json::to_writer_pretty(&mut out, &j)
                    .map_err(anyhow::Error::from)
                    .and_then(|_| writeln!(out).map_err(Into::into))
            } else if args.check.explain {
                write!(
                    out,
                    "{label}: {}\n{}",
                    checked.valid().name(),
                    checked.explain(&ops)
                )
                .map_err(Into::into)
            } else {
                writeln!(out, "{label}\t{}", checked.valid().name()).map_err(Into::into)
            };
            match printed {
                Err(e) if super::is_broken_pipe(&e) => closed = true,
                other => other?,
            }
        }
        if let Some(d) = &mut out_dir {
            let bad = if checked.valid() == Validity::False {
                format!("{name}: some reads break the model")
            } else {
                String::new()
            };
            d.add_with(file, checked.valid(), bad, |dir| {
                isolde::report::write_model_report(&ops, &checked, &name, dir, &label)
                    .map_err(|e| anyhow::anyhow!("writing the report to {}: {e}", dir.display()))
            })?;
        }
        let code = match checked.valid() {
            Validity::True => exit::VALID,
            Validity::False => exit::INVALID,
            Validity::Unknown => exit::UNKNOWN,
        };
        worst = worse(worst, code);
        if Some(file) == args.files.last() {
            // The process ends next: the OS takes the ops back at once,
            // faster than freeing a million values one by one.
            std::mem::forget(checked);
            std::mem::forget(ops);
        }
    }
    if let Some(d) = out_dir {
        d.finish()?;
    }
    Ok(worst)
}
