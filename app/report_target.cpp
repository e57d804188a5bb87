#include "app/report_target.hpp"

#include "app/errors.hpp"

namespace podcheck::app {

void check_report_target(const std::string& path, bool force) {
  try {
    (void)check_output(path, force, /*allow_stream=*/true);
  } catch (const OutputError& e) {
    throw UsageError(e.what());
  }
}

}  // namespace podcheck::app
