#include "core/util/sha256.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/util/sha256_detail.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRUCIBLE_SHA256_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace crucible::util {

namespace {

constexpr std::array<std::uint32_t, 64> kRound = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

constexpr std::array<std::uint32_t, 8> kInitial = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr std::uint32_t rotr(std::uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

// Compresses `count` consecutive 64-byte blocks into `state`.
using BlockFunction = void (*)(std::uint32_t* state, const std::uint8_t* blocks, std::size_t count);

void portableBlocks(std::uint32_t* state, const std::uint8_t* blocks, std::size_t count) {
  for (; count > 0; --count, blocks += 64) {
    std::array<std::uint32_t, 64> w{};
    for (std::size_t i = 0; i < 16; ++i) {
      w[i] = (std::uint32_t{blocks[4 * i]} << 24) | (std::uint32_t{blocks[4 * i + 1]} << 16) |
             (std::uint32_t{blocks[4 * i + 2]} << 8) | std::uint32_t{blocks[4 * i + 3]};
    }
    for (int i = 16; i < 64; ++i) {
      std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; ++i) {
      std::uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      std::uint32_t ch = (e & f) ^ (~e & g);
      std::uint32_t t1 = h + s1 + ch + kRound[i] + w[i];
      std::uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
      std::uint32_t t2 = s0 + maj;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#ifdef CRUCIBLE_SHA256_X86
// The SHA extensions keep the state as two vectors, ABEF and CDGH (lanes listed high to low).
// sha256rnds2 does two rounds with the W+K words in the low two lanes of its third operand;
// sha256msg1/msg2 extend the message schedule four words at a time. The target attribute lets
// only this function use them, so the file needs no special flags and runs on any x86-64.
__attribute__((target("sha,sse4.1,ssse3"))) void shaBlocks(std::uint32_t* state,
                                                           const std::uint8_t* blocks,
                                                           std::size_t count) {
  const auto load = [](const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); };
  const __m128i bigEndian = _mm_set_epi64x(0x0c0d0e0f08090a0b, 0x0405060700010203);
  const __m128i cdab = _mm_shuffle_epi32(load(state), 0xB1);      // C D A B
  const __m128i efgh = _mm_shuffle_epi32(load(state + 4), 0x1B);  // E F G H
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; count > 0; --count, blocks += 64) {
    const __m128i abefBefore = abef;
    const __m128i cdghBefore = cdgh;
    __m128i w[4];  // W[4i..4i+3] in w[i % 4]: the last 16 schedule words
#pragma GCC unroll 16
    for (std::size_t i = 0; i < 16; ++i) {
      __m128i& words = w[i % 4];
      if (i < 4) {
        words = _mm_shuffle_epi8(load(blocks + 16 * i), bigEndian);
      } else {
        // W[t] = W[t-16] + s0(W[t-15]) + W[t-7] + s1(W[t-2]); msg2 adds the s1 terms.
        const __m128i& prev = w[(i + 3) % 4];
        words = _mm_add_epi32(_mm_sha256msg1_epu32(words, w[(i + 1) % 4]),
                              _mm_alignr_epi8(prev, w[(i + 2) % 4], 4));
        words = _mm_sha256msg2_epu32(words, prev);
      }
      const __m128i wk = _mm_add_epi32(words, load(kRound.data() + 4 * i));
      // Each call returns the new ABEF; the old ABEF becomes the new CDGH.
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
    }
    abef = _mm_add_epi32(abef, abefBefore);
    cdgh = _mm_add_epi32(cdgh, cdghBefore);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);  // F E B A
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);  // D C H G
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(dchg, feba, 8));
}
#endif

bool hasShaExtensions() {
#ifdef CRUCIBLE_SHA256_X86
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) {
    return false;
  }
  const bool sse = (ecx & bit_SSSE3) != 0 && (ecx & bit_SSE4_1) != 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) {
    return false;
  }
  return sse && (ebx & bit_SHA) != 0;
#else
  return false;
#endif
}

std::atomic<bool> forcePortable{false};

BlockFunction blockFunction() {
#ifdef CRUCIBLE_SHA256_X86
  static const BlockFunction fastest = hasShaExtensions() ? shaBlocks : portableBlocks;
#else
  static const BlockFunction fastest = portableBlocks;
#endif
  return forcePortable.load(std::memory_order_relaxed) ? portableBlocks : fastest;
}

}  // namespace

namespace detail {

bool sha256HasShaExtensions() {
  return hasShaExtensions();
}

void sha256ForcePortable(bool portable) {
  forcePortable.store(portable, std::memory_order_relaxed);
}

}  // namespace detail

Sha256::Sha256() {
  reset();
}

void Sha256::reset() {
  state_ = kInitial;
  buffered_ = 0;
  length_ = 0;
}

void Sha256::update(std::string_view bytes) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  std::size_t size = bytes.size();
  length_ += size;
  if (buffered_ > 0) {
    std::size_t take = std::min(size, buffer_.size() - buffered_);
    std::memcpy(buffer_.data() + buffered_, data, take);
    buffered_ += take;
    data += take;
    size -= take;
    if (buffered_ < buffer_.size()) return;
    blockFunction()(state_.data(), buffer_.data(), 1);
    buffered_ = 0;
  }
  // Whole blocks straight from the input, as one run, so the fast path is not called per block.
  if (const std::size_t blocks = size / 64; blocks > 0) {
    blockFunction()(state_.data(), data, blocks);
    data += blocks * 64;
    size -= blocks * 64;
  }
  if (size > 0) {
    std::memcpy(buffer_.data(), data, size);
    buffered_ = size;
  }
}

Sha256::Digest Sha256::finish() {
  const std::uint64_t bits = length_ * 8;
  // 0x80, zeros up to 56 mod 64, then the bit length big-endian.
  static constexpr std::uint8_t kPad[64] = {0x80};
  std::size_t padLength = buffered_ < 56 ? 56 - buffered_ : 120 - buffered_;
  update(std::string_view(reinterpret_cast<const char*>(kPad), padLength));
  std::array<char, 8> lengthBytes{};
  for (int i = 0; i < 8; ++i) lengthBytes[i] = static_cast<char>(bits >> (56 - 8 * i));
  update(std::string_view(lengthBytes.data(), lengthBytes.size()));

  Digest digest{};
  for (std::size_t i = 0; i < 8; ++i) {
    digest[4 * i] = static_cast<std::uint8_t>(state_[i] >> 24);
    digest[4 * i + 1] = static_cast<std::uint8_t>(state_[i] >> 16);
    digest[4 * i + 2] = static_cast<std::uint8_t>(state_[i] >> 8);
    digest[4 * i + 3] = static_cast<std::uint8_t>(state_[i]);
  }
  reset();
  return digest;
}

std::string Sha256::hex(const Digest& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(digest.size() * 2);
  for (std::uint8_t byte : digest) {
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 0x0f]);
  }
  return out;
}

std::string sha256Hex(std::string_view bytes) {
  Sha256 hasher;
  hasher.update(bytes);
  return Sha256::hex(hasher.finish());
}

}  // namespace crucible::util
