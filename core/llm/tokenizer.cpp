#include "core/llm/tokenizer.h"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/llm/byte_level.h"
#include "core/llm/model_error.h"
#include "core/llm/nfc.h"
#include "core/llm/unicode_table.h"
#include "core/llm/utf8.h"

namespace crucible::llm {
namespace {

using nlohmann::json;

std::uint64_t pairKey(int left, int right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
         static_cast<std::uint32_t>(right);
}

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw ModelError(source + ": " + what);
}

void addSplit(std::vector<PreTokenizerStep>& steps, const json& step, const std::string& source) {
  const json& pattern = step.value("pattern", json::object());
  if (!pattern.contains("Regex")) fail(source, "pre_tokenizer Split without a Regex pattern");
  const auto regex = pattern["Regex"].get<std::string>();
  const auto known = splitPatternFromRegex(regex);
  if (!known) fail(source, "unsupported pre_tokenizer split pattern: " + regex);
  if (step.value("behavior", "Isolated") != "Isolated" || step.value("invert", false))
    fail(source, "pre_tokenizer Split must be Isolated and not inverted");
  steps.push_back({PreTokenizerStep::Kind::Split, *known});
}

void parsePreTokenizer(const json& node, std::vector<PreTokenizerStep>& steps, bool& prefixSpace,
                       const std::string& source) {
  if (node.is_null()) return;
  const std::string type = node.value("type", "");
  if (type == "Sequence") {
    for (const json& step : node.at("pretokenizers"))
      parsePreTokenizer(step, steps, prefixSpace, source);
  } else if (type == "Split") {
    addSplit(steps, node, source);
  } else if (type == "ByteLevel") {
    prefixSpace = node.value("add_prefix_space", false);
    if (node.value("use_regex", true))
      steps.push_back({PreTokenizerStep::Kind::Split, SplitPattern::Gpt2});
  } else if (type == "Digits") {
    if (node.value("individual_digits", false))
      steps.push_back({PreTokenizerStep::Kind::IndividualDigits, {}});
    // Digits without individual_digits groups digit runs, which every split pattern already does.
  } else {
    fail(source, "unsupported pre_tokenizer type '" + type + "'");
  }
}

// Ids the post-processor puts before and after a single sequence (TemplateProcessing).
void parsePostProcessor(const json& node, std::vector<int>& prefix, std::vector<int>& suffix,
                        const std::string& source) {
  if (node.is_null()) return;
  const std::string type = node.value("type", "");
  if (type == "Sequence") {
    for (const json& p : node.at("processors")) parsePostProcessor(p, prefix, suffix, source);
  } else if (type == "TemplateProcessing") {
    bool seenSequence = false;
    for (const json& item : node.at("single")) {
      if (item.contains("Sequence")) {
        seenSequence = true;
        continue;
      }
      const auto name = item.at("SpecialToken").at("id").get<std::string>();
      const json& ids = node.at("special_tokens").at(name).at("ids");
      auto& target = seenSequence ? suffix : prefix;
      for (const json& id : ids) target.push_back(id.get<int>());
    }
  } else if (type != "ByteLevel") {
    fail(source, "unsupported post_processor type '" + type + "'");
  }
}

std::pair<std::string, std::string> parseMerge(const json& merge, const std::string& source) {
  if (merge.is_array() && merge.size() == 2) return {merge[0], merge[1]};
  if (merge.is_string()) {
    const auto text = merge.get<std::string>();
    const auto space = text.find(' ');
    if (space != std::string::npos && text.find(' ', space + 1) == std::string::npos)
      return {text.substr(0, space), text.substr(space + 1)};
  }
  fail(source, "malformed merge " + merge.dump());
}

bool isSpaceByte(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

}  // namespace

Tokenizer Tokenizer::fromFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw ModelError(path.string() + ": cannot open");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw ModelError(path.string() + ": not JSON: " + e.what());
  }
  return fromJson(j, path.string());
}

Tokenizer Tokenizer::fromJson(const json& j, const std::string& source) {
  Tokenizer t;
  try {
    const json& model = j.at("model");
    if (model.value("type", "BPE") != "BPE") fail(source, "model.type must be BPE");
    if (model.value("byte_fallback", false)) fail(source, "byte_fallback BPE is not supported");
    t.ignoreMerges_ = model.value("ignore_merges", false);
    const json& norm = j.value("normalizer", json());
    if (!norm.is_null() && norm.value("type", "") != "NFC")
      fail(source, "unsupported normalizer '" + norm.value("type", "") + "'");
    t.nfc_ = !norm.is_null();

    auto place = [&](int id, std::string bytes, bool special) {
      if (id < 0) fail(source, "negative token id");
      if (static_cast<std::size_t>(id) >= t.idToBytes_.size()) {
        t.idToBytes_.resize(id + 1);
        t.special_.resize(id + 1, false);
      }
      t.bytesToId_.emplace(bytes, id);
      t.idToBytes_[id] = std::move(bytes);
      t.special_[id] = t.special_[id] || special;
    };
    for (const auto& [token, id] : model.at("vocab").items()) {
      auto bytes = byteLevelToBytes(token);
      if (!bytes) fail(source, "vocabulary entry '" + token + "' is not byte-level");
      place(id.get<int>(), std::move(*bytes), false);
    }
    int rank = 0;
    for (const json& merge : model.at("merges")) {
      const auto [left, right] = parseMerge(merge, source);
      const auto l = byteLevelToBytes(left), r = byteLevelToBytes(right);
      if (!l || !r) fail(source, "merge " + merge.dump() + " is not byte-level");
      const auto li = t.bytesToId_.find(*l), ri = t.bytesToId_.find(*r),
                 mi = t.bytesToId_.find(*l + *r);
      if (li == t.bytesToId_.end() || ri == t.bytesToId_.end() || mi == t.bytesToId_.end())
        fail(source, "merge " + merge.dump() + " uses a token outside the vocabulary");
      t.merges_.emplace(pairKey(li->second, ri->second), std::make_pair(rank++, mi->second));
    }
    for (const json& a : j.value("added_tokens", json::array())) {
      AddedToken tok{a.at("id").get<int>(), a.at("content").get<std::string>(),
                     a.value("special", false), a.value("lstrip", false), a.value("rstrip", false)};
      // An added token is its text, not byte-level: it decodes to its content as written.
      if (static_cast<std::size_t>(tok.id) >= t.idToBytes_.size() || t.idToBytes_[tok.id].empty() ||
          t.idToBytes_[tok.id] != tok.content)
        place(tok.id, tok.content, tok.special);
      else
        t.special_[tok.id] = tok.special;
      t.added_.push_back(std::move(tok));
    }
    parsePreTokenizer(j.value("pre_tokenizer", json()), t.steps_, t.addPrefixSpace_, source);
    parsePostProcessor(j.value("post_processor", json()), t.prefix_, t.suffix_, source);
  } catch (const json::exception& e) {
    fail(source, std::string("unexpected structure: ") + e.what());
  }
  // Byte-level vocabularies hold the bytes as tokens, but not necessarily all 256 (SmolLM2 lacks
  // control bytes such as 0x04); printable ASCII is always there.
  for (int b = '!'; b <= '~'; ++b)
    if (!t.bytesToId_.count(std::string(1, static_cast<char>(b))))
      fail(source, "vocabulary lacks the byte " + std::to_string(b) + " (not byte-level BPE)");
  return t;
}

std::optional<int> Tokenizer::tokenId(std::string_view content) const {
  for (const AddedToken& a : added_)
    if (a.content == content) return a.id;
  const auto it = bytesToId_.find(std::string(content));
  if (it == bytesToId_.end()) return std::nullopt;
  return it->second;
}

bool Tokenizer::isSpecial(int id) const {
  return id >= 0 && static_cast<std::size_t>(id) < special_.size() && special_[id];
}

std::string Tokenizer::tokenBytes(int id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= idToBytes_.size()) return {};
  return idToBytes_[id];
}

std::string Tokenizer::decode(const std::vector<int>& ids, bool skipSpecialTokens) const {
  std::string out;
  for (int id : ids)
    if (!(skipSpecialTokens && isSpecial(id))) out += tokenBytes(id);
  return out;
}

std::vector<int> Tokenizer::encode(std::string_view text, bool addSpecialTokens) const {
  std::vector<int> out;
  if (addSpecialTokens) out = prefix_;
  // Added tokens are split out first: leftmost match, longest among those starting there.
  std::size_t start = 0, pos = 0;
  while (pos < text.size()) {
    const AddedToken* best = nullptr;
    for (const AddedToken& a : added_)
      if (!a.content.empty() && text.compare(pos, a.content.size(), a.content) == 0 &&
          (!best || a.content.size() > best->content.size()))
        best = &a;
    if (!best) {
      ++pos;
      continue;
    }
    std::size_t before = pos, after = pos + best->content.size();
    if (best->lstrip)
      while (before > start && isSpaceByte(text[before - 1])) --before;
    if (best->rstrip)
      while (after < text.size() && isSpaceByte(text[after])) ++after;
    encodeOrdinary(text.substr(start, before - start), out);
    out.push_back(best->id);
    start = pos = after;
  }
  encodeOrdinary(text.substr(start), out);
  if (addSpecialTokens) out.insert(out.end(), suffix_.begin(), suffix_.end());
  return out;
}

void Tokenizer::encodeOrdinary(std::string_view text, std::vector<int>& out) const {
  if (text.empty()) return;
  std::string normalized;
  if (nfc_) {
    normalized = toNfc(text);
    text = normalized;
  }
  std::string prefixed;
  if (addPrefixSpace_ && text.front() != ' ') {
    prefixed = " " + std::string(text);
    text = prefixed;
  }
  std::vector<std::string_view> pieces{text};
  for (const PreTokenizerStep& step : steps_) {
    std::vector<std::string_view> next;
    for (std::string_view piece : pieces) {
      if (step.kind == PreTokenizerStep::Kind::Split) {
        for (std::string_view p : preTokenize(piece, step.pattern)) next.push_back(p);
        continue;
      }
      // Individual digits: every decimal digit (\p{Nd}-like: Unicode numbers) is its own piece.
      std::size_t from = 0;
      for (const DecodedCodePoint& d : decodeUtf8(piece)) {
        if (!isNumber(d.cp)) continue;
        if (d.offset > from) next.push_back(piece.substr(from, d.offset - from));
        next.push_back(piece.substr(d.offset, d.length));
        from = d.offset + d.length;
      }
      if (from < piece.size()) next.push_back(piece.substr(from));
    }
    pieces = std::move(next);
  }
  for (std::string_view piece : pieces) bpe(piece, out);
}

void Tokenizer::bpe(std::string_view piece, std::vector<int>& out) const {
  if (ignoreMerges_) {
    const auto whole = bytesToId_.find(std::string(piece));
    if (whole != bytesToId_.end()) {
      out.push_back(whole->second);
      return;
    }
  }
  std::vector<int> symbols;
  symbols.reserve(piece.size());
  for (char c : piece) {
    // A byte without a token is dropped, as `tokenizers` does for a BPE without an unk token.
    const auto byte = bytesToId_.find(std::string(1, c));
    if (byte != bytesToId_.end()) symbols.push_back(byte->second);
  }
  // Merge the lowest-ranked adjacent pair (leftmost on ties) until no pair has a merge.
  while (symbols.size() > 1) {
    int bestRank = std::numeric_limits<int>::max(), bestId = -1;
    std::size_t bestAt = 0;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      const auto it = merges_.find(pairKey(symbols[i], symbols[i + 1]));
      if (it != merges_.end() && it->second.first < bestRank) {
        bestRank = it->second.first;
        bestId = it->second.second;
        bestAt = i;
      }
    }
    if (bestId < 0) break;
    symbols[bestAt] = bestId;
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(bestAt) + 1);
  }
  out.insert(out.end(), symbols.begin(), symbols.end());
}

}  // namespace crucible::llm
