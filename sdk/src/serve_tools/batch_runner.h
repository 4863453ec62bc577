// Runs a batch manifest through the Engine: resumes by skipping items whose output is a complete
// image, writes each output atomically (a crash never leaves a half-written file that a resume
// would skip; the ".partial-*" files a killed run leaves are removed by the next), records
// per-item failures (an output that is a folder is one) without stopping, and summarises.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "serve/engine.h"
#include "serve_tools/batch_manifest.h"

namespace flashps::serve {

struct BatchProgress {
  int total = 0, done = 0, failed = 0, skipped = 0, in_flight = 0;
  double seconds = 0;
};

struct BatchRunOptions {
  bool resume = true;         // skip items whose output is a complete image (batch_outputs.h)
  size_t max_in_flight = 32;  // submitted and not yet resolved
  bool model_takes_text = false;  // the model encodes "prompt" (Stable Diffusion, Flux with text encoders)
  // Called as items resolve and every 0.1 s while an edit runs; returning false cancels what is
  // left: running edits stop at their next step boundary, finished outputs are written, and the
  // summary still covers every item (a host's Ctrl+C handler sets a flag this callback reads).
  std::function<bool(const BatchProgress&)> progress;
};

struct BatchItemOutcome {
  int line = 0;
  std::string output;
  std::string status;  // done | skipped | failed | cancelled
  std::string error;
  std::string note;  // what the written output lost (transparency in a JPEG), if anything
  bool cache_hit = false;
  double seconds = 0;  // submission to result
};

struct BatchSummary {
  int total = 0, done = 0, skipped = 0, failed = 0, cancelled = 0, cache_hits = 0;
  double seconds = 0;
  double throughput = 0;  // done items per second
  std::vector<BatchItemOutcome> items;  // in manifest order
  std::vector<std::string> notes;
};

BatchSummary run_batch(Engine& engine, const BatchManifest& manifest, const BatchRunOptions& options);

// The per-item results as JSON (`flashps batch --json`, the C API's json_report_path): done,
// skipped, failed, cancelled, cache_hits, seconds, throughput and items [line, output, status,
// error, cache_hit, seconds]. Written atomically; IoError naming the path.
void write_batch_report(const BatchSummary& summary, const std::string& path);

}  // namespace flashps::serve
