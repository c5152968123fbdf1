// The Triton-to-OpenCL compiler through its C interface: JSON syntax trees (as the shim dumps
// Python's ast) in, OpenCL C built and run on PoCL over real host buffers, results checked.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/tcl/tcl.h"

namespace {

using json = nlohmann::json;

// ---- a tiny builder for Python ast JSON ----
int g_line = 1;
json located(json j) {
  j["lineno"] = g_line;
  return j;
}
json N(const std::string& id) {
  return located({{"_type", "Name"}, {"id", id}, {"ctx", {{"_type", "Load"}}}});
}
json Store(const std::string& id) {
  return {{"_type", "Name"}, {"id", id}, {"ctx", {{"_type", "Store"}}}};
}
json I(int64_t v) {
  return located({{"_type", "Constant"}, {"value", v}});
}
json F(double v) {
  return located({{"_type", "Constant"}, {"value", {{"$float", std::to_string(v)}}}});
}
json NoneC() {
  return located({{"_type", "Constant"}, {"value", nullptr}});
}
json At(json base, const std::string& a) {
  return located(
      {{"_type", "Attribute"}, {"value", base}, {"attr", a}, {"ctx", {{"_type", "Load"}}}});
}
json Tl(const std::string& a) {
  return At(N("tl"), a);
}
json Call(json f, std::vector<json> args, std::vector<std::pair<std::string, json>> kw = {}) {
  json k = json::array();
  for (auto& [n, v] : kw) k.push_back({{"_type", "keyword"}, {"arg", n}, {"value", v}});
  return located({{"_type", "Call"}, {"func", f}, {"args", args}, {"keywords", k}});
}
json Bin(const std::string& op, json a, json b) {
  return located({{"_type", "BinOp"}, {"left", a}, {"op", {{"_type", op}}}, {"right", b}});
}
json Cmp(const std::string& op, json a, json b) {
  return located(
      {{"_type", "Compare"}, {"left", a}, {"ops", {{{"_type", op}}}}, {"comparators", {b}}});
}
json Sub(json v, std::vector<json> idx) {
  json slice = {{"_type", "Tuple"}, {"elts", idx}, {"ctx", {{"_type", "Load"}}}};
  return located(
      {{"_type", "Subscript"}, {"value", v}, {"slice", slice}, {"ctx", {{"_type", "Load"}}}});
}
json Colon() {
  return {{"_type", "Slice"}, {"lower", nullptr}, {"upper", nullptr}, {"step", nullptr}};
}
json Assign(const std::string& name, json v) {
  return located({{"_type", "Assign"}, {"targets", {Store(name)}}, {"value", v}});
}
json AugAdd(const std::string& name, json v) {
  return located(
      {{"_type", "AugAssign"}, {"target", Store(name)}, {"op", {{"_type", "Add"}}}, {"value", v}});
}
json Expr(json v) {
  return located({{"_type", "Expr"}, {"value", v}});
}
json For(const std::string& var, json iter, std::vector<json> body) {
  return located({{"_type", "For"},
                  {"target", Store(var)},
                  {"iter", iter},
                  {"body", body},
                  {"orelse", json::array()}});
}
json Fn(const std::string& name, std::vector<std::string> args, std::vector<json> body) {
  json a = json::array();
  for (auto& n : args) a.push_back({{"_type", "arg"}, {"arg", n}, {"annotation", nullptr}});
  return {{"_type", "FunctionDef"},
          {"name", name},
          {"lineno", 1},
          {"args", {{"_type", "arguments"}, {"args", a}, {"defaults", json::array()}}},
          {"body", body}};
}
json Spec(const std::string& kernel, json fn, json args) {
  return {{"kernel", kernel},
          {"functions", {{kernel, fn}}},
          {"globals", {{"tl", {{"module", "triton.language"}}}}},
          {"args", args}};
}

struct Kernel {
  TclKernel* k = nullptr;
  std::string error;
  explicit Kernel(const json& spec) {
    char err[4096] = {0};
    k = tcl_compile(spec.dump().c_str(), err, sizeof err);
    error = err;
  }
  ~Kernel() { tcl_free(k); }
  void launch(std::vector<TclArg> args, uint64_t g0, uint64_t g1 = 1) {
    uint64_t grid[3] = {g0, g1, 1};
    char err[4096] = {0};
    ASSERT_EQ(tcl_launch(k, grid, args.data(), args.size(), err, sizeof err), 0) << err;
  }
};

template <class T>
TclArg Ptr(std::vector<T>& v) {
  TclArg a{};
  a.kind = TCL_ARG_PTR;
  a.base = reinterpret_cast<uint64_t>(v.data());
  a.nbytes = v.size() * sizeof(T);
  return a;
}
TclArg I32(int64_t v) {
  TclArg a{};
  a.kind = TCL_ARG_I32;
  a.i = v;
  return a;
}

json vectorAddBody(const char* op = "Add") {
  g_line = 2;
  std::vector<json> b;
  b.push_back(Assign("pid", Call(Tl("program_id"), {}, {{"axis", I(0)}})));
  g_line = 3;
  b.push_back(Assign("offs", Bin("Add", Bin("Mult", N("pid"), N("BLOCK")),
                                 Call(Tl("arange"), {I(0), N("BLOCK")}))));
  g_line = 4;
  b.push_back(Assign("mask", Cmp("Lt", N("offs"), N("n"))));
  g_line = 5;
  b.push_back(
      Assign("a", Call(Tl("load"), {Bin("Add", N("a_ptr"), N("offs"))}, {{"mask", N("mask")}})));
  b.push_back(Assign("b", Call(Tl("load"), {Bin("Add", N("b_ptr"), N("offs"))},
                               {{"mask", N("mask")}, {"other", F(0)}})));
  g_line = 6;
  b.push_back(Expr(Call(Tl("store"), {Bin("Add", N("o_ptr"), N("offs")), Bin(op, N("a"), N("b"))},
                        {{"mask", N("mask")}})));
  return Fn("add", {"a_ptr", "b_ptr", "o_ptr", "n", "BLOCK"}, b);
}

json addArgs(const std::string& dtype, int block) {
  return json::array({{{"kind", "ptr"}, {"dtype", dtype}},
                      {{"kind", "ptr"}, {"dtype", dtype}},
                      {{"kind", "ptr"}, {"dtype", dtype}},
                      {{"kind", "i32"}},
                      {{"kind", "constexpr"}, {"value", block}}});
}

TEST(TclCompiler, VectorAddFp32MaskedNonPowerOfTwo) {
  Kernel k(Spec("add", vectorAddBody(), addArgs("fp32", 128)));
  ASSERT_TRUE(k.k) << k.error;
  EXPECT_NE(std::string(tcl_kernel_source(k.k)).find("__kernel void tcl_add"), std::string::npos);
  const int n = 1000;
  std::vector<float> a(n), b(n), o(n + 24, -7.f);  // tail past n must stay untouched
  for (int i = 0; i < n; ++i) a[i] = i * 0.5f, b[i] = 1.f - i;
  k.launch({Ptr(a), Ptr(b), Ptr(o), I32(n)}, (n + 127) / 128);
  for (int i = 0; i < n; ++i) ASSERT_EQ(o[i], a[i] + b[i]) << i;
  for (int i = n; i < n + 24; ++i) ASSERT_EQ(o[i], -7.f);
}

TEST(TclCompiler, IntegerDivisionAndModuloTruncateLikeC) {
  Kernel div(Spec("add", vectorAddBody("FloorDiv"), addArgs("i32", 16)));
  Kernel mod(Spec("add", vectorAddBody("Mod"), addArgs("i32", 16)));
  ASSERT_TRUE(div.k && mod.k) << div.error << mod.error;
  std::vector<int32_t> a = {7, -7, 7, -7, 5, 0, -2147483647 - 1, 9},
                       b = {2, 2, -2, -2, 0, 3, -1, 4}, q(8), r(8);
  div.launch({Ptr(a), Ptr(b), Ptr(q), I32(8)}, 1);
  mod.launch({Ptr(a), Ptr(b), Ptr(r), I32(8)}, 1);
  std::vector<int32_t> wantQ = {3, -3, -3, 3, 0, 0, -2147483647 - 1, 2},
                       wantR = {1, -1, 1, -1, 0, 0, 0, 1};
  for (int i = 0; i < 8; ++i) {
    if (b[i] == 0) continue;  // undefined in Triton; guarded (no SIGFPE) here
    EXPECT_EQ(q[i], wantQ[i]) << i;
    EXPECT_EQ(r[i], wantR[i]) << i;
  }
}

TEST(TclCompiler, Fp16StoredAsHalfComputedInFloat) {
  Kernel k(Spec("add", vectorAddBody(), addArgs("fp16", 32)));
  ASSERT_TRUE(k.k) << k.error;
  // 1.0 + 2^-11 rounds back to 1.0 in fp16 (ties to even); 2 + 3 = 5 exactly.
  std::vector<uint16_t> a = {0x3C00, 0x4000}, b = {0x1000, 0x4200}, o(2);
  k.launch({Ptr(a), Ptr(b), Ptr(o), I32(2)}, 1);
  EXPECT_EQ(o[0], 0x3C00);
  EXPECT_EQ(o[1], 0x4500);
}

// out[i] = sum_j x[i] * w[j] + loop: acc starts at 0 and adds x over `n` runtime iterations.
TEST(TclCompiler, BroadcastReduceAndRuntimeLoop) {
  g_line = 2;
  std::vector<json> b;
  b.push_back(Assign("r", Call(Tl("arange"), {I(0), I(8)})));
  b.push_back(Assign("c", Call(Tl("arange"), {I(0), I(4)})));
  b.push_back(Assign("x", Call(Tl("load"), {Bin("Add", N("x_ptr"), N("r"))})));
  b.push_back(Assign("w", Call(Tl("load"), {Bin("Add", N("w_ptr"), N("c"))})));
  b.push_back(
      Assign("m", Bin("Mult", Sub(N("x"), {Colon(), NoneC()}), Sub(N("w"), {NoneC(), Colon()}))));
  b.push_back(Assign("s", Call(Tl("sum"), {N("m")}, {{"axis", I(1)}})));
  b.push_back(
      Assign("acc", Call(Tl("zeros"), {{{"_type", "List"}, {"elts", {I(8)}}}, Tl("float32")})));
  b.push_back(For("i", Call(N("range"), {I(0), N("n")}), {AugAdd("acc", N("x"))}));
  b.push_back(Assign("mx", Call(Tl("max"), {N("x")}, {{"axis", I(0)}})));
  b.push_back(Expr(Call(Tl("store"), {Bin("Add", N("o_ptr"), N("r")),
                                      Bin("Add", Bin("Add", N("s"), N("acc")), N("mx"))})));
  json fn = Fn("k", {"x_ptr", "w_ptr", "o_ptr", "n"}, b);
  json spec = Spec("k", fn,
                   json::array({{{"kind", "ptr"}, {"dtype", "fp32"}},
                                {{"kind", "ptr"}, {"dtype", "fp32"}},
                                {{"kind", "ptr"}, {"dtype", "fp32"}},
                                {{"kind", "i32"}}}));
  Kernel k(spec);
  ASSERT_TRUE(k.k) << k.error;
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, -8}, w = {1, 10, 100, 1000}, o(8);
  k.launch({Ptr(x), Ptr(w), Ptr(o), I32(3)}, 1);
  for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(o[i], x[i] * 1111 + 3 * x[i] + 7) << i;
}

TEST(TclCompiler, UnsupportedConstructNamesItAndItsLine) {
  g_line = 12;
  json fn = Fn("k", {"p"}, {Assign("c", Call(Tl("histogram"), {N("p"), I(4)}))});
  Kernel k(Spec("k", fn, json::array({{{"kind", "ptr"}, {"dtype", "fp32"}}})));
  EXPECT_EQ(k.k, nullptr);
  EXPECT_EQ(k.error, "line 12: tl.histogram is not supported by the opencl backend yet");
}

// c[16, 32] = a[16, 8] @ b[8, 32] + c, through `c += tl.dot(a, b)` (fused into the
// accumulator) and the register-blocked micro-kernel; sizes smaller than its 8 x 32 block
// along K exercise the edges.
TEST(TclCompiler, DotMatchesAPlainMatmul) {
  g_line = 2;
  std::vector<json> b;
  b.push_back(Assign("rm", Call(Tl("arange"), {I(0), I(16)})));
  b.push_back(Assign("rk", Call(Tl("arange"), {I(0), I(8)})));
  b.push_back(Assign("rn", Call(Tl("arange"), {I(0), I(32)})));
  auto at = [](const char* base, const char* row, int ld, const char* col) {
    return Bin("Add", N(base),
               Bin("Add", Bin("Mult", Sub(N(row), {Colon(), NoneC()}), I(ld)),
                   Sub(N(col), {NoneC(), Colon()})));
  };
  b.push_back(Assign("x", Call(Tl("load"), {at("a_ptr", "rm", 8, "rk")})));
  b.push_back(Assign("y", Call(Tl("load"), {at("b_ptr", "rk", 32, "rn")})));
  b.push_back(Assign("acc", Call(Tl("load"), {at("c_ptr", "rm", 32, "rn")})));
  b.push_back(AugAdd("acc", Call(Tl("dot"), {N("x"), N("y")})));
  b.push_back(Expr(Call(Tl("store"), {at("c_ptr", "rm", 32, "rn"), N("acc")})));
  json fn = Fn("k", {"a_ptr", "b_ptr", "c_ptr"}, b);
  Kernel k(Spec("k", fn,
                json::array({{{"kind", "ptr"}, {"dtype", "fp32"}},
                             {{"kind", "ptr"}, {"dtype", "fp32"}},
                             {{"kind", "ptr"}, {"dtype", "fp32"}}})));
  ASSERT_TRUE(k.k) << k.error;
  EXPECT_NE(std::string(tcl_kernel_source(k.k)).find("fma("), std::string::npos);
  std::vector<float> a(16 * 8), w(8 * 32), c(16 * 32);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 5) * 0.5f;
  for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(i);
  std::vector<float> want = c;
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 32; ++n)
      for (int kk = 0; kk < 8; ++kk) want[m * 32 + n] += a[m * 8 + kk] * w[kk * 32 + n];
  k.launch({Ptr(a), Ptr(w), Ptr(c)}, 1);
  for (size_t i = 0; i < c.size(); ++i) ASSERT_FLOAT_EQ(c[i], want[i]) << i;
}

// Bounds-checked mode: n beyond the buffers makes the masked loads and the store reach past
// them; those accesses are skipped and the first is reported (return code 2, JSON message).
TEST(TclCompiler, CheckedModeReportsTheFirstOutOfBoundsAccessInsteadOfTouchingIt) {
  json spec = Spec("add", vectorAddBody(), addArgs("fp32", 64));
  spec["checked"] = true;
  Kernel k(spec);
  ASSERT_TRUE(k.k) << k.error;
  EXPECT_NE(std::string(tcl_kernel_source(k.k)).find("tcl_chk("), std::string::npos);
  const int n = 100;
  std::vector<float> a(n, 1.f), b(n, 2.f), o(n + 28, -7.f);
  TclArg out = Ptr(o);
  out.nbytes = n * sizeof(float);  // the output tensor's storage ends at n; -7 beyond must stay
  std::vector<TclArg> args = {Ptr(a), Ptr(b), out, I32(n + 20)};
  uint64_t grid[3] = {2, 1, 1};
  char err[4096] = {0};
  ASSERT_EQ(tcl_launch(k.k, grid, args.data(), args.size(), err, sizeof err), 2) << err;
  json report = json::parse(err);
  EXPECT_EQ(report["line"], 5);  // the loads' line
  EXPECT_TRUE(report["param"] == 0 || report["param"] == 1) << report;
  EXPECT_EQ(report["access"], "load");
  EXPECT_GE(report["byte_offset"].get<int64_t>(), n * 4);
  for (int i = 0; i < n; ++i) ASSERT_EQ(o[i], 3.f) << i;
  for (int i = n; i < n + 28; ++i) ASSERT_EQ(o[i], -7.f) << i;
  // in bounds: a plain success
  args[3] = I32(n);
  EXPECT_EQ(tcl_launch(k.k, grid, args.data(), args.size(), err, sizeof err), 0) << err;
}

// ---- vector code over a block's last dim (docs/TCL.md, "Vector code") ----

// `n` elements of T whose last one ends where an inaccessible page begins: reading or writing
// past them faults. The storage starts 128-byte aligned (PoCL's alignment for host pointers);
// the tensor's data sits at a byte offset into it.
template <class T>
struct Guarded {
  size_t n, page, mapped;
  char* map;
  explicit Guarded(size_t count) : n(count), page(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {
    const size_t bytes = (n * sizeof(T) + 127) / 128 * 128;
    mapped = (bytes + page - 1) / page * page + page;
    map = static_cast<char*>(
        mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    mprotect(map + mapped - page, page, PROT_NONE);
  }
  ~Guarded() { munmap(map, mapped); }
  char* storage() const { return map + mapped - page - (n * sizeof(T) + 127) / 128 * 128; }
  T* data() const { return reinterpret_cast<T*>(map + mapped - page) - n; }
  T& operator[](size_t i) { return data()[i]; }
  TclArg arg() const {
    TclArg a{};
    a.kind = TCL_ARG_PTR;
    a.base = reinterpret_cast<uint64_t>(storage());
    a.nbytes = static_cast<uint64_t>(map + mapped - page - storage());
    a.offset = static_cast<uint64_t>(reinterpret_cast<char*>(data()) - storage());
    return a;
  }
};

// The chunks of 16 lanes of a masked tail: 100 elements in blocks of 64, so the second
// program has two full chunks, one with 4 live lanes and one with none. Loads and stores of the
// lanes past n would fault; the values match the scalar semantics exactly.
TEST(TclCompiler, VectorCodeNeverTouchesMaskedLanes) {
  Kernel k(Spec("add", vectorAddBody(), addArgs("fp32", 64)));
  ASSERT_TRUE(k.k) << k.error;
  const std::string src = tcl_kernel_source(k.k);
  EXPECT_NE(src.find("vload16("), std::string::npos) << src;
  EXPECT_NE(src.find("vstore16("), std::string::npos) << src;
  const int n = 100;
  Guarded<float> a(n), b(n), o(n);
  for (int i = 0; i < n; ++i) a[i] = i * 0.25f, b[i] = 3.f - i, o[i] = -7.f;
  k.launch({a.arg(), b.arg(), o.arg(), I32(n)}, 2);
  for (int i = 0; i < n; ++i) ASSERT_EQ(o[i], a[i] + b[i]) << i;
  // A block of exactly one chunk (16) and one below the vector width (8, scalar code).
  for (int block : {16, 8}) {
    Kernel kb(Spec("add", vectorAddBody(), addArgs("fp32", block)));
    ASSERT_TRUE(kb.k) << kb.error;
    EXPECT_EQ(std::string(tcl_kernel_source(kb.k)).find("vload16(") != std::string::npos,
              block == 16);
    for (int i = 0; i < n; ++i) o[i] = -7.f;
    kb.launch({a.arg(), b.arg(), o.arg(), I32(n - 3)}, (n + block - 1) / block);
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(o[i], i < n - 3 ? a[i] + b[i] : -7.f) << block << " " << i;
  }
}

// fp16 and bf16 in full chunks: loaded as half/ushort vectors, added in float, rounded to the
// storage type after the operation and stored (round to nearest even, NaN kept quiet).
TEST(TclCompiler, VectorCodeRoundsFp16AndBf16LikeTheScalarCode) {
  for (const char* dtype : {"fp16", "bf16"}) {
    Kernel k(Spec("add", vectorAddBody(), addArgs(dtype, 32)));
    ASSERT_TRUE(k.k) << k.error;
    const bool half = std::string(dtype) == "fp16";
    EXPECT_NE(
        std::string(tcl_kernel_source(k.k)).find(half ? "vload_half16(" : "tcl_bf16_to_f32x16("),
        std::string::npos);
    // fp16: 1 + 2^-11 -> 1 (tie to even), 2 + 3 = 5. bf16: 1 + 2^-9 -> 1, 1 + 3 * 2^-8 -> 1 + 2^-6
    // (tie to even), NaN + 1 -> quiet NaN.
    const uint16_t one = half ? 0x3C00 : 0x3F80;
    const std::vector<uint16_t> av = {one, half ? uint16_t(0x4000) : one,
                                      half ? one : uint16_t(0x7FC0)};
    const std::vector<uint16_t> bv = {half ? uint16_t(0x1000) : uint16_t(0x3B00),
                                      half ? uint16_t(0x4200) : uint16_t(0x3C40), one};
    const std::vector<uint16_t> want = {one, half ? uint16_t(0x4500) : uint16_t(0x3F82),
                                        half ? uint16_t(0x4000) : uint16_t(0x7FC0)};
    for (int n : {32, 29}) {  // every lane live, and a masked tail (scalar code for that chunk)
      std::vector<uint16_t> a(32), b(32), o(32, 0xFFFF);
      for (int i = 0; i < 32; ++i) a[i] = av[i % 3], b[i] = bv[i % 3];
      k.launch({Ptr(a), Ptr(b), Ptr(o), I32(n)}, 1);
      for (int i = 0; i < 32; ++i)
        ASSERT_EQ(o[i], i < n ? want[i % 3] : 0xFFFF) << dtype << " n=" << n << " i=" << i;
    }
  }
}

// tl.max and tl.sum along a row: the vector code keeps 16 interleaved partial results and
// combines them pairwise (lanes l and l + 8, then + 4, + 2, + 1), as the scalar lanes code does,
// so the results are bit-identical to that order; max ignores NaN (fmax), as before.
TEST(TclCompiler, VectorReductionsKeepTheLaneOrderAndIgnoreNaNInMax) {
  g_line = 2;
  std::vector<json> b;
  b.push_back(Assign("row", Call(Tl("program_id"), {}, {{"axis", I(0)}})));
  b.push_back(Assign("offs", Call(Tl("arange"), {I(0), I(64)})));
  b.push_back(Assign("mask", Cmp("Lt", N("offs"), N("n"))));
  b.push_back(Assign(
      "x", Call(Tl("load"),
                {Bin("Add", N("x_ptr"), Bin("Add", Bin("Mult", N("row"), N("n")), N("offs")))},
                {{"mask", N("mask")}, {"other", F(0)}})));
  b.push_back(Expr(Call(Tl("store"), {Bin("Add", N("o_ptr"), Bin("Mult", N("row"), I(2))),
                                      Call(Tl("max"), {N("x")}, {{"axis", I(0)}})})));
  b.push_back(
      Expr(Call(Tl("store"), {Bin("Add", Bin("Add", N("o_ptr"), Bin("Mult", N("row"), I(2))), I(1)),
                              Call(Tl("sum"), {N("x")}, {{"axis", I(0)}})})));
  json fn = Fn("k", {"x_ptr", "o_ptr", "n"}, b);
  Kernel k(Spec("k", fn,
                json::array({{{"kind", "ptr"}, {"dtype", "fp32"}},
                             {{"kind", "ptr"}, {"dtype", "fp32"}},
                             {{"kind", "i32"}}})));
  ASSERT_TRUE(k.k) << k.error;
  EXPECT_NE(std::string(tcl_kernel_source(k.k)).find("float16 vacc"), std::string::npos);
  for (int n : {64, 50}) {
    const int rows = 2;
    Guarded<float> x(rows * n);
    for (int i = 0; i < rows * n; ++i)
      x[i] = std::ldexp(static_cast<float>((i * 37) % 101) - 50.f, (i % 9) - 4);
    x[5] = NAN;
    std::vector<float> o(2 * rows);
    k.launch({x.arg(), Ptr(o), I32(n)}, rows);
    for (int r = 0; r < rows; ++r) {
      float mx[16], sm[16];
      for (int l = 0; l < 16; ++l) mx[l] = -INFINITY, sm[l] = 0;
      for (int c = 0; c < 64; c += 16)
        for (int l = 0; l < 16; ++l) {
          const float v = c + l < n ? x[r * n + c + l] : 0.f;
          mx[l] = std::fmax(mx[l], v);
          sm[l] = sm[l] + v;
        }
      for (int w = 8; w >= 1; w /= 2)
        for (int l = 0; l < w; ++l) mx[l] = std::fmax(mx[l], mx[l + w]), sm[l] = sm[l] + sm[l + w];
      EXPECT_EQ(o[2 * r], mx[0]) << "n=" << n << " row " << r;
      if (r == 0)
        EXPECT_TRUE(std::isnan(o[1])) << o[1];
      else
        EXPECT_EQ(o[2 * r + 1], sm[0]) << "n=" << n << " row " << r;
    }
  }
}

// The row softmax of the benchmark (max, exp materialised once, sum, normalised store) on a
// 2-D grid of rows whose last chunk is partly masked, and a 2-D block [4, 32] whose rows and
// columns are both masked (a lane-invariant row mask and an affine column mask).
TEST(TclCompiler, VectorSoftmaxAndTwoDimensionalMasks) {
  g_line = 2;
  std::vector<json> b;
  b.push_back(Assign("row", Call(Tl("program_id"), {}, {{"axis", I(0)}})));
  b.push_back(Assign("offs", Call(Tl("arange"), {I(0), I(64)})));
  b.push_back(Assign("p", Bin("Add", Bin("Mult", N("row"), N("n")), N("offs"))));
  b.push_back(Assign("x", Call(Tl("load"), {Bin("Add", N("x_ptr"), N("p"))},
                               {{"mask", Cmp("Lt", N("offs"), N("n"))}, {"other", F(-INFINITY)}})));
  b.push_back(Assign("x", Bin("Sub", N("x"), Call(Tl("max"), {N("x")}, {{"axis", I(0)}}))));
  b.push_back(Assign("e", Call(Tl("exp"), {N("x")})));
  b.push_back(Assign("s", Call(Tl("sum"), {N("e")}, {{"axis", I(0)}})));
  b.push_back(Expr(Call(Tl("store"), {Bin("Add", N("o_ptr"), N("p")), Bin("Div", N("e"), N("s"))},
                        {{"mask", Cmp("Lt", N("offs"), N("n"))}})));
  json fn = Fn("sm", {"x_ptr", "o_ptr", "n"}, b);
  json ptrs = json::array({{{"kind", "ptr"}, {"dtype", "fp32"}},
                           {{"kind", "ptr"}, {"dtype", "fp32"}},
                           {{"kind", "i32"}}});
  Kernel k(Spec("sm", fn, ptrs));
  ASSERT_TRUE(k.k) << k.error;
  EXPECT_NE(std::string(tcl_kernel_source(k.k)).find("exp((vload16("), std::string::npos)
      << tcl_kernel_source(k.k);
  for (int n : {64, 37}) {
    const int rows = 3;
    Guarded<float> x(rows * n), o(rows * n);
    for (int i = 0; i < rows * n; ++i) x[i] = std::sin(i * 0.37f) * 4;
    k.launch({x.arg(), o.arg(), I32(n)}, rows);
    for (int r = 0; r < rows; ++r) {
      double m = -INFINITY, sum = 0;
      for (int c = 0; c < n; ++c) m = std::max(m, double(x[r * n + c]));
      for (int c = 0; c < n; ++c) sum += std::exp(x[r * n + c] - m);
      for (int c = 0; c < n; ++c)
        ASSERT_NEAR(o[r * n + c], std::exp(x[r * n + c] - m) / sum, 1e-6)
            << n << " " << r << " " << c;
    }
  }

  g_line = 2;
  std::vector<json> t;
  t.push_back(Assign("r", Call(Tl("arange"), {I(0), I(4)})));
  t.push_back(Assign("c", Call(Tl("arange"), {I(0), I(32)})));
  t.push_back(Assign("off", Bin("Add", Bin("Mult", Sub(N("r"), {Colon(), NoneC()}), N("n")),
                                Sub(N("c"), {NoneC(), Colon()}))));
  t.push_back(Assign("mask", Bin("BitAnd", Cmp("Lt", Sub(N("r"), {Colon(), NoneC()}), N("m")),
                                 Cmp("Lt", Sub(N("c"), {NoneC(), Colon()}), N("n")))));
  t.push_back(Assign("v", Call(Tl("load"), {Bin("Add", N("x_ptr"), N("off"))},
                               {{"mask", N("mask")}, {"other", F(0)}})));
  t.push_back(Expr(Call(
      Tl("store"), {Bin("Add", N("o_ptr"), N("off")), Bin("Add", Bin("Mult", N("v"), F(2)), F(1))},
      {{"mask", N("mask")}})));
  json fn2 = Fn("t", {"x_ptr", "o_ptr", "m", "n"}, t);
  json args2 = ptrs;
  args2.push_back({{"kind", "i32"}});
  Kernel k2(Spec("t", fn2, args2));
  ASSERT_TRUE(k2.k) << k2.error;
  EXPECT_NE(std::string(tcl_kernel_source(k2.k)).find("vstore16("), std::string::npos);
  for (auto [m, n] : {std::pair{4, 32}, std::pair{3, 20}}) {
    Guarded<float> x(m * n), o(m * n);
    for (int i = 0; i < m * n; ++i) x[i] = i, o[i] = -7.f;
    k2.launch({x.arg(), o.arg(), I32(m), I32(n)}, 1);
    for (int i = 0; i < m * n; ++i) ASSERT_EQ(o[i], x[i] * 2 + 1) << m << "x" << n << " " << i;
  }
}

TEST(TclCompiler, ErrorsAreMessagesNotCrashes) {
  char err[256] = {0};
  EXPECT_EQ(tcl_compile("{not json", err, sizeof err), nullptr);
  EXPECT_NE(std::string(err), "");
  g_line = 3;
  json fn = Fn("k", {"p"}, {Assign("a", Call(Tl("arange"), {I(0), I(10)}))});
  Kernel k(Spec("k", fn, json::array({{{"kind", "ptr"}, {"dtype", "fp32"}}})));
  EXPECT_EQ(k.error, "line 3: tl.arange's range must be a power of 2, got 10");
  uint64_t grid[3] = {1, 1, 1};
  EXPECT_NE(tcl_launch(nullptr, grid, nullptr, 0, err, sizeof err), 0);
}

/// The C text's lines and the line map tcl_kernel_line_map gives for them.
struct MappedSource {
  std::vector<std::string> lines;
  std::vector<int> map;
};

MappedSource mappedSource(const Kernel& k) {
  MappedSource m;
  const std::string text = tcl_kernel_source(k.k);
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    m.lines.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  m.map = json::parse(tcl_kernel_line_map(k.k)).get<std::vector<int>>();
  return m;
}

/// The Python lines of the C lines containing `needle`.
std::set<int> linesOf(const MappedSource& m, const std::string& needle) {
  std::set<int> lines;
  for (std::size_t i = 0; i < m.lines.size(); ++i)
    if (m.lines[i].find(needle) != std::string::npos) lines.insert(m.map[i]);
  return lines;
}

TEST(TclLineMap, EveryCLineNamesThePythonStatementItWasGeneratedFor) {
  Kernel k(Spec("add", vectorAddBody(), addArgs("fp32", 128)));
  ASSERT_TRUE(k.k) << k.error;
  const MappedSource m = mappedSource(k);
  ASSERT_EQ(m.map.size(), m.lines.size());
  EXPECT_EQ(m.map.front(), 0);  // the prelude comes from no Python line
  EXPECT_EQ(m.map.back(), 0);   // nor does the kernel's closing brace
  EXPECT_EQ(linesOf(m, "get_group_id(0)"), std::set<int>{2});  // pid = tl.program_id(axis=0)
  EXPECT_EQ(linesOf(m, "__kernel void"), std::set<int>{0});
  // The loads are fused into the store's loop: its lines are the store's statement.
  EXPECT_EQ(linesOf(m, "(a_o_ptr + "), std::set<int>{6});
  EXPECT_EQ(linesOf(m, "(a_a_ptr + "), std::set<int>{6});
  for (std::size_t i = 0; i < m.map.size(); ++i) {
    EXPECT_TRUE(m.map[i] == 0 || (m.map[i] >= 2 && m.map[i] <= 6)) << i << ": " << m.lines[i];
  }
}

TEST(TclLineMap, AValueEvaluatedAheadOfItsUseKeepsItsOwnLine) {
  // a = tl.load(a_ptr + offs) (line 5) is read again after the first store (line 6), so its
  // value is kept from before that store, in lines of their own, which name line 5.
  json body = vectorAddBody();
  g_line = 7;
  body["body"].push_back(
      Expr(Call(Tl("store"), {Bin("Add", N("b_ptr"), N("offs")), N("a")}, {{"mask", N("mask")}})));
  Kernel k(Spec("add", body, addArgs("fp32", 64)));
  ASSERT_TRUE(k.k) << k.error;
  const MappedSource m = mappedSource(k);
  ASSERT_EQ(m.map.size(), m.lines.size());
  // Evaluated ahead, on lines of its own (5); the first store still reads a fused (6).
  EXPECT_EQ(linesOf(m, "(a_a_ptr + "), (std::set<int>{5, 6})) << tcl_kernel_source(k.k);
  EXPECT_EQ(linesOf(m, "t1 + kv"), (std::set<int>{5, 7}));  // written at 5, stored at 7
  EXPECT_EQ(linesOf(m, "(a_o_ptr + "), std::set<int>{6});
  // b_ptr is read by the first store (fused) and written by the second.
  EXPECT_EQ(linesOf(m, "(a_b_ptr + "), (std::set<int>{6, 7}));
}

}  // namespace
