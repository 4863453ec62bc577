// Runs the schedulers golden fixture (schedulers.json + schedulers.safetensors). For every entry of
// a supported class and every run (step count): the timesteps, the sigmas, the fake model's outputs
// and the sample after each step, plus one add_noise triple per entry. Entries of classes this
// build does not implement are skipped.
#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/tensor_io.h"
#include "dev/fixture_runners.h"
#include "schedulers/flow_match_euler_discrete.h"

namespace flashps::dev {
namespace {

using nlohmann::json;
using TensorMap = std::map<std::string, at::Tensor>;

const at::Tensor& stored_tensor(const TensorMap& tensors, const std::string& key,
                                const std::string& dir) {
  auto found = tensors.find(key);
  if (found == tensors.end()) throw Error(dir + "/schedulers.safetensors: no tensor '" + key + "'");
  return found->second;
}

std::optional<double> optional_number(const json& object, const char* key) {
  auto found = object.find(key);
  if (found == object.end() || found->is_null()) return std::nullopt;
  return found->get<double>();
}

// The mu a run sets its schedule with. A dynamic-shift entry states how mu is derived
// (calculate_shift of its "image_seq_len" with the scheduler's config), so it is computed here, as
// FluxPipeline computes it; a run's stored "mu" is only the value to compare against.
std::optional<double> schedule_mu(const Scheduler& scheduler, const json& entry, const json& run) {
  const auto* flow_match = dynamic_cast<const FlowMatchEulerDiscreteScheduler*>(&scheduler);
  if (flow_match != nullptr && flow_match->config().use_dynamic_shifting) {
    if (!entry.contains("image_seq_len"))
      throw Error("dynamic-shift entry '" + entry.at("name").get<std::string>() +
                  "' has no image_seq_len to derive mu from");
    return flow_match->dynamic_shift_mu(entry.at("image_seq_len").get<int>());
  }
  return optional_number(run, "mu");
}

// The fixture's fake denoiser: 0.5 * x_in + 0.1 * sin(t / 100), the sine in double precision.
at::Tensor fake_model_output(const at::Tensor& model_input, float timestep) {
  return model_input * 0.5 + 0.1 * std::sin(static_cast<double>(timestep) / 100.0);
}

CaseResult run_trajectory(const Scheduler& prototype, const json& entry, const json& run,
                          const TensorMap& tensors, const std::string& dir) {
  const int steps = run.at("num_inference_steps").get<int>();
  const double atol = run.at("atol").get<double>(), rtol = run.at("rtol").get<double>();
  CaseResult result;
  result.name = entry.at("name").get<std::string>() + "/n" + std::to_string(steps);

  std::unique_ptr<Scheduler> scheduler = prototype.clone();
  const std::optional<double> mu = schedule_mu(prototype, entry, run);
  const std::optional<double> stored_mu = optional_number(run, "mu");
  if (mu && stored_mu)  // the derived mu against the reference's
    result.outputs.push_back(compare_output("mu", at::tensor({*mu}, at::kDouble),
                                            at::tensor({*stored_mu}, at::kDouble), atol, rtol));
  scheduler->set_timesteps(steps, mu);
  const std::string timesteps_key = run.at("timesteps_key").get<std::string>();
  result.outputs.push_back(compare_output("timesteps", scheduler->timesteps(),
                                          stored_tensor(tensors, timesteps_key, dir), atol, rtol));
  if (run.contains("sigmas_key"))
    result.outputs.push_back(compare_output(
        "sigmas", scheduler->sigmas(),
        stored_tensor(tensors, run.at("sigmas_key").get<std::string>(), dir), atol, rtol));

  auto state = scheduler->make_state();
  at::Tensor sample = stored_tensor(tensors, run.at("init_sample").get<std::string>(), dir);
  std::vector<at::Tensor> model_outputs, samples;
  const auto timesteps = scheduler->timesteps().contiguous();
  for (int index = 0; index < scheduler->num_steps(); ++index) {
    at::Tensor model_input = scheduler->scale_model_input(sample, index);
    at::Tensor model_output = fake_model_output(model_input, timesteps[index].item<float>());
    sample = scheduler->step(model_output, index, sample, *state);
    model_outputs.push_back(model_output);
    samples.push_back(sample);
  }
  auto stacked = [](const std::vector<at::Tensor>& list) {
    return list.empty() ? at::Tensor() : at::stack(list);
  };
  result.outputs.push_back(compare_output(
      "model_outputs", stacked(model_outputs),
      stored_tensor(tensors, run.at("model_outputs").get<std::string>(), dir), atol, rtol));
  result.outputs.push_back(compare_output(
      "samples", stacked(samples),
      stored_tensor(tensors, run.at("samples").get<std::string>(), dir), atol, rtol));
  return result;
}

// add_noise on a fresh scheduler after set_timesteps(10), at the stored timestep (timesteps[3]).
CaseResult run_add_noise(const Scheduler& prototype, const json& entry, const json& runs,
                         const TensorMap& tensors, const std::string& dir) {
  const json& spec = entry.at("add_noise");
  const double atol = spec.at("atol").get<double>(), rtol = spec.at("rtol").get<double>();
  CaseResult result;
  result.name = entry.at("name").get<std::string>() + "/add_noise";

  // add_noise follows set_timesteps(10), with the mu the entry derives (it depends on no run).
  std::unique_ptr<Scheduler> scheduler = prototype.clone();
  scheduler->set_timesteps(10, schedule_mu(prototype, entry, runs.empty() ? json::object() : runs.front()));

  const at::Tensor& timestep =
      stored_tensor(tensors, spec.at("timestep_key").get<std::string>(), dir);
  const float wanted = timestep.flatten()[0].item<float>();
  at::Tensor distances = (scheduler->timesteps() - wanted).abs();
  const int step_index = static_cast<int>(distances.argmin().item<int64_t>());
  result.outputs.push_back(compare_output("timestep",
                                          scheduler->timesteps().narrow(0, step_index, 1),
                                          timestep.to(at::kFloat), atol, rtol));
  at::Tensor noisy = scheduler->add_noise(
      stored_tensor(tensors, spec.at("original").get<std::string>(), dir),
      stored_tensor(tensors, spec.at("noise").get<std::string>(), dir), step_index);
  result.outputs.push_back(compare_output(
      "noisy", noisy, stored_tensor(tensors, spec.at("expected_noisy").get<std::string>(), dir),
      atol, rtol));
  return result;
}

bool is_supported_class(const std::string& class_name) {
  return class_name == "FlowMatchEulerDiscreteScheduler" || class_name == "DDIMScheduler" ||
         class_name == "EulerDiscreteScheduler" || class_name == "DPMSolverMultistepScheduler" ||
         class_name == "PNDMScheduler";
}

}  // namespace

FixtureReport run_schedulers_fixture(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string json_path = (fs::path(dir) / "schedulers.json").string();
  const json fixture = read_json_file(json_path);
  const TensorMap tensors = load_safetensors((fs::path(dir) / "schedulers.safetensors").string());

  FixtureReport report;
  report.dir = dir;
  report.component = "schedulers";
  std::vector<std::string> skipped;
  try {
    for (const json& entry : fixture.at("entries")) {
      const std::string class_name = entry.at("class").get<std::string>();
      const std::string name = entry.at("name").get<std::string>();
      if (!is_supported_class(class_name)) {
        skipped.push_back(name + " (" + class_name + ")");
        continue;
      }
      std::unique_ptr<Scheduler> prototype;
      try {
        prototype = make_scheduler(entry.at("config"), json_path + " entry '" + name + "'");
      } catch (const Error& error) {
        CaseResult failed;
        failed.name = name;
        failed.error = error.what();
        report.cases.push_back(std::move(failed));
        continue;
      }
      const json& runs = entry.at("runs");
      auto run_case = [&](const std::string& case_name, auto&& body) {
        try {
          report.cases.push_back(body());
        } catch (const std::exception& error) {
          CaseResult failed;
          failed.name = case_name;
          failed.error = error.what();
          report.cases.push_back(std::move(failed));
        }
      };
      for (const json& run : runs)
        run_case(name + "/n" + std::to_string(run.value("num_inference_steps", 0)),
                 [&] { return run_trajectory(*prototype, entry, run, tensors, dir); });
      if (entry.contains("add_noise"))
        run_case(name + "/add_noise",
                 [&] { return run_add_noise(*prototype, entry, runs, tensors, dir); });
    }
  } catch (const json::exception& error) {
    throw Error(json_path + ": malformed scheduler fixture: " + error.what());
  }

  // A report without cases would pass vacuously; say what was skipped instead.
  if (report.cases.empty()) {
    CaseResult nothing_ran;
    nothing_ran.name = "schedulers";
    nothing_ran.error = "no entry of a supported scheduler class; skipped:";
    for (const std::string& name : skipped) nothing_ran.error += " " + name;
    report.cases.push_back(std::move(nothing_ran));
  }
  return report;
}

}  // namespace flashps::dev
