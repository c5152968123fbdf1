#include "core/kernel_synth/conv_spec.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/kernel_synth/lowering_support.h"

namespace crucible::kernel_synth {

using nlohmann::json;

int ConvSpec::windowSize() const {
  int n = 1;
  for (int w : window) n *= w;
  return n;
}

std::string ConvSpec::outputCoordinates(const std::string& index) const {
  std::string s = std::string(kBody) + "rem = " + index + "\n";
  for (int i = spatial - 1; i >= 0; --i) {
    s += std::string(kBody) + "o" + axis(i) + " = rem % O" + axis(i) + "\n";
    s += std::string(kBody) + "rem = rem // O" + axis(i) + "\n";
  }
  return s;
}

bool ConvSpec::channelsLastApplies() const {
  if (!gemmApplies()) return false;
  if (kind == Kind::Conv || flippedForward()) return true;
  for (int d : dil) {
    if (d != 1) return false;
  }
  return true;
}

bool ConvSpec::flippedForward() const {
  return kind == Kind::Transposed &&
         std::all_of(stride.begin(), stride.end(), [](int v) { return v == 1; });
}

ConvSpec ConvSpec::asFlippedForward() const {
  ConvSpec f = *this;
  f.kind = Kind::Conv;
  for (int i = 0; i < spatial; ++i) f.pad[i] = (window[i] - 1) * dil[i] - pad[i];
  return f;
}

std::vector<std::string> ConvSpec::constantNames() const {
  std::vector<std::string> names;
  for (int i = 0; i < spatial; ++i) {
    for (const char* p : {"K", "S", "P", "D"}) names.push_back(p + axis(i));
  }
  return names;
}

std::string ConvSpec::launchConstants() const {
  std::vector<std::string> values;
  for (int i = 0; i < spatial; ++i) {
    for (int v : {window[i], stride[i], pad[i], dil[i]}) values.push_back(std::to_string(v));
  }
  const auto names = constantNames();
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i] + "=" + values[i];
  return s;
}

namespace {

ConvSpec::Kind kindOf(const std::string& op) {
  if (op.rfind("conv_transpose", 0) == 0) return ConvSpec::Kind::Transposed;
  if (op.rfind("max_pool", 0) == 0) return ConvSpec::Kind::MaxPool;
  if (op.rfind("adaptive_avg_pool", 0) == 0) return ConvSpec::Kind::AdaptiveAvgPool;
  if (op.rfind("adaptive_max_pool", 0) == 0) return ConvSpec::Kind::AdaptiveMaxPool;
  if (op.rfind("avg_pool", 0) == 0) return ConvSpec::Kind::AvgPool;
  return ConvSpec::Kind::Conv;
}

/// The largest adaptive window over `out` outputs from `in` inputs: output o reads
/// [floor(o * in / out), ceil((o + 1) * in / out)).
int largestAdaptiveWindow(std::int64_t in, std::int64_t out) {
  std::int64_t most = 0;
  for (std::int64_t o = 0; o < out; ++o) {
    most = std::max(most, ((o + 1) * in + out - 1) / out - (o * in) / out);
  }
  return static_cast<int>(most);
}

}  // namespace

std::optional<ConvSpec> convSpec(const OpGraph& g, const OpNode& cv, std::string& why) {
  ConvSpec s;
  s.kind = kindOf(cv.op);
  const char last = cv.op.size() > 2 ? cv.op[cv.op.size() - 2] : '2';
  s.spatial = last == '1' ? 1 : last == '3' ? 3 : 2;
  const int sd = s.spatial, rank = sd + 2;
  if (cv.inputs.empty() || !cv.inputs[0].isRef() ||
      (!s.pool() && (cv.inputs.size() < 2 || !cv.inputs[1].isRef()))) {
    why = cv.op + " without an input or a weight";
    return std::nullopt;
  }
  s.input = cv.inputs[0].ref;
  const Shape in = shapeOfValue(g, s.input);
  if (static_cast<int>(cv.shape.size()) != rank || static_cast<int>(in.size()) != rank) {
    why = cv.op + " of an unbatched input";
    return std::nullopt;
  }
  if (cv.attrs.value("padding", json(0)).is_string()) {
    why = cv.op + " with padding=" + cv.attrs["padding"].dump();
    return std::nullopt;
  }
  if (cv.attrs.value("return_indices", json(false)) == json(true)) {
    why = cv.op + " with return_indices";
    return std::nullopt;
  }
  if (cv.attrs.value("ceil_mode", json(false)) == json(true)) {
    why = cv.op + " with ceil_mode";
    return std::nullopt;
  }
  if (s.kind == ConvSpec::Kind::AvgPool &&
      (cv.attrs.value("count_include_pad", json(true)) != json(true) ||
       !cv.attrs.value("divisor_override", json()).is_null())) {
    why = cv.op + " with count_include_pad=False or a divisor_override";
    return std::nullopt;
  }
  if (s.adaptive()) {
    for (int i = 0; i < sd; ++i) {
      if (cv.shape[2 + i] <= 0) {
        why = cv.op + " to an empty output";
        return std::nullopt;
      }
      s.window.push_back(largestAdaptiveWindow(in[2 + i], cv.shape[2 + i]));
    }
    s.stride.assign(sd, 1);
    s.pad.assign(sd, 0);
    s.dil.assign(sd, 1);
  } else if (s.pool()) {
    s.window = intList(cv.attrs.value("kernel_size", json(1)), sd, 1);
    const json st = cv.attrs.value("stride", json());
    s.stride = st.is_null() || (st.is_array() && st.empty()) ? s.window : intList(st, sd, 1);
    s.pad = intList(cv.attrs.value("padding", json(0)), sd, 0);
    s.dil = intList(cv.attrs.value("dilation", json(1)), sd, 1);
  } else {
    s.weight = cv.inputs[1].ref;
    s.stride = intList(cv.attrs.value("stride", json(1)), sd, 1);
    s.pad = intList(cv.attrs.value("padding", json(0)), sd, 0);
    s.dil = intList(cv.attrs.value("dilation", json(1)), sd, 1);
    const Shape ws = shapeOfValue(g, s.weight);
    if (static_cast<int>(ws.size()) != rank) {
      why = cv.op + " with a weight of rank " + std::to_string(ws.size());
      return std::nullopt;
    }
    for (int i = 0; i < sd; ++i) s.window.push_back(static_cast<int>(ws[2 + i]));
    const json groups = cv.attrs.value("groups", json(1));
    s.groups = groups.is_number_integer() ? groups.get<int>() : 1;
    if (cv.inputs.size() > 2 && cv.inputs[2].isRef()) s.bias = cv.inputs[2].ref;
  }
  return s;
}

}  // namespace crucible::kernel_synth
