// Text outputs of the jobs (reports, failure summaries): checked before any work, written whole or not at all.
#pragma once

#include <string>

namespace podcheck::app {

// Refuses (UsageError, one line) a target that exists without `force`, that is not a regular file, or whose
// folder is missing or not writable. Call it before the work whose result goes there.
void check_writable_target(const std::string& path, bool force);
// Writes `text` to `path` through a temporary file in the same folder, then renames it over the target.
void write_text_file(const std::string& path, const std::string& text, bool force);

}  // namespace podcheck::app
