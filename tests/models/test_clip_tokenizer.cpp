// CLIP BPE tokenizer against OpenAI's clip/simple_tokenizer.py (../shared/fixtures/clip_tokenizer).
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "core/diagnostics/error.h"
#include "dev/fixture_set.h"
#include "models/clip/clip_tokenizer.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

using namespace flashps;

namespace {

std::vector<int64_t> as_ids(const at::Tensor& tensor) {
  at::Tensor ids = tensor.to(at::kLong).reshape({-1}).contiguous();
  return std::vector<int64_t>(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
}

}  // namespace

TEST_CASE("CLIP tokenizer matches OpenAI's on every golden prompt, ftfy cases included", "[models][clip][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "clip_tokenizer");
  const ClipTokenizer tokenizer = ClipTokenizer::load(dir.string());
  CHECK(tokenizer.vocab_size() == 49408);
  CHECK(tokenizer.bos_token_id() == 49406);
  CHECK(tokenizer.eos_token_id() == 49407);
  CHECK(tokenizer.pad_token_id() == 49407);  // SD1.x tokenizer_config
  const dev::FixtureSet fixtures = dev::load_fixture_set(dir.string());
  REQUIRE_FALSE(fixtures.cases.empty());
  int truncated = 0, expected_truncated = 0;
  for (const dev::FixtureCase& fixture : fixtures.cases) {
    const std::string text = fixture.inputs.at("text").get<std::string>();
    const int max_length = fixture.inputs.value("max_length", 77);
    INFO(fixture.name << ": " << text);
    const TokenizedPrompt sd1 = tokenizer.tokenize(text, max_length);
    CHECK(sd1.ids == as_ids(fixtures.tensor(fixture.outputs.at("ids"))));
    CHECK(sd1.input_ids == as_ids(fixtures.tensor(fixture.outputs.at("input_ids_pad_eos"))));
    const TokenizedPrompt sd2 = tokenizer.tokenize(text, max_length, /*pad_token_id=*/0);
    CHECK(sd2.input_ids == as_ids(fixtures.tensor(fixture.outputs.at("input_ids_pad_zero"))));
    truncated += sd1.truncated;
    // Truncated where the text's ids and the two end tokens do not fit.
    expected_truncated += fixtures.tensor(fixture.outputs.at("ids")).numel() + 2 > max_length;
  }
  CHECK(truncated == expected_truncated);
}

TEST_CASE("CLIP tokenizer folders with missing or malformed files are named in errors", "[models][clip]") {
  test::TempDir dir;
  CHECK_THROWS_WITH(ClipTokenizer::load(dir.path()), Catch::Contains("no vocab.json"));
  {
    std::ofstream vocab(dir.file("vocab.json"));
    vocab << R"({"a</w>": 0, "<|startoftext|>": 1, "<|endoftext|>": 2})";
  }
  CHECK_THROWS_WITH(ClipTokenizer::load(dir.path()), Catch::Contains("no merges.txt"));
  {
    std::ofstream merges(dir.file("merges.txt"));
    merges << "#version: 0.2\na b c\n";
  }
  CHECK_THROWS_WITH(ClipTokenizer::load(dir.path()), Catch::Contains("merges.txt:2"));
  {
    std::ofstream merges(dir.file("merges.txt"));
    merges << "#version: 0.2\n";
  }
  const ClipTokenizer tokenizer = ClipTokenizer::load(dir.path());
  CHECK(tokenizer.encode("a") == std::vector<int64_t>{0});
  CHECK_THROWS_WITH(tokenizer.encode("b"), Catch::Contains("not in the vocabulary"));
}
