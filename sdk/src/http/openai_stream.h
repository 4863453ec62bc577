// OpenAI's streaming image edits: POST /v1/images/edits with stream=true answers with Server-Sent
// Events as OpenAI's API defines them (openai-node's ImageEditStreamEvent):
//   event: image_edit.partial_image   data: {type, b64_json, partial_image_index, size, quality,
//                                            background, output_format, created_at}
//   event: image_edit.completed       data: the same without partial_image_index, plus usage
// The partial images are the engine's step previews of the processed region (the first
// partial_images of them, spread over the steps); the completed image is the whole result. An
// edit that fails after the stream began ends it with `event: error` and the usual error body,
// which the official clients raise as an APIError.
#pragma once
#include <memory>
#include <string>

#include "http/edit_form.h"
#include "http/edit_jobs.h"
#include "http/wire/message.h"

namespace flashps::http {

// HttpError(400) naming the field for what a streamed edit cannot do here: n > 1 (one image
// per stream) and response_format=url (events carry the image itself).
void check_stream_form(const EditForm& form);

// The engine's preview interval for `partial_images` spread over `steps` (0 when none are wanted).
int preview_every_steps(int steps, int partial_images);

struct StreamedImage {
  std::string size;           // the result's WIDTHxHEIGHT
  std::string output_format;  // png or jpeg
};

// Answers `response` with the job's event stream (chunked, text/event-stream).
void stream_image_edit(Response& response, std::shared_ptr<EditJob> job, StreamedImage image);

}  // namespace flashps::http
