// The misbehaving clients, one function each (one file each). Every abuser runs until `stop` is
// set, is bounded in what it sends (options), and returns a JSON summary of what it did and how far
// it got before the server stopped it.
#pragma once
#include "abuse.h"

namespace abuse {

// Connections without the key sending an endless request head of small headers.
json run_header_flood(const Options& options, const std::atomic<bool>& stop);
// Connections sending one byte of a request head per interval, never finishing it.
json run_slowloris(const Options& options, const std::atomic<bool>& stop);
// Clients that send an edit with the key and hang up before the answer.
json run_disconnecting_clients(const Options& options, const std::atomic<bool>& stop);
// Connections without the key declaring a huge Content-Length and sending it.
json run_huge_body(const Options& options, const std::atomic<bool>& stop);

}  // namespace abuse
