// The `stagecraft` executable: the CLI over the bundled examples (linked in as objects, so their
// registrations run).
#include "stagecraft/cli.hpp"

int main(int argc, char** argv) { return stagecraft::cli::main(argc, argv); }
