// The command line of a measuring run (the `table` form is parsed in main.cpp).
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "abuse.h"

namespace abuse {

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "flashps_http_abuse: " << problem << "\n"
            << "usage: flashps_http_abuse --port P --image FILE --mask FILE [--server-pid PID] [--api-key-file F]\n"
               "         [--phases alone,slowloris,disconnect,huge_body,header_flood] [--phase-seconds S]\n"
               "         [--grace-seconds S] [--settle-seconds S] [--clients C] [--route openai|native] [--steps N]\n"
               "         [--request-timeout S] [--abuser-address 127.0.0.2] [--flood-connections N] [--flood-mb MB]\n"
               "         [--flood-mb-per-s R] [--slowloris-connections N] [--disconnect-clients N] [--disconnect-after S]\n"
               "         [--huge-body-gib G] [--huge-body-mb MB] [--rss-cap-mb MB] [--label NAME]\n"
               "         [--report FILE.json] [--rss-series FILE.tsv]\n"
               "       flashps_http_abuse table LABEL=REPORT.json[,REPORT.json...] [LABEL=...]\n";
  std::exit(2);
}

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) usage("cannot read " + path);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

static std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::istringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// The first line of the key file that is a key (the server's rules: blank and # lines skipped).
static std::string first_key(const std::string& path) {
  std::istringstream lines(read_file(path));
  for (std::string line; std::getline(lines, line);) {
    const size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos || line[begin] == '#') continue;
    return line.substr(begin, line.find_last_not_of(" \t\r") + 1 - begin);
  }
  usage(path + " holds no key");
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(name + " needs a value");
      return argv[++i];
    };
    try {
      if (name == "--port") o.port = std::stoi(value());
      else if (name == "--server-pid") o.server_pid = std::stoi(value());
      else if (name == "--api-key-file") o.api_key = first_key(value());
      else if (name == "--phases") o.phases = split(value(), ',');
      else if (name == "--phase-seconds") o.phase_seconds = std::stod(value());
      else if (name == "--grace-seconds") o.grace_seconds = std::stod(value());
      else if (name == "--settle-seconds") o.settle_seconds = std::stod(value());
      else if (name == "--clients") o.clients = std::stoi(value());
      else if (name == "--route") o.route = value();
      else if (name == "--steps") o.steps = std::stoi(value());
      else if (name == "--image") o.image_path = value();
      else if (name == "--mask") o.mask_path = value();
      else if (name == "--request-timeout") o.request_timeout = std::stod(value());
      else if (name == "--abuser-address") o.abuser_address = value();
      else if (name == "--flood-connections") o.flood_connections = std::stoi(value());
      else if (name == "--flood-mb") o.flood_mb = std::stod(value());
      else if (name == "--flood-mb-per-s") o.flood_mb_per_s = std::stod(value());
      else if (name == "--slowloris-connections") o.slowloris_connections = std::stoi(value());
      else if (name == "--disconnect-clients") o.disconnect_clients = std::stoi(value());
      else if (name == "--disconnect-after") o.disconnect_after = std::stod(value());
      else if (name == "--huge-body-gib") o.huge_body_gib = std::stod(value());
      else if (name == "--huge-body-mb") o.huge_body_mb = std::stod(value());
      else if (name == "--rss-cap-mb") o.rss_cap_mb = std::stod(value());
      else if (name == "--label") o.label = value();
      else if (name == "--report") o.report_path = value();
      else if (name == "--rss-series") o.rss_series_path = value();
      else if (name == "--help" || name == "-h") usage("help");
      else usage("unknown argument " + name);
    } catch (const std::logic_error&) {
      usage("bad value for " + name);
    }
  }
  if (o.port <= 0 || o.port > 65535) usage("--port is required (1-65535)");
  if (o.image_path.empty() || o.mask_path.empty()) usage("--image and --mask are required");
  if (o.route != "openai" && o.route != "native") usage("--route must be openai or native, not " + o.route);
  for (const std::string& phase : o.phases)
    if (std::find(kAllPhases.begin(), kAllPhases.end(), phase) == kAllPhases.end()) usage("unknown phase " + phase);
  if (o.phases.empty()) usage("--phases names no phase");
  if (o.phase_seconds <= 0 || o.clients <= 0 || o.steps <= 0) usage("--phase-seconds, --clients and --steps must be > 0");
  if (o.flood_mb <= 0 || o.flood_mb_per_s <= 0 || o.huge_body_mb <= 0 || o.huge_body_mb_per_s <= 0)
    usage("--flood-mb, --flood-mb-per-s, --huge-body-mb and --huge-body-mb-per-s must be > 0");
  if (o.rss_cap_mb <= 0) usage("--rss-cap-mb must be > 0");
  return o;
}

}  // namespace abuse
