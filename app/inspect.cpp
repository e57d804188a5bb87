// podcheck inspect (inspect.hpp).
#include "app/inspect.hpp"

#include "fixtures/h5/case_group.hpp"
#include "fixtures/isolated_read.hpp"
#include "traces/trace_io.hpp"

#include <cstdio>
#include <string>

namespace podcheck::app {

namespace {

void print_attrs(const h5::Node& n, const std::string& indent) {
  for (const std::string& a : h5::attr_names(n)) {
    std::string v = h5::read_attr_text(n, a);
    if (v.size() > 100) v = v.substr(0, 97) + "...";
    std::printf("%s%s = %s\n", indent.c_str(), a.c_str(), v.c_str());
  }
}

void print_datasets(const h5::Node& g, const std::string& indent) {
  for (const std::string& name : h5::children(g)) {
    if (!h5::has_dataset(g, name)) continue;
    h5::DatasetInfo info = h5::dataset_info(g, name);
    std::printf("%s%-18s %-10s %-22s %10llu bytes stored\n", indent.c_str(), name.c_str(),
                info.dtype_attr.value_or("?").c_str(), shape_text(info.shape).c_str(),
                static_cast<unsigned long long>(info.stored_bytes));
  }
}

void inspect_case(const h5::Node& root, const std::string& id, bool detail) {
  h5::Node g = fileformat::open_case(root, id);
  if (!detail) {
    std::string kind = h5::has_attr(g, "kind") ? h5::read_attr_string(g, "kind") : "?";
    std::string dt = h5::has_attr(g, "dtype_q") ? h5::read_attr_string(g, "dtype_q") + "/" + h5::read_attr_string(g, "dtype_kv") : "?";
    std::string obs;
    if (h5::has_group(g, "observed"))
      for (const std::string& o : h5::children(h5::open_group(g, "observed"))) obs += (obs.empty() ? "" : ",") + o;
    std::string exp;
    if (h5::has_group(g, "expected")) {
      h5::Node e = h5::open_group(g, "expected");
      for (const std::string& n : h5::children(e)) {
        h5::Node x = h5::open_group(e, n);
        if (h5::read_attr_string(x, "status") != "passed")
          exp += " expect " + h5::read_attr_string(x, "status") + "@" + h5::read_attr_string(x, "profile");
      }
    }
    std::string params = h5::read_attr_text(g, "num_qo_heads") + "/" + h5::read_attr_text(g, "num_kv_heads") + "h d" +
                         h5::read_attr_text(g, "head_dim");
    std::uint64_t bytes = 0;
    for (const char* side : {"prefill", "decode"}) {
      if (!h5::has_group(g, side)) continue;
      h5::Node s = h5::open_group(g, side);
      std::string rows = h5::has_dataset(s, "q") ? std::to_string(h5::dataset_info(s, "q").shape.at(0)) : "?";
      params += std::string(" ") + side[0] + ":" + h5::read_attr_text(s, "num_requests") + "req/" + rows + "rows " +
                h5::read_attr_text(s, "kv_storage") + "," + h5::read_attr_text(s, "layout") + "," +
                h5::read_attr_text(s, "mask_mode");
      if (h5::has_attr(s, "page_size")) params += ",ps" + h5::read_attr_text(s, "page_size");
      if (h5::read_attr_int(s, "window_left") >= 0) params += ",win" + h5::read_attr_text(s, "window_left");
      if (h5::read_attr_text(s, "pos_encoding") != "NONE") params += "," + h5::read_attr_text(s, "pos_encoding");
      if (h5::read_attr_double(s, "logits_soft_cap") != 0) params += ",cap" + h5::read_attr_text(s, "logits_soft_cap");
      for (const std::string& d : h5::children(s))
        if (h5::has_dataset(s, d)) bytes += h5::dataset_info(s, d).stored_bytes;
    }
    const bool by_id = h5::has_attr(g, "inputs") && h5::read_attr_string(g, "inputs") == fileformat::kInputsById;
    char inputs[64];
    std::snprintf(inputs, sizeof inputs, "%.1f KiB inputs stored", bytes / 1024.0);
    std::printf("  %s\n    %s %s %s, %s%s%s%s\n", id.c_str(), kind.c_str(), dt.c_str(), params.c_str(),
                by_id ? "inputs by id (rebuilt from the id, checked by digest)" : inputs, obs.empty() ? "" : "; observed ",
                obs.c_str(), exp.c_str());
    return;
  }
  std::printf("case %s\n", id.c_str());
  print_attrs(g, "  ");
  for (const char* side : {"prefill", "decode"}) {
    if (!h5::has_group(g, side)) continue;
    h5::Node s = h5::open_group(g, side);
    std::printf("  %s:\n", side);
    print_attrs(s, "    ");
    print_datasets(s, "    ");
  }
  for (const char* sub : {"reference", "observed"}) {
    if (!h5::has_group(g, sub)) continue;
    std::printf("  %s:\n", sub);
    print_datasets(h5::open_group(g, sub), "    ");
  }
  if (h5::has_group(g, "provenance")) {
    h5::Node p = h5::open_group(g, "provenance");
    std::printf("  provenance:\n");
    print_attrs(p, "    ");
    if (h5::has_group(p, "scheduling")) {
      std::printf("    scheduling:\n");
      print_attrs(h5::open_group(p, "scheduling"), "      ");
    }
  }
  if (h5::has_group(g, "expected")) {
    h5::Node e = h5::open_group(g, "expected");
    std::printf("  expected verdicts:\n");
    for (const std::string& n : h5::children(e)) {
      h5::Node x = h5::open_group(e, n);
      std::string diag = h5::has_attr(x, "diagnosis") ? h5::read_attr_string(x, "diagnosis") : "";
      std::printf("    %-15s %-10s %s\n", h5::read_attr_string(x, "profile").c_str(), h5::read_attr_string(x, "status").c_str(),
                  diag.empty() ? "" : ("diagnosis contains \"" + diag + "\"").c_str());
    }
  }
}

}  // namespace

int run_inspect(const InspectOptions& o) {
    // in a child process: a libhdf5 crash on a corrupt file is an error (exit 2), not a signal
    isolation::run_isolated(o.file, [&] {
    std::string fmt;
    h5::Node root = fileformat::open_podcheck_file(o.file, &fmt);
    fileformat::translate_h5_errors(o.file, [&] {
      if (!o.case_id.empty()) {
        inspect_case(root, o.case_id, true);
        if (o.check) {
          if (fmt == fileformat::kTraceFormat) (void)read_trace(o.file, o.case_id);
          else (void)read_fixture(o.file, o.case_id);
          std::printf("check: case reads back without error\n");
        }
        return 0;
      }
      auto ids = fileformat::case_ids(root);
      std::printf("%s: %s version %lld, %zu case(s)\n", o.file.c_str(), fmt.c_str(),
                  static_cast<long long>(h5::read_attr_int(root, "format_version")), ids.size());
      for (const std::string& id : ids) inspect_case(root, id, false);
      if (o.check) {
        if (fmt == fileformat::kTraceFormat) (void)read_traces(o.file);
        else (void)read_fixtures(o.file);
        std::printf("check: all %zu case(s) read back without error\n", ids.size());
      }
      return 0;
    });
    });
  return 0;
}

}  // namespace podcheck::app
