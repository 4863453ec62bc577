// The load client's command line.
#include "load_run.h"

namespace load_client {

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "http_load_client: " << problem << "\n"
            << "usage: http_load_client --port P --image FILE --mask FILE [--alpha-mask FILE] [--requests N]\n"
               "         [--clients C] [--seed S] [--report FILE] [--check-metrics] [--allow-draining]\n"
               "         [--server-may-die] [--edit-timeout S] [--retry-seconds S]\n"
               "  --mask: white-on-black (native API); --alpha-mask: alpha 0 = edit (OpenAI API), default a\n"
               "  rectangle in the middle of the image, made here\n";
  std::exit(2);
}

Args parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(name + " needs a value");
      return argv[++i];
    };
    try {
      if (name == "--port") args.port = std::stoi(value());
      else if (name == "--requests") args.requests = std::stoi(value());
      else if (name == "--clients") args.clients = std::stoi(value());
      else if (name == "--seed") args.seed = std::stoull(value());
      else if (name == "--image") args.image = value();
      else if (name == "--mask") args.mask = value();
      else if (name == "--alpha-mask") args.alpha_mask = value();
      else if (name == "--report") args.report = value();
      else if (name == "--edit-timeout") args.edit_timeout = std::stod(value());
      else if (name == "--retry-seconds") args.retry_seconds = std::stod(value());
      else if (name == "--check-metrics") args.check_metrics = true;
      else if (name == "--allow-draining") args.allow_draining = true;
      else if (name == "--server-may-die") args.server_may_die = true;
      else if (name == "--help" || name == "-h") usage("help");
      else usage("unknown argument " + name);
    } catch (const std::logic_error&) {
      usage("bad value for " + name);
    }
  }
  if (args.port <= 0 || args.port > 65535) usage("--port is required (1-65535)");
  if (args.image.empty() || args.mask.empty()) usage("--image and --mask are required");
  if (args.requests < 0 || args.clients <= 0) usage("--requests must be >= 0 and --clients > 0");
  return args;
}

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) usage("cannot read " + path);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}


}  // namespace load_client
