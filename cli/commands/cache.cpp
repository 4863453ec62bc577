// `flashps cache ls | stats | verify | evict | rm | gc`: inspect and maintain the activation
// store (flashps::sdk::Store). Human-readable by default, --json for scripts.
#include <flashps/flashps.hpp>

#include <cstdio>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "byte_size.h"
#include "commands.h"
#include "terminal_progress.h"

namespace flashps::cli {
namespace {

namespace fps = flashps::sdk;

struct CacheOptions {
  std::string directory;
  bool json = false;
  bool quiet = false;
  bool all_matching = false;
  std::string max_size;
  std::string template_prefix;
};

// Opens the store and prints what opening it found (a read-only folder, a full disk, a damaged
// index set aside), each note naming the command that recovers.
fps::Store open_store(const CacheOptions& options) {
  fps::StoreOptions store;
  store.directory = options.directory;  // empty: the SDK's default store
  fps::Store opened = fps::Store::open(store);
  for (const std::string& note : opened.notes()) std::cerr << "flashps: note: " << note << "\n";
  return opened;
}

std::string when(double seconds) {
  std::time_t time = static_cast<std::time_t>(seconds);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M", std::localtime(&time));
  return text;
}

nlohmann::json capture_json(const fps::CaptureInfo& capture) {
  return {{"template", capture.template_hash}, {"model", capture.model_fingerprint},
          {"config", capture.config},          {"bytes", capture.bytes},
          {"entries", capture.entries},        {"quarantined", capture.quarantined},
          {"created", capture.created},        {"last_access", capture.last_access}};
}

void add_common(CLI::App* command, CacheOptions& options) {
  command->add_option("--cache-dir", options.directory,
                      "Store directory (default: ~/.cache/flashps/store, or FLASHPS_CACHE_DIR)");
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
      const std::vector<fps::CaptureInfo> captures = open_store(options).list();
      if (options.json) {
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& capture : captures) rows.push_back(capture_json(capture));
        std::cout << rows.dump(2) << "\n";
        return 0;
      }
      std::printf("%-14s %-10s %10s %8s %6s  %-16s  %s\n", "template", "model", "MB", "entries", "bad", "last used",
                  "config");
      for (const auto& capture : captures)
        std::printf("%-14s %-10s %10.1f %8lld %6lld  %-16s  %s\n", capture.template_hash.substr(0, 12).c_str(),
                    capture.model_fingerprint.substr(0, 8).c_str(), capture.bytes / 1e6,
                    static_cast<long long>(capture.entries), static_cast<long long>(capture.quarantined),
                    when(capture.last_access).c_str(), capture.config.c_str());
      std::printf("%zu capture(s)\n", captures.size());
      return 0;
    };
  });

  CLI::App* stats = cache->add_subcommand("stats", "Totals of the store");
  add_common(stats, options);
  stats->callback([&action] {
    action = [] {
      const fps::Store store = open_store(options);
      const fps::StoreStats s = store.stats();
      if (options.json) {
        const nlohmann::json json = {
            {"directory", store.directory()},
            {"captures", s.captures},
            {"entries", s.entries},
            {"bytes", s.bytes},
            {"quarantined_entries", s.quarantined},
            {"segment_files", s.segment_files},
            {"segment_bytes", s.segment_bytes},
            {"disk_quota", s.disk_quota},
            {"read_only", store.read_only()},
            {"recovered_on_open", {{"removed_captures", s.recovered_captures},
                                   {"removed_segments", s.recovered_segments}}}};
        std::cout << json.dump(2) << "\n";
      } else {
        std::printf("store      %s\ncaptures   %lld (%lld entries, %lld quarantined)\nsize       %.1f MB in %lld segment file(s)\n",
                    store.directory().c_str(), static_cast<long long>(s.captures),
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
      const fps::VerifyReport report = open_store(options).verify(terminal_progress(options.quiet || options.json));
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
      const int64_t max_bytes = parse_byte_size("--max-size", options.max_size);  // before opening the store
      const int64_t freed = open_store(options).evict(max_bytes);
      if (options.json) std::cout << nlohmann::json{{"bytes_freed", freed}}.dump() << "\n";
      else std::printf("freed %.1f MB\n", freed / 1e6);
      return 0;
    };
  });

  CLI::App* rm = cache->add_subcommand(
      "rm", "Remove the captures of a template (hash or prefix of at least 4 characters, as `cache ls` shows)");
  add_common(rm, options);
  rm->add_option("template", options.template_prefix, "Template hash or prefix")->required();
  rm->add_flag("--all-matching", options.all_matching,
               "Remove every template the prefix matches (without it a prefix naming several is refused)");
  rm->callback([&action] {
    action = [] {
      const int removed = open_store(options).remove(options.template_prefix, options.all_matching);
      if (options.json) std::cout << nlohmann::json{{"removed", removed}}.dump() << "\n";
      else std::printf("removed %d capture(s)\n", removed);
      return 0;
    };
  });

  CLI::App* gc = cache->add_subcommand("gc", "Remove orphan segments and index rows whose bytes are gone");
  add_common(gc, options);
  gc->callback([&action] {
    action = [] {
      const fps::GcReport report = open_store(options).gc();
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
