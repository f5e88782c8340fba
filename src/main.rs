fn main() -> std::process::ExitCode {
    gitward::cli::main(std::env::args_os().skip(1).collect())
}
