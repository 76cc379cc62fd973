// expect: kernel exceeds available shared memory: smem_bytes=232449 > max_smem_bytes=232448
// The SMEM budget to the byte: 227 KiB of buffers compile, one byte more does not.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long bytes = 227 * 1024 + 1;
#else
constexpr long long bytes = 227 * 1024;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), smem<i8>(shape(int_c<bytes>)), [](auto) { return commit_smem(); });
}
int main() { (void)lower(make()); }
