// `flashps cache ls | stats | verify | evict | rm | gc`: inspect and maintain the activation
// store (logic in sdk/src/cache). Human-readable by default, --json for scripts.
#include <cstdio>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cache/activation_store.h"
#include "commands.h"
#include "core/error.h"
#include "terminal_progress.h"

namespace flashps::cli {
namespace {

struct CacheOptions {
  std::string directory;
  bool json = false;
  bool quiet = false;
  std::string max_size;
  std::string template_prefix;
};

std::shared_ptr<cache::ActivationStore> open_store(const CacheOptions& options) {
  cache::ActivationStoreOptions store;
  store.directory = options.directory.empty() ? cache::default_store_directory() : options.directory;
  return cache::ActivationStore::open(store);
}

// "500M", "2G", "1024" -> bytes.
int64_t parse_size(const std::string& text) {
  if (text.empty()) throw Error("--max-size: give a size like 500M or 2G");
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw Error("--max-size: '" + text + "' is not a size (e.g. 500M, 2G)");
  }
  const std::string unit = text.substr(used);
  double scale = 1;
  if (unit == "K" || unit == "k") scale = 1e3;
  else if (unit == "M" || unit == "m") scale = 1e6;
  else if (unit == "G" || unit == "g") scale = 1e9;
  else if (!unit.empty()) throw Error("--max-size: unknown unit '" + unit + "' (K, M or G)");
  if (value < 0) throw Error("--max-size must not be negative");
  return static_cast<int64_t>(value * scale);
}

std::string when(double seconds) {
  std::time_t time = static_cast<std::time_t>(seconds);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M", std::localtime(&time));
  return text;
}

nlohmann::json capture_json(const cache::StoredCapture& capture) {
  return {{"template", capture.capture_id.template_hash}, {"model", capture.capture_id.model_fingerprint},
          {"config", capture.capture_id.config},          {"bytes", capture.bytes},
          {"entries", capture.entries},                   {"quarantined", capture.quarantined},
          {"created", capture.created},                   {"last_access", capture.last_access}};
}

void add_common(CLI::App* command, CacheOptions& options) {
  command->add_option("--cache-dir", options.directory, "Store directory (default: ~/.cache/flashps/store)");
  command->add_flag("--json", options.json, "JSON output");
}

}  // namespace

void add_cache_commands(CLI::App& app, CommandAction& action) {
  static CacheOptions options;
  CLI::App* cache = app.add_subcommand("cache", "Inspect and maintain the activation store");
  cache->require_subcommand(1);

  CLI::App* ls = cache->add_subcommand("ls", "List stored template captures, most recently used first");
  add_common(ls, options);
  ls->callback([&action] {
    action = [] {
      auto captures = open_store(options)->list();
      if (options.json) {
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& capture : captures) rows.push_back(capture_json(capture));
        std::cout << rows.dump(2) << "\n";
        return 0;
      }
      std::printf("%-14s %-10s %10s %8s %6s  %-16s  %s\n", "template", "model", "MB", "entries", "bad", "last used",
                  "config");
      for (const auto& capture : captures)
        std::printf("%-14s %-10s %10.1f %8lld %6lld  %-16s  %s\n", capture.capture_id.template_hash.substr(0, 12).c_str(),
                    capture.capture_id.model_fingerprint.substr(0, 8).c_str(), capture.bytes / 1e6,
                    static_cast<long long>(capture.entries), static_cast<long long>(capture.quarantined),
                    when(capture.last_access).c_str(), capture.capture_id.config.c_str());
      std::printf("%zu capture(s)\n", captures.size());
      return 0;
    };
  });

  CLI::App* stats = cache->add_subcommand("stats", "Totals of the store");
  add_common(stats, options);
  stats->callback([&action] {
    action = [] {
      auto store = open_store(options);
      cache::StoreStats s = store->stats();
      nlohmann::json json = {{"directory", store->options().directory},
                             {"captures", s.captures},
                             {"entries", s.entries},
                             {"bytes", s.bytes},
                             {"quarantined_entries", s.quarantined},
                             {"segment_files", s.segment_files},
                             {"segment_bytes", s.segment_bytes},
                             {"disk_quota", s.disk_quota},
                             {"recovered_on_open", {{"removed_captures", store->open_report().removed_captures},
                                                    {"removed_segments", store->open_report().removed_segments}}}};
      if (options.json) {
        std::cout << json.dump(2) << "\n";
      } else {
        std::printf("store      %s\ncaptures   %lld (%lld entries, %lld quarantined)\nsize       %.1f MB in %lld segment file(s)\n",
                    store->options().directory.c_str(), static_cast<long long>(s.captures),
                    static_cast<long long>(s.entries), static_cast<long long>(s.quarantined), s.segment_bytes / 1e6,
                    static_cast<long long>(s.segment_files));
      }
      return 0;
    };
  });

  CLI::App* verify = cache->add_subcommand("verify", "Read every entry and check its checksums; quarantine damage");
  add_common(verify, options);
  verify->add_flag("--quiet,-q", options.quiet, "No progress bar");
  verify->callback([&action] {
    action = [] {
      auto report = open_store(options)->verify(terminal_progress(options.quiet || options.json));
      finish_progress_line(options.quiet || options.json);
      if (options.json) {
        std::cout << nlohmann::json{{"entries_checked", report.entries_checked}, {"damaged", report.damaged},
                                    {"problems", report.problems}}
                         .dump(2)
                  << "\n";
      } else {
        for (const auto& problem : report.problems) std::printf("damaged: %s\n", problem.c_str());
        std::printf("%lld entries checked, %lld damaged (quarantined)\n", static_cast<long long>(report.entries_checked),
                    static_cast<long long>(report.damaged));
      }
      return report.damaged ? 1 : 0;
    };
  });

  CLI::App* evict = cache->add_subcommand("evict", "Remove least recently used captures until the store fits a size");
  add_common(evict, options);
  evict->add_option("--max-size", options.max_size, "Target size, e.g. 500M or 2G (0 = empty the store)")->required();
  evict->callback([&action] {
    action = [] {
      const int64_t freed = open_store(options)->evict_to(parse_size(options.max_size));
      if (options.json) std::cout << nlohmann::json{{"bytes_freed", freed}}.dump() << "\n";
      else std::printf("freed %.1f MB\n", freed / 1e6);
      return 0;
    };
  });

  CLI::App* rm = cache->add_subcommand("rm", "Remove the captures of a template (hash or prefix, as `cache ls` shows)");
  add_common(rm, options);
  rm->add_option("template", options.template_prefix, "Template hash or prefix")->required();
  rm->callback([&action] {
    action = [] {
      const int removed = open_store(options)->remove(options.template_prefix);
      if (options.json) std::cout << nlohmann::json{{"removed", removed}}.dump() << "\n";
      else std::printf("removed %d capture(s)\n", removed);
      return removed > 0 ? 0 : 1;
    };
  });

  CLI::App* gc = cache->add_subcommand("gc", "Remove orphan segments and index rows whose bytes are gone");
  add_common(gc, options);
  gc->callback([&action] {
    action = [] {
      auto report = open_store(options)->gc();
      if (options.json) {
        std::cout << nlohmann::json{{"removed_captures", report.removed_captures},
                                    {"removed_segments", report.removed_segments},
                                    {"reclaimed_bytes", report.reclaimed_bytes}, {"notes", report.notes}}
                         .dump(2)
                  << "\n";
      } else {
        for (const auto& note : report.notes) std::printf("%s\n", note.c_str());
        std::printf("removed %d orphan segment(s) (%.1f MB) and %d broken capture(s)\n", report.removed_segments,
                    report.reclaimed_bytes / 1e6, report.removed_captures);
      }
      return 0;
    };
  });
}

}  // namespace flashps::cli
