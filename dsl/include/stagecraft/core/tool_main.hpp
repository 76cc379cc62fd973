// A program's entry point that can also live in the GPU bundle's multi-call binary
// (bench/multicall.cpp): there STAGECRAFT_MULTICALL is defined and each tool's main() becomes
// <tool>_main, which the dispatcher calls by the name the binary was started as. One binary
// carries the front end, the backends and every kernel once instead of once per tool.
//
//   int STAGECRAFT_TOOL_MAIN(gemm_bench)(int argc, char** argv) { ... }
#pragma once

#ifdef STAGECRAFT_MULTICALL
#define STAGECRAFT_TOOL_MAIN(tool) tool##_main
#else
#define STAGECRAFT_TOOL_MAIN(tool) main
#endif
