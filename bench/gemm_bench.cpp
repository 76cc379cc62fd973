// gemm_hopper (on a Hopper GPU) and gemm_blackwell (on a Blackwell GPU) against cuBLAS (cublasLt,
// the library's own choice of kernel) in the same process, on the same inputs: bf16 A (M, K),
// B (N, K), C = A * B^T in bf16 with f32 accumulation, at 2048^3, 4096^3 and 8192^3 (or the sizes
// given); gemm_hopper with and without the 2x1 cluster and persistent, gemm_blackwell at 128 and
// 256 columns per CTA, gemm_blackwell_2cta at 128 and 256 columns per CTA pair, with one pair per cluster and with two sharing A
// (mc=2). A kernel for another architecture than device 0's is skipped with a line
// saying so. Our C is checked against cuBLAS's element by element; then both are timed (median
// of batched launches) and the ratio printed.
//
// Tolerance, per element: both results are f32 sums rounded once to bf16 (at most 2^-8 relative
// each), and f32 sums of K products in different orders differ by about sqrt(K) * 2^-24 * sum |a b|
// (the probabilistic rounding-error bound, Higham & Mary 2019), taken 4 times over here:
//   |ours - cublas| <= 2^-8 (|ours| + |cublas|) + 4 sqrt(K) 2^-24 sum_k |a_ik| |b_jk|
// where sum_k |a_ik| |b_jk| <= min(max|a_i.| sum|b_j.|, sum|a_i.| max|b_j.|) (row sums, cheap).
//
// Without a CUDA driver it prints the reason and exits 3 (docs/gpu.md), like gpu_bench.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <stagecraft/core/tool_main.hpp>
#include <stagecraft/cuda/runtime.hpp>
#include <stagecraft/nvrtc/nvrtc.hpp>
#include <stagecraft/registry.hpp>

#include "dl.hpp"

using namespace stagecraft;

namespace {

// ---- cublasLt, loaded at run time: the bench links nothing of CUDA --------------------------------
// The few types and constants used, as cublasLt.h (CUDA 12/13) defines them.
using lt_status = int;
using lt_handle = void*;
using lt_desc = void*;
using lt_layout = void*;
using lt_pref = void*;
struct lt_algo {
  std::uint64_t data[8];
};
struct lt_heuristic {
  lt_algo algo;
  std::size_t workspace_size;
  lt_status state;
  float waves_count;
  int reserved[4];
};
constexpr int cuda_r_16bf = 14, cuda_r_32f = 0;          // cudaDataType
constexpr int compute_32f = 68;                           // CUBLAS_COMPUTE_32F
constexpr int op_n = 0, op_t = 1;                         // cublasOperation_t
constexpr int desc_transa = 3, desc_transb = 4;           // CUBLASLT_MATMUL_DESC_TRANSA/B
constexpr int pref_max_workspace = 1;                     // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES

struct cublaslt {
  void* lib = nullptr;
  std::string path, reason;
  lt_status (*create)(lt_handle*) = nullptr;
  lt_status (*desc_create)(lt_desc*, int, int) = nullptr;
  lt_status (*desc_set)(lt_desc, int, const void*, std::size_t) = nullptr;
  lt_status (*layout_create)(lt_layout*, int, std::uint64_t, std::uint64_t, std::int64_t) = nullptr;
  lt_status (*pref_create)(lt_pref*) = nullptr;
  lt_status (*pref_set)(lt_pref, int, const void*, std::size_t) = nullptr;
  lt_status (*heuristic)(lt_handle, lt_desc, lt_layout, lt_layout, lt_layout, lt_layout, lt_pref, int, lt_heuristic*, int*) = nullptr;
  lt_status (*matmul)(lt_handle, lt_desc, const void*, const void*, lt_layout, const void*, lt_layout, const void*, const void*, lt_layout, void*,
                      lt_layout, const lt_algo*, void*, std::size_t, void*) = nullptr;
};

// From the toolkit: $CUDA_HOME or /usr/local/cuda, then the loader's path.
cublaslt load_cublaslt() {
  cublaslt lt;
  std::vector<std::string> tries;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* d = std::getenv(env); d && *d) tries.push_back(std::string(d) + "/lib64/libcublasLt.so");
  for (const char* v : {"13", "12"}) {
    tries.push_back(std::string("/usr/local/cuda/lib64/libcublasLt.so.") + v);
    tries.push_back(std::string("libcublasLt.so.") + v);
  }
  tries.push_back("libcublasLt.so");
  const auto l = bench::dl_open_first(tries, "cuBLASLt");
  lt.lib = l.handle, lt.path = l.path, lt.reason = l.reason;
  if (!lt.lib) return lt;
  bench::dl_symbols get(lt.lib);
  get("cublasLtCreate", lt.create);
  get("cublasLtMatmulDescCreate", lt.desc_create);
  get("cublasLtMatmulDescSetAttribute", lt.desc_set);
  get("cublasLtMatrixLayoutCreate", lt.layout_create);
  get("cublasLtMatmulPreferenceCreate", lt.pref_create);
  get("cublasLtMatmulPreferenceSetAttribute", lt.pref_set);
  get("cublasLtMatmulAlgoGetHeuristic", lt.heuristic);
  get("cublasLtMatmul", lt.matmul);
  if (!get.ok()) lt.reason = lt.path + " lacks cublasLt entry points the bench needs";
  return lt;
}

struct lt_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void check(lt_status s, const char* what) {
  if (s != 0) throw lt_error(std::string("cublasLt ") + what + " failed with status " + std::to_string(s));
}

// C (M, N) row-major = A (M, K) row-major * B (N, K)^T. Column-major, that is C^T (N, M) =
// op_t(B^T as (K, N)) * A^T as (K, M): the "TN" GEMM, cuBLAS's own fastest layout.
struct lt_gemm {
  cublaslt const& lt;
  lt_handle h = nullptr;
  lt_desc desc = nullptr;
  lt_layout la = nullptr, lb = nullptr, lc = nullptr;
  lt_heuristic best{};
  cuda::device_memory workspace{std::size_t{64} << 20};
  lt_gemm(cublaslt const& l, std::int64_t M, std::int64_t N, std::int64_t K) : lt(l) {
    check(lt.create(&h), "create");
    check(lt.desc_create(&desc, compute_32f, cuda_r_32f), "matmul descriptor");
    const int t = op_t, n = op_n;
    check(lt.desc_set(desc, desc_transa, &t, sizeof t), "transa");
    check(lt.desc_set(desc, desc_transb, &n, sizeof n), "transb");
    check(lt.layout_create(&la, cuda_r_16bf, K, N, K), "layout of B");
    check(lt.layout_create(&lb, cuda_r_16bf, K, M, K), "layout of A");
    check(lt.layout_create(&lc, cuda_r_16bf, N, M, N), "layout of C");
    lt_pref pref = nullptr;
    check(lt.pref_create(&pref), "preference");
    const std::uint64_t ws = workspace.bytes();
    check(lt.pref_set(pref, pref_max_workspace, &ws, sizeof ws), "workspace preference");
    int found = 0;
    check(lt.heuristic(h, desc, la, lb, lc, lc, pref, 1, &best, &found), "heuristic");
    if (found == 0) throw lt_error("cublasLt found no algorithm for this GEMM");
  }
  void run(std::uintptr_t a, std::uintptr_t b, std::uintptr_t c) {
    const float one = 1.0f, zero = 0.0f;
    check(lt.matmul(h, desc, &one, reinterpret_cast<void*>(b), la, reinterpret_cast<void*>(a), lb, &zero, reinterpret_cast<void*>(c), lc,
                    reinterpret_cast<void*>(c), lc, &best.algo, reinterpret_cast<void*>(workspace.address()), workspace.bytes(), nullptr),
          "matmul");
  }
};

// Milliseconds per run: the median over 5 trials of `batch` runs enqueued back to back and
// synchronised once (so launch latency and host-side set-up overlap the GPU's work, as in an
// application), after two warm-up runs.
template <class F>
double median_ms(F&& f, int batch) {
  f();
  f();
  cuda::synchronize();
  std::vector<double> t;
  for (int trial = 0; trial < 5; ++trial) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < batch; ++r) f();
    cuda::synchronize(nullptr, 60000);
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / batch);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::span<const std::byte> bytes_of(host_tensor const& t) { return {t.bytes.data(), t.bytes.size()}; }

}  // namespace

int STAGECRAFT_TOOL_MAIN(gemm_bench)(int argc, char** argv) {
  const auto st = cuda::driver_status();
  if (!st.available) {
    std::printf("%s\n", st.reason.c_str());
    return 3;
  }
  // Each kernel with the configurations it is measured in: a label and its parameters.
  struct config {
    std::string label;
    param_values params;
  };
  struct bench_kernel {
    const char* name;
    ir::Target target;
    const char* gpu;
    std::vector<config> configs;
  };
  // gemm_hopper: A shared by multicast in a 2x1 cluster, and not; then persistent: one CTA per SM
  // (an even count: whole clusters), each looping over tiles. The label reads "cl2/132" there.
  // Labels are one word: bench/gpu_check.sh reads the table by columns.
  std::vector<config> hopper{{"cl2", {{"cluster", 2}, {"ctas", 0}}}, {"cl1", {{"cluster", 1}, {"ctas", 0}}}};
  if (const std::int64_t persistent = st.multiprocessors / 2 * 2; persistent >= 2)
    hopper.push_back({"cl2/" + std::to_string(persistent), {{"cluster", 2}, {"ctas", persistent}}});
  // gemm_blackwell one CTA per tile, and persistent with one CTA per SM ("BN256/148"): its two
  // TMEM accumulators let a tile's epilogue overlap the next tile's MMAs.
  std::vector<config> blackwell{{"BN256", {{"BN", 256}, {"ctas", 0}}}, {"BN128", {{"BN", 128}, {"ctas", 0}}}};
  if (st.multiprocessors >= 1) blackwell.push_back({"BN256/" + std::to_string(st.multiprocessors), {{"BN", 256}, {"ctas", st.multiprocessors}}});
  // gemm_blackwell_2cta likewise: one cluster per tile, and persistent with the SMs in pairs.
  std::vector<config> pairs{{"BN256", {{"BN", 256}, {"mc", 1}, {"ctas", 0}}}, {"BN128", {{"BN", 128}, {"mc", 1}, {"ctas", 0}}},
                            {"BN256mc2", {{"BN", 256}, {"mc", 2}, {"ctas", 0}}}, {"BN128mc2", {{"BN", 128}, {"mc", 2}, {"ctas", 0}}}};
  if (st.multiprocessors >= 4) pairs.push_back({"BN256/" + std::to_string(st.multiprocessors), {{"BN", 256}, {"mc", 1}, {"ctas", st.multiprocessors}}});
  const std::vector<bench_kernel> kernels{
      {"gemm_hopper", ir::Target::sm_90a, "Hopper", hopper},
      {"gemm_blackwell", ir::Target::sm_100a, "Blackwell", blackwell},
      // The CTA pair: 256 x BN tiles, one cta_group::2 MMA per pair; mc2: two pairs per (2, 2)
      // cluster sharing A by TMA multicast (N a multiple of 2 BN: every size here is).
      {"gemm_blackwell_2cta", ir::Target::sm_100a, "Blackwell", pairs},
  };
  int runnable = 0;
  for (auto const& bk : kernels) {
    if (st.target == bk.target) {
      ++runnable;
      continue;
    }
    std::printf("gemm_bench: %s is an %s kernel; device 0 (%s) is not a %s GPU%s%s: skipped\n", bk.name, ir::target_name(bk.target),
                st.device.c_str(), bk.gpu, st.unsupported.empty() ? "" : ": ", st.unsupported.c_str());
  }
  if (runnable == 0) return 3;
  std::vector<std::int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty()) sizes = {2048, 4096, 8192};
  const auto lt = load_cublaslt();
  if (!lt.reason.empty()) {
    std::printf("gemm_bench: %s: nothing to compare with\n", lt.reason.c_str());
    return 1;
  }
  std::printf("%s (%s), cuBLASLt from %s; C = A * B^T, bf16 in and out, f32 accumulation\n", st.device.c_str(), ir::target_name(*st.target),
              lt.path.c_str());
  std::printf("%-6s %-15s %-12s %10s %10s %10s %10s %8s %12s %s\n", "size", "kernel", "config", "ours ms", "TFLOP/s", "cuBLAS ms", "TFLOP/s", "ratio",
              "max |diff|", "check");
  int failures = 0;
  for (auto const& bk : kernels) {
  if (st.target != bk.target) continue;
  auto const& e = registry::global().find(bk.name);
  for (const std::int64_t n : sizes)
  for (auto const& cfg : bk.configs) {
    const std::int64_t M = n, N = n, K = n;
    const std::string& label = cfg.label;
    ir::Kernel k;
    try {
      auto p = cfg.params;
      p.insert({{"M", M}, {"N", N}, {"K", K}});
      k = e.build(registry::resolve(e, p));
    } catch (std::exception const& x) {
      std::printf("%-6lld %s\n", static_cast<long long>(n), x.what());
      ++failures;
      continue;
    }
    std::mt19937 rng(static_cast<std::uint32_t>(n));
    std::uniform_real_distribution<float> dist(-1, 1);
    auto a = host_tensor::zeros(ir::DType::bf16, {M, K}), b = host_tensor::zeros(ir::DType::bf16, {N, K});
    for (std::int64_t i = 0; i < M * K; ++i) a.set(i, dist(rng));
    for (std::int64_t i = 0; i < N * K; ++i) b.set(i, dist(rng));
    const std::size_t c_bytes = static_cast<std::size_t>(M * N * 2);
    cuda::device_memory da(a.bytes.size()), db(b.bytes.size()), dc(c_bytes), dref(c_bytes);
    da.upload(bytes_of(a));
    db.upload(bytes_of(b));
    const auto c = nvrtc::compile(k, bk.target);
    const std::uintptr_t ptrs[] = {da.address(), db.address(), dc.address()};
    lt_gemm ref(lt, M, N, K);
    const int batch = n >= 8192 ? 5 : 20;
    const double ours = median_ms([&] { cuda::launch_on_device(c, k, ptrs); }, batch);
    const double theirs = median_ms([&] { ref.run(da.address(), db.address(), dref.address()); }, batch);
    auto got = host_tensor::zeros(ir::DType::bf16, {M, N}), want = got;
    dc.download({got.bytes.data(), got.bytes.size()});
    dref.download({want.bytes.data(), want.bytes.size()});
    // Row sums and maxima of |a| and |b| for the bound on sum_k |a_ik| |b_jk|.
    std::vector<double> a_sum(M), a_max(M), b_sum(N), b_max(N);
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t kk = 0; kk < K; ++kk) a_sum[i] += std::fabs(a.get(i * K + kk)), a_max[i] = std::max(a_max[i], std::fabs(a.get(i * K + kk)));
    for (std::int64_t j = 0; j < N; ++j)
      for (std::int64_t kk = 0; kk < K; ++kk) b_sum[j] += std::fabs(b.get(j * K + kk)), b_max[j] = std::max(b_max[j], std::fabs(b.get(j * K + kk)));
    double worst = 0, worst_ratio = 0;
    std::int64_t bad = 0, first_bad = -1;
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j) {
        const double x = got.get(i * N + j), y = want.get(i * N + j);
        const double abs_sum = std::min(a_max[i] * b_sum[j], a_sum[i] * b_max[j]);
        const double tol = std::ldexp(std::fabs(x) + std::fabs(y), -8) + 4 * std::sqrt(static_cast<double>(K)) * std::ldexp(abs_sum, -24);
        const double d = std::fabs(x - y);
        worst = std::max(worst, d);
        worst_ratio = std::max(worst_ratio, d / tol);
        if (!(d <= tol)) {
          if (first_bad < 0) first_bad = i * N + j;
          ++bad;
        }
      }
    const double flop = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
    std::printf("%-6lld %-15s %-12s %10.3f %10.1f %10.3f %10.1f %7.1f%% %12.4g %s\n", static_cast<long long>(n), bk.name, label.c_str(), ours,
                flop / ours / 1e9, theirs, flop / theirs / 1e9, 100.0 * theirs / ours, worst, bad == 0 ? "ok" : "MISMATCH");
    std::printf("       registers %d, spills %d B; worst error %.2f of its tolerance\n", c.registers, c.spill_bytes, worst_ratio);
    if (bad) {
      std::printf("       %lld elements out of tolerance, the first at (%lld, %lld): ours %g, cuBLAS %g\n", static_cast<long long>(bad),
                  static_cast<long long>(first_bad / N), static_cast<long long>(first_bad % N), got.get(first_bad), want.get(first_bad));
      ++failures;
    }
  }
  }
  return failures ? 1 : 0;
}
