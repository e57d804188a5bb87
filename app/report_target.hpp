// Report targets (--json, --junit, --html, --fib-trace, failure summaries) are checked before any work with
// fixtures' atomic writer (fixtures/atomic_file.hpp: a stream such as /dev/stdout is written in place, a
// regular file through a temp file and rename, anything else refused) and written with its write_text_file.
#pragma once

#include "fixtures/atomic_file.hpp"

#include <string>

namespace podcheck::app {

// check_output(path, force, allow_stream = true), its OutputError as a UsageError (exit 2, one line).
void check_report_target(const std::string& path, bool force);

}  // namespace podcheck::app
