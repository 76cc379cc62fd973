// The `stagecraft` executable: the CLI over the bundled examples (linked in as objects, so their
// registrations run).
#include "stagecraft/cli.hpp"
#include "stagecraft/core/tool_main.hpp"

int STAGECRAFT_TOOL_MAIN(stagecraft)(int argc, char** argv) { return stagecraft::cli::main(argc, argv); }
