#include "bench/store_benchmark.h"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <sstream>

#include "cache/activation_store.h"
#include "cache/host_tier.h"
#include "core/diagnostics/error.h"
#include "workload/random_masks.h"

namespace flashps::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Flushes a file and drops it from the page cache, so the next read comes from the disk.
void drop_from_page_cache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error(path + ": cannot open");
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

void write_plain(const std::string& path, const std::vector<at::Tensor>& tensors) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error(path + ": cannot create");
  for (const at::Tensor& tensor : tensors) {
    const auto* bytes = static_cast<const uint8_t*>(tensor.data_ptr());
    size_t size = tensor.numel() * tensor.element_size(), done = 0;
    while (done < size) {
      const ssize_t written = ::write(fd, bytes + done, size - done);
      if (written <= 0) throw Error(path + ": write failed");
      done += written;
    }
  }
  ::fdatasync(fd);
  ::close(fd);
}

int64_t read_plain(const std::string& path, int64_t entry_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error(path + ": cannot open");
  std::vector<uint8_t> buffer(entry_bytes);
  int64_t total = 0;
  for (;;) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got <= 0) break;
    total += got;
  }
  ::close(fd);
  return total;
}

}  // namespace

StoreBenchmarkReport run_store_benchmark(const StoreBenchmarkOptions& options) {
  if (options.directory.empty()) throw Error("bench store: no scratch directory");
  const fs::path root = fs::path(options.directory) / ("bench-store-" + std::to_string(::getpid()));
  fs::create_directories(root);
  struct Cleanup {
    fs::path path;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } cleanup{root};

  const int64_t entry_bytes = options.tokens * options.width * 4;
  const int64_t entries = std::max<int64_t>(1, options.megabytes * 1000000 / entry_bytes);
  auto generator = at::detail::createCPUGenerator(options.seed);
  std::vector<at::Tensor> tensors;
  for (int64_t i = 0; i < entries; ++i) tensors.push_back(at::randn({options.tokens, options.width}, generator));
  const double total_bytes = double(entries) * entry_bytes;
  const engine::CaptureId id{"bench-template", "bench-model", "bench"};
  auto key_of = [](int64_t i) { return engine::EntryKey{static_cast<int>(i / 64), static_cast<int>(i % 64), engine::Slot::hidden}; };
  int stage = 0;
  auto progress = [&](const char* name) { report_progress(options.progress, {name, ++stage, 7, 0.0}); };

  // 1. Writes: plain file vs store (append + checksums + flush + index commit).
  const std::string plain = (root / "plain.bin").string();
  auto start = Clock::now();
  write_plain(plain, tensors);
  const double plain_write = seconds_since(start);
  progress("plain write");
  cache::ActivationStoreOptions store_options;
  store_options.directory = (root / "store").string();
  store_options.host_capacity_bytes = static_cast<int64_t>(total_bytes) + (1 << 20);
  auto store = cache::ActivationStore::open(store_options);
  start = Clock::now();
  {
    auto writer = store->begin(id);
    for (int64_t i = 0; i < entries; ++i) writer->put(key_of(i), tensors[i]);
    writer->commit();
  }
  const double store_write = seconds_since(start);
  progress("store write");
  const std::string segment = store_options.directory + "/segments/" + store->list().at(0).segment;

  // 2. Cold reads of every byte: plain sequential read vs the store's entry reads (verified),
  // alternated three times, best of each (the virtual disk here is noisy).
  at::Tensor all_rows = at::arange(options.tokens);
  double plain_read = 1e30, store_read = 1e30;
  for (int round = 0; round < 3; ++round) {
    drop_from_page_cache(plain);
    start = Clock::now();
    read_plain(plain, entry_bytes);
    plain_read = std::min(plain_read, seconds_since(start));
    drop_from_page_cache(segment);
    start = Clock::now();
    {
      auto capture = store->find(id);
      for (int64_t i = 0; i < entries; ++i) capture->read_rows(key_of(i), all_rows);
    }
    store_read = std::min(store_read, seconds_since(start));
  }
  progress("plain read");
  progress("store read");

  // 3. Partial reads: the unmasked rows of a brush/blob/box mask of ratio m, cold.
  std::mt19937_64 rng(options.seed + 1);
  const int64_t grid = static_cast<int64_t>(std::sqrt(double(options.tokens)));
  at::Tensor token_mask = workload::random_mask(grid, options.tokens / grid, options.mask_ratio, rng).flatten();
  at::Tensor unmasked = (token_mask < 0.5).nonzero().flatten();
  drop_from_page_cache(segment);
  const int64_t disk_before = store->stats().bytes_read_from_disk;
  start = Clock::now();
  {
    auto capture = store->find(id);
    for (int64_t i = 0; i < entries; ++i) capture->read_rows(key_of(i), unmasked);
  }
  const double partial_read = seconds_since(start);
  const double partial_fraction = double(store->stats().bytes_read_from_disk - disk_before) / total_bytes;
  progress("partial read");

  // 4. Host tier: prefetch everything, then time lookups and lookups + row gathers.
  store->prefetch(id);
  store->wait_for_prefetches();
  progress("prefetch");
  cache::HostTier tier(static_cast<int64_t>(total_bytes) + (1 << 20));
  for (int64_t i = 0; i < entries; ++i) tier.put({1, key_of(i)}, tensors[i]);
  const int repeats = 20;
  start = Clock::now();
  for (int r = 0; r < repeats; ++r)
    for (int64_t i = 0; i < entries; ++i) tier.get({1, key_of(i)});
  const double lookup_us = seconds_since(start) * 1e6 / (repeats * entries);
  start = Clock::now();
  {
    auto capture = store->find(id);
    for (int64_t i = 0; i < entries; ++i) capture->read_rows(key_of(i), unmasked);
  }
  const double hit_with_gather_us = seconds_since(start) * 1e6 / entries;
  progress("host hits");

  StoreBenchmarkReport report;
  report.results = {
      {"config", {{"directory", options.directory}, {"entries", entries}, {"entry_bytes", entry_bytes},
                  {"total_bytes", total_bytes}, {"mask_ratio", options.mask_ratio},
                  {"unmasked_rows", unmasked.numel()}, {"rows", options.tokens}}},
      {"write", {{"plain_seconds", plain_write}, {"store_seconds", store_write},
                 {"plain_mb_s", total_bytes / plain_write / 1e6}, {"store_mb_s", total_bytes / store_write / 1e6},
                 {"store_vs_plain", plain_write / store_write}}},
      {"cold_read", {{"plain_seconds", plain_read}, {"store_seconds", store_read},
                     {"plain_mb_s", total_bytes / plain_read / 1e6}, {"store_mb_s", total_bytes / store_read / 1e6},
                     {"store_vs_plain", plain_read / store_read}}},
      {"partial_read", {{"seconds", partial_read}, {"bytes_fraction", partial_fraction},
                        {"ideal_fraction", double(unmasked.numel()) / options.tokens},
                        {"target_fraction", 1 - options.mask_ratio + 0.1}}},
      {"host_tier", {{"lookup_us_per_entry", lookup_us}, {"hit_with_row_gather_us_per_entry", hit_with_gather_us}}}};
  return report;
}

std::string StoreBenchmarkReport::table() const {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  const auto& config = results["config"];
  out << "activation store vs plain file, " << config["total_bytes"].get<double>() / 1e6 << " MB in "
      << config["entries"].get<int64_t>() << " entries of " << config["entry_bytes"].get<int64_t>() / 1e6 << " MB\n";
  out << "write      plain " << results["write"]["plain_mb_s"].get<double>() << " MB/s   store "
      << results["write"]["store_mb_s"].get<double>() << " MB/s   (store/plain " << results["write"]["store_vs_plain"].get<double>() * 100 << "%)\n";
  out << "cold read  plain " << results["cold_read"]["plain_mb_s"].get<double>() << " MB/s   store "
      << results["cold_read"]["store_mb_s"].get<double>() << " MB/s   (store/plain "
      << results["cold_read"]["store_vs_plain"].get<double>() * 100 << "%, target >= 85%)\n";
  out.precision(3);
  out << "partial    m=" << config["mask_ratio"].get<double>() << ": moved " << results["partial_read"]["bytes_fraction"].get<double>()
      << " of the bytes (ideal " << results["partial_read"]["ideal_fraction"].get<double>() << ", target <= "
      << results["partial_read"]["target_fraction"].get<double>() << ")\n";
  out.precision(2);
  out << "host tier  lookup " << results["host_tier"]["lookup_us_per_entry"].get<double>()
      << " us/entry (target <= 50); lookup + gather of the unmasked rows "
      << results["host_tier"]["hit_with_row_gather_us_per_entry"].get<double>() << " us/entry\n";
  return out.str();
}

}  // namespace flashps::bench
