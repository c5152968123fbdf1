#include <gtest/gtest.h>

#include "core/verify/channel_auth.h"

namespace crucible {
namespace {

TEST(ChannelAuth, HmacMatchesRfc4231) {
  EXPECT_EQ(hmacSha256Hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a key longer than the block is hashed first.
  EXPECT_EQ(hmacSha256Hex(std::string(131, '\xaa'),
                          "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(ChannelAuth, OnlySignedLinesOpen) {
  const std::string key = makeChannelKey();
  EXPECT_EQ(key.size(), 64u);
  EXPECT_NE(key, makeChannelKey());
  const std::string body = R"({"type": "facts", "facts": {"x": 1}})";
  const nlohmann::json line = {{"body", body}, {"mac", hmacSha256Hex(key, body)}};
  auto opened = openChannelLine(line.dump(), key);
  ASSERT_TRUE(opened);
  EXPECT_EQ((*opened)["facts"]["x"], 1);

  EXPECT_FALSE(openChannelLine(line.dump(), makeChannelKey()));  // another key
  nlohmann::json forged = line;
  forged["body"] = R"({"type": "facts", "facts": {"x": 2}})";
  EXPECT_FALSE(openChannelLine(forged.dump(), key));
  EXPECT_FALSE(openChannelLine(body, key));  // unsigned
  EXPECT_FALSE(openChannelLine("not json", key));
}

}  // namespace
}  // namespace crucible
