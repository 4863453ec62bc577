#include "pipeline/edit_job.h"

namespace flashps {

EditResult StepwisePipeline::run_alone(const EditRequest& request) {
  std::unique_ptr<EditJob> job = start_edit(request);
  while (!job->denoised()) step({job.get()});
  return finish_edit(*job);
}

}  // namespace flashps
