// The user's own tool: every `stagecraft` subcommand, for the kernels this program registers.
#include <stagecraft/cli.hpp>

int main(int argc, char** argv) { return stagecraft::cli::main(argc, argv); }
