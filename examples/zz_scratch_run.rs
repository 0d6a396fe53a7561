use clap::Parser;
#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    run: isolde::run::cli::RunArgs,
}
fn main() {
    let c = Cli::parse();
    match isolde::run::cli::run_command(&c.run) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("isolde: {e:#}");
            std::process::exit(2)
        }
    }
}
