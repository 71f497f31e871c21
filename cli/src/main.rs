//! The `ferromcp` command (see the library, `ferromcp_cli`).

fn main() -> std::process::ExitCode {
    let status = ferromcp_cli::main_with_args(std::env::args_os());
    std::process::ExitCode::from(u8::try_from(status).unwrap_or(1))
}
