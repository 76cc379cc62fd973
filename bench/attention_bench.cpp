// Attention forward, O = softmax(Q K^T / sqrt(D) + mask) V, bf16 in and out: stagecraft's
// attention_hopper beside cuDNN's fused attention (the backend graph API: cuDNN picks its own
// flash-attention engine) in the same process, on the same inputs. Sequence lengths 1k..16k
// (or those given), head dim 128, causal and not; B (batch * heads) shrinks as S grows so that
// every row holds B * S = 256k query rows (FlashAttention-3's setting: 16k tokens, 16 heads).
//
//   usage: attention_bench [--head-dims=64,128,256] [S...]   (S a multiple of 128; D 128 by default)
//          attention_bench --ops-only      (no GPU: the cuDNN graph's descriptors only)
//
// Both results are checked on sampled rows (first and last head; rows 0, 1, 127, 128, S/2,
// S - 1) against a double-precision reference, each element within
//   2^-7 (sum_j p_j |v_j| + |o|) + 2^-20
// which is twice the worst case of what both kernels round: P to bf16 before P V (2^-8
// relative on every p_j) and O to bf16 (2^-8 |o|). Then both are timed (median of batched
// launches) and the ratio printed. Ours runs up to four times: pingpong = 0, pingpong = 1 (the
// consumers' GEMMs taking turns), FA3's schedule (pingpong = 1 with overlap = 1: S of the next
// block issued with P V of this one, in FA3's 128-key blocks, 64 at D = 256 where 128 does not
// fit SMEM) and 128-key blocks without the overlap (BK = 128, pingpong = 1), each checked
// on its own output; then fp8 = 1 (BK = 128, pingpong = 1, and also with overlap = 1, BK = 64
// at D = 256: FA3's fp8 schedule) on the same values rounded to e4m3,
// V given as V^T, checked against the reference of those e4m3 values within 2^-3 instead of
// 2^-7 (P rounded to e4m3: 2^-4 relative), and timed beside the others (cuDNN stays bf16). FLOPs: 4 B S^2 D, halved with the causal
// mask (what the FlashAttention papers count).
//
// cuDNN is dlopen'ed like the driver (nothing CUDA is linked; its headers only give the types
// and checked signatures). Without a CUDA driver this prints the reason and exits 3, as
// gpu_bench does; if attention_hopper is not registered, it says so and times cuDNN alone.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <cudnn_graph.h>

#include <stagecraft/core/tool_main.hpp>
#include <stagecraft/cuda/runtime.hpp>
#include <stagecraft/nvrtc/nvrtc.hpp>
#include <stagecraft/registry.hpp>

#include "dl.hpp"

using namespace stagecraft;

namespace {

constexpr std::int64_t head_dim = 128;  // the default, and the --ops-only graphs'
constexpr std::int64_t rows_per_run = 256 * 1024;  // B * S

// ---- cuDNN, loaded at run time ------------------------------------------------------------------
// decltype of the header's declarations: a signature that does not match the header fails to
// compile here, not on a GPU machine nobody can watch.
struct cudnn_library {
  void* lib = nullptr;
  std::string path, reason;
  decltype(&cudnnGetVersion) get_version = nullptr;
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnGetLastErrorString) last_error = nullptr;
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnBackendCreateDescriptor) create_descriptor = nullptr;
  decltype(&cudnnBackendDestroyDescriptor) destroy_descriptor = nullptr;
  decltype(&cudnnBackendSetAttribute) set_attribute = nullptr;
  decltype(&cudnnBackendGetAttribute) get_attribute = nullptr;
  decltype(&cudnnBackendFinalize) finalize = nullptr;
  decltype(&cudnnBackendExecute) execute = nullptr;
};

// The configure-time library first, then $CUDA_HOME, the toolkit and the loader's path.
cudnn_library load_cudnn() {
  cudnn_library c;
  std::vector<std::string> tries;
#ifdef STAGECRAFT_CUDNN_LIBRARY
  tries.push_back(STAGECRAFT_CUDNN_LIBRARY);
#endif
  for (const char* env : {"CUDA_HOME", "CUDA_PATH", "CUDNN_PATH"})
    if (const char* d = std::getenv(env); d && *d) tries.push_back(std::string(d) + "/lib64/libcudnn.so.9");
  tries.push_back("/usr/local/cuda/lib64/libcudnn.so.9");
  tries.push_back("libcudnn.so.9");
  const auto l = bench::dl_open_first(tries, "cuDNN 9");
  c.lib = l.handle, c.path = l.path, c.reason = l.reason;
  if (!c.lib) return c;
  bench::dl_symbols get(c.lib);
  get("cudnnGetVersion", c.get_version);
  get("cudnnGetErrorString", c.error_string);
  get("cudnnGetLastErrorString", c.last_error);
  get("cudnnCreate", c.create);
  get("cudnnBackendCreateDescriptor", c.create_descriptor);
  get("cudnnBackendDestroyDescriptor", c.destroy_descriptor);
  get("cudnnBackendSetAttribute", c.set_attribute);
  get("cudnnBackendGetAttribute", c.get_attribute);
  get("cudnnBackendFinalize", c.finalize);
  get("cudnnBackendExecute", c.execute);
  if (!get.ok()) c.reason = c.path + " lacks cuDNN backend entry points the bench needs";
  return c;
}

struct cudnn_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

cudnn_library const* dnn = nullptr;  // set once in main, before any descriptor is made

void check(cudnnStatus_t s, std::string const& what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  char detail[1024] = "";
  dnn->last_error(detail, sizeof detail);
  throw cudnn_error("cuDNN " + what + ": " + dnn->error_string(s) + (detail[0] ? std::string(" (") + detail + ")" : std::string()));
}

// One backend descriptor, destroyed with its owner.
class descriptor {
 public:
  descriptor(cudnnBackendDescriptorType_t type, std::string what) : what_(std::move(what)) {
    check(dnn->create_descriptor(type, &d_), "creating " + what_);
  }
  ~descriptor() {
    if (d_) dnn->destroy_descriptor(d_);
  }
  descriptor(descriptor const&) = delete;
  descriptor& operator=(descriptor const&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }
  template <class T>
  descriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count, T const* values) {
    check(dnn->set_attribute(d_, name, type, count, values), "setting attribute " + std::to_string(name) + " of " + what_);
    return *this;
  }
  template <class T>
  descriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, T const& value) {
    return set(name, type, 1, &value);
  }
  descriptor& set(cudnnBackendAttributeName_t name, descriptor const& other) {
    const cudnnBackendDescriptor_t o = other.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &o);
  }
  descriptor& finalize() {
    check(dnn->finalize(d_), "finalizing " + what_);
    return *this;
  }
  // For the execution plan, whose finalize failing only means "not this engine".
  cudnnStatus_t try_finalize() { return dnn->finalize(d_); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
  std::string what_;
};
using owned = std::unique_ptr<descriptor>;

// The graph cudnn-frontend's SDPA node lowers to, and which cuDNN's fused flash-attention
// engines match: S = Q K^T; S *= scale; [causal: S = (row >= col) ? S : lowest]; the softmax
// as max, subtract, exp, sum, divide; O = P V. Tensors are 4-D (1, B, S, D): our (B * S, D)
// row-major arrays, with B as heads. K^T is K with the last two strides swapped (no copy).
class sdpa_graph {
 public:
  static constexpr std::int64_t uid_q = 1, uid_k = 2, uid_v = 3, uid_o = 4, uid_scale = 5, uid_lowest = 6;

  sdpa_graph(cudnnHandle_t handle, std::int64_t B, std::int64_t S, std::int64_t D, bool causal)
      : scale_(static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)))) {
    const std::vector<std::int64_t> qkvo_dims{1, B, S, D}, qkvo_strides{B * S * D, S * D, D, 1};
    const std::vector<std::int64_t> kt_dims{1, B, D, S}, kt_strides{B * S * D, S * D, 1, D};
    const std::vector<std::int64_t> s_dims{1, B, S, S}, s_strides{B * S * S, S * S, S, 1};
    const std::vector<std::int64_t> row_dims{1, B, S, 1}, row_strides{B * S, S, 1, 1};
    const std::vector<std::int64_t> one_dims{1, 1, 1, 1}, one_strides{1, 1, 1, 1};
    auto q = tensor("Q", uid_q, CUDNN_DATA_BFLOAT16, qkvo_dims, qkvo_strides);
    auto kt = tensor("K^T", uid_k, CUDNN_DATA_BFLOAT16, kt_dims, kt_strides);
    auto v = tensor("V", uid_v, CUDNN_DATA_BFLOAT16, qkvo_dims, qkvo_strides);
    auto o = tensor("O", uid_o, CUDNN_DATA_BFLOAT16, qkvo_dims, qkvo_strides);
    auto scale = tensor("scale", uid_scale, CUDNN_DATA_FLOAT, one_dims, one_strides, false, true);

    auto s = virtual_tensor("S", CUDNN_DATA_FLOAT, s_dims, s_strides);
    matmul(*q, *kt, *s);
    auto scaled = virtual_tensor("S * scale", CUDNN_DATA_FLOAT, s_dims, s_strides);
    pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, *s, scale.get(), *scaled);
    descriptor* logits = scaled.get();
    owned masked;
    if (causal) {
      auto row = virtual_tensor("row index", CUDNN_DATA_INT32, s_dims, s_strides);
      auto col = virtual_tensor("column index", CUDNN_DATA_INT32, s_dims, s_strides);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, *scaled, nullptr, *row, nullptr, 2);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, *scaled, nullptr, *col, nullptr, 3);
      auto keep = virtual_tensor("row >= column", CUDNN_DATA_BOOLEAN, s_dims, s_strides);
      pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, *row, col.get(), *keep);
      // The frontend's choice of "minus infinity": the lowest finite float, so that a fully
      // masked row (none here) gives no NaN.
      auto lowest = tensor("lowest", uid_lowest, CUDNN_DATA_FLOAT, one_dims, one_strides, false, true);
      masked = virtual_tensor("masked S", CUDNN_DATA_FLOAT, s_dims, s_strides);
      pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, *scaled, lowest.get(), *masked, keep.get());  // keep ? S : lowest
      logits = masked.get();
      keep_.push_back(std::move(row)), keep_.push_back(std::move(col)), keep_.push_back(std::move(keep)), keep_.push_back(std::move(lowest));
    }
    auto row_max = virtual_tensor("row max", CUDNN_DATA_FLOAT, row_dims, row_strides);
    reduction(CUDNN_REDUCE_TENSOR_MAX, *logits, *row_max);
    auto shifted = virtual_tensor("S - max", CUDNN_DATA_FLOAT, s_dims, s_strides);
    pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, *logits, row_max.get(), *shifted);
    auto e = virtual_tensor("exp", CUDNN_DATA_FLOAT, s_dims, s_strides);
    pointwise(CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, *shifted, nullptr, *e);
    auto row_sum = virtual_tensor("row sum", CUDNN_DATA_FLOAT, row_dims, row_strides);
    reduction(CUDNN_REDUCE_TENSOR_ADD, *e, *row_sum);
    // P in the inputs' type: cuDNN takes the second matmul's A in the I/O type (as
    // cudnn-frontend sets it), and the fused engines round P to bf16 as our kernel does.
    auto p = virtual_tensor("P", CUDNN_DATA_BFLOAT16, s_dims, s_strides);
    pointwise(CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, *e, row_sum.get(), *p);
    matmul(*p, *v, *o);
    for (auto* t : {&q, &kt, &v, &o, &scale, &s, &scaled, &masked, &row_max, &shifted, &e, &row_sum, &p})
      if (*t) keep_.push_back(std::move(*t));

    if (!handle) return;  // --ops-only: every descriptor up to the operations, no device needed
    std::vector<cudnnBackendDescriptor_t> op_handles;
    for (auto const& op : ops_) op_handles.push_back(op->get());
    graph_ = std::make_unique<descriptor>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "the operation graph");
    graph_->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<std::int64_t>(op_handles.size()), op_handles.data());
    // Deprecated in cuDNN 9.x in favour of device properties, but still what every 9.x accepts.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    graph_->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle).finalize();
    plan_ = first_plan(handle);
#pragma GCC diagnostic pop
  }

  std::size_t operations() const { return ops_.size(); }
  std::int64_t workspace_bytes() const { return workspace_; }
  std::string const& engine() const { return engine_; }

  // Binds the device buffers (and the by-value scale) once, so that timing sees only execution.
  void bind(std::uintptr_t q, std::uintptr_t k, std::uintptr_t v, std::uintptr_t o, std::uintptr_t workspace) {
    const std::int64_t uids[] = {uid_q, uid_k, uid_v, uid_o, uid_scale, uid_lowest};
    // By-value tensors are passed by host address, read when the plan executes.
    void* ptrs[] = {reinterpret_cast<void*>(q), reinterpret_cast<void*>(k), reinterpret_cast<void*>(v), reinterpret_cast<void*>(o), &scale_, &lowest_};
    const std::int64_t n = lowest_used_ ? 6 : 5;
    void* ws = reinterpret_cast<void*>(workspace);
    pack_ = std::make_unique<descriptor>(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "the variant pack");
    pack_->set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids)
        .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs)
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws)
        .finalize();
  }
  // Enqueues O = attention(Q, K, V) on the handle's stream (the default one).
  void run(cudnnHandle_t handle) { check(dnn->execute(handle, plan_->get(), pack_->get()), "executing the attention plan"); }

 private:
  owned tensor(const char* name, std::int64_t uid, cudnnDataType_t type, std::vector<std::int64_t> const& dims, std::vector<std::int64_t> const& strides,
               bool is_virtual = false, bool by_value = false) {
    auto t = std::make_unique<descriptor>(CUDNN_BACKEND_TENSOR_DESCRIPTOR, std::string("tensor ") + name);
    const std::int64_t alignment = 16;
    t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, type)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, static_cast<std::int64_t>(dims.size()), dims.data())
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, static_cast<std::int64_t>(strides.size()), strides.data())
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, alignment)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, is_virtual)
        .set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, by_value)
        .finalize();
    if (uid == uid_lowest) lowest_used_ = true;
    return t;
  }
  owned virtual_tensor(const char* name, cudnnDataType_t type, std::vector<std::int64_t> const& dims, std::vector<std::int64_t> const& strides) {
    return tensor(name, next_virtual_uid_++, type, dims, strides, true);
  }
  void matmul(descriptor const& a, descriptor const& b, descriptor const& c) {
    auto m = std::make_unique<descriptor>(CUDNN_BACKEND_MATMUL_DESCRIPTOR, "a matmul");
    m->set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT).finalize();
    auto op = std::make_unique<descriptor>(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, "a matmul operation");
    op->set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a).set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b).set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
        .set(CUDNN_ATTR_OPERATION_MATMUL_DESC, *m)
        .finalize();
    keep_.push_back(std::move(m));
    ops_.push_back(std::move(op));
  }
  // y = mode(x[, b]); BINARY_SELECT is y = t ? x : b. `axis` is GEN_INDEX's.
  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t precision, descriptor const& x, descriptor const* b, descriptor const& y,
                 descriptor const* t = nullptr, std::int64_t axis = -1) {
    auto pw = std::make_unique<descriptor>(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, "pointwise mode " + std::to_string(mode));
    pw->set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode).set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, precision);
    if (axis >= 0) pw->set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, axis);
    pw->finalize();
    auto op = std::make_unique<descriptor>(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "a pointwise operation (mode " + std::to_string(mode) + ")");
    op->set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, *pw).set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b) op->set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t) op->set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
    op->set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y).finalize();
    keep_.push_back(std::move(pw));
    ops_.push_back(std::move(op));
  }
  void reduction(cudnnReduceTensorOp_t mode, descriptor const& x, descriptor const& y) {
    auto r = std::make_unique<descriptor>(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, "a reduction");
    r->set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, mode).set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
        .finalize();
    auto op = std::make_unique<descriptor>(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, "a reduction operation");
    op->set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x).set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y).set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, *r).finalize();
    keep_.push_back(std::move(r));
    ops_.push_back(std::move(op));
  }

  // The heuristics' engine configurations, best first (mode A, then the fallback list): the
  // first whose execution plan finalizes is the one cuDNN would run.
  owned first_plan(cudnnHandle_t handle) {
    std::string tried;
    for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
      descriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "the engine heuristics");
      heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, *graph_).set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode).finalize();
      std::int64_t available = 0;
      check(dnn->get_attribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &available, nullptr), "counting engine configurations");
      std::vector<owned> cfgs;
      std::vector<cudnnBackendDescriptor_t> raw;
      for (std::int64_t i = 0; i < available; ++i) {
        cfgs.push_back(std::make_unique<descriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "an engine configuration"));
        raw.push_back(cfgs.back()->get());
      }
      std::int64_t got = 0;
      if (available > 0)
        check(dnn->get_attribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, available, &got, raw.data()), "reading engine configurations");
      for (std::int64_t i = 0; i < got; ++i) {
        auto plan = std::make_unique<descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "an execution plan");
        plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, handle).set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *cfgs[static_cast<std::size_t>(i)]);
        const cudnnStatus_t s = plan->try_finalize();
        if (s != CUDNN_STATUS_SUCCESS) {
          tried += std::string(tried.empty() ? "" : ", ") + dnn->error_string(s);
          continue;
        }
        std::int64_t count = 0;
        check(dnn->get_attribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &count, &workspace_), "reading the workspace size");
        engine_ = std::string(mode == CUDNN_HEUR_MODE_A ? "heuristic A" : "fallback") + " configuration " + std::to_string(i + 1) + " of " + std::to_string(got);
        keep_.insert(keep_.end(), std::make_move_iterator(cfgs.begin()), std::make_move_iterator(cfgs.end()));
        return plan;
      }
    }
    throw cudnn_error("no cuDNN engine runs this attention graph" + (tried.empty() ? std::string(" (the heuristics offered none)") : " (plans refused: " + tried + ")"));
  }

  float scale_;
  float lowest_ = -3.4028234663852886e38f;  // std::numeric_limits<float>::lowest()
  bool lowest_used_ = false;
  std::int64_t next_virtual_uid_ = 100, workspace_ = 0;
  std::vector<owned> keep_, ops_;
  owned graph_, plan_, pack_;
  std::string engine_;
};

// Milliseconds per run: the median over 5 trials of `batch` runs enqueued back to back and
// synchronised once, after two warm-up runs (as gemm_bench times).
template <class F>
double median_ms(F&& f, int batch) {
  f();
  f();
  cuda::synchronize(nullptr, 60000);
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

// The worst error, as a fraction of its bound, of `o` on the sampled rows (see the top comment);
// > 1 is a failure. `what` receives the first element beyond its bound.
// p_exponent: twice the relative rounding of P and O, -7 for bf16 P, -3 for e4m3 P.
double worst_on_samples(host_tensor const& q, host_tensor const& k, host_tensor const& v, host_tensor const& o, std::int64_t B, std::int64_t S,
                        bool causal, std::string& what, int p_exponent = -7) {
  const std::int64_t D = q.shape.back();
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  double worst = 0;
  std::vector<double> p(static_cast<std::size_t>(S));
  for (std::int64_t b : {std::int64_t{0}, B - 1})
    for (std::int64_t r : {std::int64_t{0}, std::int64_t{1}, std::int64_t{127}, std::int64_t{128}, S / 2, S - 1}) {
      const std::int64_t qi = b * S + r, keys = causal ? r + 1 : S;
      double mx = -INFINITY;
      for (std::int64_t j = 0; j < keys; ++j) {
        double s = 0;
        for (std::int64_t d = 0; d < D; ++d) s += q.get(qi * D + d) * k.get((b * S + j) * D + d);
        p[static_cast<std::size_t>(j)] = s * scale;
        mx = std::max(mx, s * scale);
      }
      double sum = 0;
      for (std::int64_t j = 0; j < keys; ++j) sum += p[static_cast<std::size_t>(j)] = std::exp(p[static_cast<std::size_t>(j)] - mx);
      for (std::int64_t d = 0; d < D; ++d) {
        double want = 0, weight = 0;
        for (std::int64_t j = 0; j < keys; ++j) {
          const double pj = p[static_cast<std::size_t>(j)] / sum, vj = v.get((b * S + j) * D + d);
          want += pj * vj;
          weight += pj * std::fabs(vj);
        }
        const double got = o.get(qi * D + d), bound = std::ldexp(weight + std::fabs(want), p_exponent) + std::ldexp(1.0, -20);
        const double ratio = std::fabs(got - want) / bound;
        if (!(ratio <= 1) && what.empty())
          what = "head " + std::to_string(b) + ", row " + std::to_string(r) + ", column " + std::to_string(d) + ": " + std::to_string(got) + ", reference " +
                 std::to_string(want);
        worst = std::max(worst, std::isnan(ratio) ? INFINITY : ratio);
      }
    }
  return worst;
}

}  // namespace

int STAGECRAFT_TOOL_MAIN(attention_bench)(int argc, char** argv) {
  // Without a GPU: builds and finalizes every tensor and operation descriptor of both graphs
  // (what cuDNN checks before it sees a device), so a wrong attribute type or count is caught
  // where the bench is built (ctest bench.cudnn_ops). Only the operation graph, the engine
  // and the execution need a handle.
  if (argc == 2 && std::string(argv[1]) == "--ops-only") {
    const auto lib = load_cudnn();
    if (!lib.reason.empty()) {
      std::printf("attention_bench: %s\n", lib.reason.c_str());
      return 3;
    }
    dnn = &lib;
    try {
      for (bool causal : {false, true}) {
        sdpa_graph g(nullptr, 2, 256, head_dim, causal);
        std::printf("cuDNN %zu: the %s attention graph's %zu operations finalize\n", lib.get_version(), causal ? "causal" : "non-causal", g.operations());
      }
    } catch (std::exception const& x) {
      std::printf("attention_bench: %s\n", x.what());
      return 1;
    }
    return 0;
  }
  std::vector<std::int64_t> lengths, dims;
  for (int i = 1; i < argc; ++i) {
    if (const std::string a = argv[i]; a.starts_with("--head-dims=")) {
      for (std::size_t at = a.find('=') + 1; at <= a.size();) {
        const std::size_t comma = std::min(a.find(',', at), a.size());
        const std::string d = a.substr(at, comma - at);
        if (d != "64" && d != "128" && d != "256") {
          std::fprintf(stderr, "usage: attention_bench [--head-dims=64,128,256] [S...]\nnot a head dimension: '%s' (64, 128 or 256)\n", d.c_str());
          return 64;
        }
        dims.push_back(std::stoll(d));
        at = comma + 1;
      }
      continue;
    }
    char* end = nullptr;
    const long long s = std::strtoll(argv[i], &end, 10);
    if (end == argv[i] || *end || s < 128 || s % 128 || rows_per_run % s) {
      std::fprintf(stderr, "usage: attention_bench [--head-dims=64,128,256] [S...]\nnot a sequence length: '%s' (a multiple of 128 that divides %lld)\n", argv[i],
                   static_cast<long long>(rows_per_run));
      return 64;
    }
    lengths.push_back(s);
  }
  if (lengths.empty()) lengths = {1024, 2048, 4096, 8192, 16384};
  if (dims.empty()) dims = {head_dim};
  const auto st = cuda::driver_status();
  if (!st.available) {
    std::printf("%s\n", st.reason.c_str());
    return 3;
  }
  if (st.target != ir::Target::sm_90a) {
    std::printf("attention_bench: attention_hopper is an sm_90a kernel; device 0 (%s) is not a Hopper GPU%s%s\n", st.device.c_str(),
                st.unsupported.empty() ? "" : ": ", st.unsupported.c_str());
    return 3;
  }
  const auto lib = load_cudnn();
  const bool have_cudnn = lib.reason.empty();
  if (have_cudnn) dnn = &lib;
  kernel_entry const* ours = nullptr;
  try {
    ours = &registry::global().find("attention_hopper");
  } catch (std::exception const&) {
    std::printf("attention_bench: attention_hopper is not registered in this build: cuDNN alone\n");
  }
  if (!have_cudnn) std::printf("attention_bench: %s: nothing to compare with\n", lib.reason.c_str());
  if (!have_cudnn && !ours) return 1;
  cudnnHandle_t handle = nullptr;
  std::string no_cudnn = have_cudnn ? "" : lib.reason;
  if (have_cudnn) {
    try {
      check(lib.create(&handle), "creating a handle");
    } catch (std::exception const& x) {
      no_cudnn = x.what();
      std::printf("attention_bench: %s: ours alone\n", x.what());
      if (!ours) return 1;
    }
  }
  if (handle) std::printf("%s (sm_90a), cuDNN %zu from %s\n", st.device.c_str(), lib.get_version(), lib.path.c_str());
  else std::printf("%s (sm_90a), no cuDNN: %s\n", st.device.c_str(), no_cudnn.c_str());
  int failures = 0;
  for (const std::int64_t D : dims) {
  std::printf("O = softmax(Q K^T / sqrt(D) + mask) V, bf16, D = %lld, B * S = %lld rows\n", static_cast<long long>(D), static_cast<long long>(rows_per_run));
  // ours: pingpong = 0; pp: pingpong = 1 (the consumers' GEMMs take turns); fa3: pingpong = 1 and
  // overlap = 1 (also S of block j + 1 with P V of block j, the softmax under P V) with BK = 128
  // (64 at D = 256); bk128: BK = 128 and pingpong = 1; fp8: e4m3 with BK = 128 and pingpong = 1;
  // fp8fa3: fp8 with FA3's schedule, overlap = 1 too (BK 128, 64 at D = 256, as fa3);
  // ratio: cuDNN's time over the fastest of the four bf16 variants.
  std::printf("%-6s %-6s %5s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s %8s %10s %s\n", "S", "causal", "B", "ours ms", "TFLOP/s",
              "pp ms", "TFLOP/s", "fa3 ms", "TFLOP/s", "bk128 ms", "TFLOP/s", "fp8 ms", "TFLOP/s", "fp8fa3 ms", "TFLOP/s", "cuDNN ms", "TFLOP/s", "ratio",
              "worst/tol", "check");
  for (const int causal : {0, 1})
  for (const std::int64_t S : lengths) {
    const std::int64_t B = rows_per_run / S, n = B * S * D;
    std::mt19937 rng(static_cast<std::uint32_t>(S * 2 + causal));
    // Scores of order 1 (q, k in [-2, 2)): a softmax that is neither flat nor one-hot, so a
    // wrong mask or scale moves O well beyond the bound.
    std::uniform_real_distribution<float> qk(-2, 2), vd(-1, 1);
    auto q = host_tensor::zeros(ir::DType::bf16, {B * S, D}), k = q, v = q;
    for (std::int64_t i = 0; i < n; ++i) q.set(i, qk(rng)), k.set(i, qk(rng)), v.set(i, vd(rng));
    cuda::device_memory dq(q.bytes.size()), dk(k.bytes.size()), dv(v.bytes.size()), d_ours(q.bytes.size()), d_cudnn(q.bytes.size());
    dq.upload(bytes_of(q));
    dk.upload(bytes_of(k));
    dv.upload(bytes_of(v));
    // fp8 = 1's inputs: the same values rounded to e4m3, V also as V^T (B, D, S).
    auto q8 = host_tensor::zeros(ir::DType::e4m3, {B * S, D}), k8 = q8, v8 = q8, vt8 = host_tensor::zeros(ir::DType::e4m3, {B, D, S});
    for (std::int64_t i = 0; i < n; ++i) q8.set(i, q.get(i)), k8.set(i, k.get(i)), v8.set(i, v.get(i));
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t j = 0; j < S; ++j)
        for (std::int64_t d = 0; d < D; ++d) vt8.set((b * D + d) * S + j, v8.get((b * S + j) * D + d));
    cuda::device_memory dq8(q8.bytes.size()), dk8(k8.bytes.size()), dvt8(vt8.bytes.size());
    dq8.upload(bytes_of(q8));
    dk8.upload(bytes_of(k8));
    dvt8.upload(bytes_of(vt8));
    // Their descales (q_descale, k_descale, v_descale: (B) f32 after O): 1, the values being the
    // bf16 inputs rounded, not quantized with a scale.
    auto ones = host_tensor::zeros(ir::DType::f32, {B});
    for (std::int64_t b = 0; b < B; ++b) ones.set(b, 1.0);
    cuda::device_memory d_ones(ones.bytes.size());
    d_ones.upload(bytes_of(ones));
    cuda::device_memory d_lse(static_cast<std::size_t>(B * S) * sizeof(float));  // each row's log-sum-exp (not checked here: the interpreter tests do)
    const int batch = S >= 8192 ? 5 : 20;
    const double flop = (causal ? 2.0 : 4.0) * static_cast<double>(B) * static_cast<double>(S) * static_cast<double>(S) * static_cast<double>(D);
    std::string verdict, note;
    double worst = 0;
    auto judge = [&](const char* who, cuda::device_memory const& d, bool fp8) {
      auto o = host_tensor::zeros(ir::DType::bf16, {B * S, D});
      d.download({o.bytes.data(), o.bytes.size()});
      std::string what;
      const double w = fp8 ? worst_on_samples(q8, k8, v8, o, B, S, causal != 0, what, -3) : worst_on_samples(q, k, v, o, B, S, causal != 0, what);
      worst = std::max(worst, w);
      if (!what.empty()) note += std::string(note.empty() ? "" : "; ") + who + " " + what;
    };
    struct variant {
      const char* who;
      std::int64_t pingpong, overlap, bk, fp8;
    };
    const variant variants[] = {{"ours", 0, 0, 64, 0}, {"pingpong", 1, 0, 64, 0}, {"fa3", 1, 1, D == 256 ? 64 : 128, 0},
                                {"bk128", 1, 0, 128, 0}, {"fp8", 1, 0, 128, 1},       {"fp8fa3", 1, 1, D == 256 ? 64 : 128, 1}};
    double ours_ms[6] = {NAN, NAN, NAN, NAN, NAN, NAN}, cudnn_ms = NAN;  // per variant
    for (int vi = 0; vi < 6; ++vi) {
      if (!ours) break;
      const std::string who = variants[vi].who;
      try {
        const auto kern = registry::build(*ours, registry::resolve(*ours, {{"B", B}, {"S", S}, {"D", D}, {"causal", causal}, {"pingpong", variants[vi].pingpong},
                                                                           {"overlap", variants[vi].overlap}, {"BK", variants[vi].bk},
                                                                           {"fp8", variants[vi].fp8}}));
        // Fast math mode, what users run: MUFU.EX2 and FMA (its error is far inside the 2^-7 check).
        const auto c = nvrtc::compile(kern, ir::Target::sm_90a, {.codegen = {.math = ir::math_mode::fast}});
        const bool fp8 = variants[vi].fp8 != 0;
        std::vector<std::uintptr_t> ptrs = {fp8 ? dq8.address() : dq.address(), fp8 ? dk8.address() : dk.address(), fp8 ? dvt8.address() : dv.address(),
                                            d_ours.address()};
        if (fp8) ptrs.insert(ptrs.end(), 3, d_ones.address());
        ptrs.push_back(d_lse.address());  // LSE, last
        ours_ms[vi] = median_ms([&] { cuda::launch_on_device(c, kern, ptrs); }, batch);
        judge(who.c_str(), d_ours, fp8);  // each variant's own output: the launches overwrite d_ours
        note += std::string(note.empty() ? "" : "; ") + who + ": " + std::to_string(c.registers) + " registers, " + std::to_string(c.spill_bytes) +
                " B spilled";
      } catch (usage_error const& x) {  // a configuration the kernel does not offer at this D (BK=128 at D = 256): n/a, not a failure
        note += std::string(note.empty() ? "" : "; ") + who + ": not offered: " + x.what();
      } catch (std::exception const& x) {
        note += std::string(note.empty() ? "" : "; ") + who + ": " + x.what();
        ++failures;
      }
    }
    if (handle) {
      try {
        sdpa_graph g(handle, B, S, D, causal != 0);
        cuda::device_memory ws(static_cast<std::size_t>(std::max<std::int64_t>(g.workspace_bytes(), 16)));
        g.bind(dq.address(), dk.address(), dv.address(), d_cudnn.address(), ws.address());
        cudnn_ms = median_ms([&] { g.run(handle); }, batch);
        judge("cuDNN", d_cudnn, false);
        note += std::string(note.empty() ? "" : "; ") + "cuDNN: " + g.engine() + ", workspace " + std::to_string(g.workspace_bytes()) + " B";
      } catch (std::exception const& x) {
        note += std::string(note.empty() ? "" : "; ") + "cuDNN: " + x.what();
        ++failures;
      }
    }
    const bool ok = worst <= 1;
    if (!ok) ++failures;
    // ratio: cuDNN's time over the fastest bf16 variant (fp8 is its own column)
    const double best_ms = std::fmin(std::fmin(ours_ms[0], ours_ms[1]), std::fmin(ours_ms[2], ours_ms[3]));  // (fmin skips a NaN)
    std::printf("%-6lld %-6d %5lld %10.3f %10.1f %10.3f %10.1f %10.3f %10.1f %10.3f %10.1f %10.3f %10.1f %10.3f %10.1f %10.3f %10.1f %7.1f%% %10.3f %s\n",
                static_cast<long long>(S), causal, static_cast<long long>(B), ours_ms[0], flop / ours_ms[0] / 1e9, ours_ms[1], flop / ours_ms[1] / 1e9,
                ours_ms[2], flop / ours_ms[2] / 1e9, ours_ms[3], flop / ours_ms[3] / 1e9, ours_ms[4], flop / ours_ms[4] / 1e9, ours_ms[5],
                flop / ours_ms[5] / 1e9, cudnn_ms, flop / cudnn_ms / 1e9, 100.0 * cudnn_ms / best_ms, worst, ok ? "ok" : "MISMATCH");
    std::printf("       %s\n", note.c_str());
  }
  }
  return failures ? 1 : 0;
}
