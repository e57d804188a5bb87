// The HTML report as a page: one row per case with its status, a failing case's maps with the expected bins
// and cell codes, nothing fetched from the network, text escaped, big cases binned, bad input refused.
// (The page's JS, as Chromium runs it, is checked by cli/tests/html_browser_test.py.)
#include "testing/catch.hpp"

#include "app/html_report.hpp"
#include "app/report.hpp"
#include "app/report_maps.hpp"
#include "validation/tests/helpers.hpp"

#include <limits>
#include <regex>

using namespace podcheck;
using namespace podcheck::app;
using namespace podcheck::validation;
using podcheck::testhelp::make_pod;
using podcheck::testhelp::PodSpec;
using podcheck::testhelp::rounded_reference;

namespace {

int count_of(const std::string& s, const std::regex& re) {
  return static_cast<int>(std::distance(std::sregex_iterator(s.begin(), s.end(), re), std::sregex_iterator()));
}

std::string unbase64(const std::string& in) {
  static const std::string abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned v = 0;
  int bits = 0;
  for (char ch : in) {
    if (ch == '=') break;
    v = (v << 6) | static_cast<unsigned>(abc.find(ch));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((v >> bits) & 0xff);
    }
  }
  return out;
}

// The opening tag of the figure for `tensor` inside the article of case `id` (the first one).
std::string figure_tag(const std::string& page, const std::string& id, const std::string& tensor) {
  const auto a = page.find("<article class=\"failure\" id=\"f");
  for (auto at = a; at != std::string::npos; at = page.find("<article class=\"failure\"", at + 1)) {
    const auto end = page.find("</article>", at);
    const std::string art = page.substr(at, end - at);
    if (art.find("data-id=\"" + id + "\"") == std::string::npos) continue;
    const auto f = art.find("data-tensor=\"" + tensor + "\"");
    if (f == std::string::npos) return "";
    const auto open = art.rfind("<figure", f);
    return art.substr(open, art.find('>', f) - open);
  }
  return "";
}

std::string attr(const std::string& tag, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(tag, m, std::regex(" " + name + "=\"([^\"]*)\""))) return "";
  return m[1];
}

struct Run {
  std::vector<CaseResult> results;
  ReportExtras extras;
  void add(const Case& c, const KernelOutputs& o, const std::string& source) {
    CaseResult r = judge(c, o, {}, JudgeOptions{});
    r.source = source;
    r.reproduce = "podcheck replay '" + source + "' --case '" + r.id + "' --profile intended";
    extras.add(r, c, o);
    results.push_back(r);
  }
  std::string page(const HtmlOptions& ho = {}) {
    nlohmann::json rep = report_json(results, summarize(results, 1.5));
    extras.attach(rep);
    return html_report(rep, ho);
  }
};

}  // namespace

TEST_CASE("html report: rows per status, a failing case's maps with its bins and the planted cell, no network", "[app][html]") {
  const Case c = make_pod(PodSpec{});  // decode: 4 requests of one row, 8 heads
  KernelOutputs bad = rounded_reference(c);
  bad.out_d->set((2 * 8 + 5) * c.head_dim, bad.out_d->get((2 * 8 + 5) * c.head_dim) + 1.0);  // request 2, head 5
  KernelOutputs unwritten = rounded_reference(c);
  for (int h = 0; h < 8; ++h) unwritten.lse_p->set(3 * 8 + h, std::numeric_limits<double>::quiet_NaN());  // row 3
  Run run;
  run.add(c, rounded_reference(c), "good.h5");
  run.add(c, bad, "bad.h5");
  run.add(c, unwritten, "nan.h5");
  const std::string page = run.page();

  CHECK(count_of(page, std::regex("<tr [^>]*data-status=\"passed\"")) == 1);
  CHECK(count_of(page, std::regex("<tr [^>]*data-status=\"incorrect\"")) == 2);
  CHECK(count_of(page, std::regex("<article class=\"failure\"")) == 2);
  CHECK(page.find("<b data-count=\"fail\">2</b>") != std::string::npos);
  CHECK(page.find("podcheck replay &#39;bad.h5&#39;") != std::string::npos);  // the reproduce command

  const std::string fig = figure_tag(page, c.id, "out_d");
  REQUIRE_FALSE(fig.empty());
  CHECK(attr(fig, "data-row-bins") == "4");
  CHECK(attr(fig, "data-head-bins") == "8");
  CHECK(attr(fig, "data-requests") == "4");
  const std::string codes = unbase64(attr(fig, "data-codes"));
  REQUIRE(codes.size() == 4 * 8);
  for (int row = 0; row < 4; ++row)
    for (int h = 0; h < 8; ++h) {
      const int code = static_cast<unsigned char>(codes[row * 8 + h]);
      INFO("row " << row << " head " << h << " code " << code);
      if (row == 2 && h == 5) CHECK((code >= 100 && code < 254));  // over, finite
      else CHECK(code < 100);                                      // within
    }
  // the second failure: lse_p row 3 never written, in every head
  const auto second = page.find("data-id=\"" + c.id + "\"", page.find("<article class=\"failure\" id=\"f2\"") - 1);
  REQUIRE(second != std::string::npos);
  const std::string lse_fig = figure_tag(page.substr(page.find("<article class=\"failure\" id=\"f2\"")), c.id, "lse_p");
  const std::string lse_codes = unbase64(attr(lse_fig, "data-codes"));
  REQUIRE(lse_codes.size() == static_cast<std::size_t>(19 * 8));
  for (int h = 0; h < 8; ++h) CHECK(static_cast<unsigned char>(lse_codes[3 * 8 + h]) == 255);
  CHECK(static_cast<unsigned char>(lse_codes[2 * 8]) < 100);

  // self-contained: no URL a browser would fetch, every src/href a data: URI or a fragment
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
  CHECK(page.find("//cdn") == std::string::npos);
  const std::regex ref("(?:src|href)=\"([^\"]*)\"");
  int refs = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), ref); it != std::sregex_iterator(); ++it, ++refs) {
    const std::string v = (*it)[1];
    INFO(v.substr(0, 40));
    CHECK((v.rfind("data:image/png;base64,", 0) == 0 || v.rfind("#", 0) == 0));
  }
  CHECK(refs > 4);
  CHECK(page.find("<script src") == std::string::npos);
  CHECK(page.find("<link") == std::string::npos);
  CHECK(page.find("@import") == std::string::npos);
}

TEST_CASE("html report: text from the report is escaped", "[app][html]") {
  const Case c = make_pod(PodSpec{});
  KernelOutputs bad = rounded_reference(c);
  bad.out_d->set(3, bad.out_d->get(3) + 1.0);
  Run run;
  run.add(c, bad, "x.h5");
  run.results[0].id = "odd<id>&\"'";
  run.results[0].message = "<script>alert(1)</script>";
  nlohmann::json rep = report_json(run.results, summarize(run.results, 0));
  const std::string page = html_report(rep);
  CHECK(page.find("odd<id>") == std::string::npos);
  CHECK(page.find("odd&lt;id&gt;&amp;&quot;&#39;") != std::string::npos);
  CHECK(page.find("<script>alert") == std::string::npos);
  CHECK(page.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
}

TEST_CASE("html report: a big failing case is binned and the page stays small; later failures are listed without maps", "[app][html]") {
  PodSpec ps;
  ps.qo_p = 1500;
  ps.kv_p = 1500;
  ps.heads = 8;
  ps.kv_heads = 8;
  ps.head_dim = 16;
  ps.kv_d = {};
  ps.mask_p = MaskMode::none;
  const Case big = make_pod(ps);
  KernelOutputs o = rounded_reference(big);
  for (std::int64_t i = 0; i < o.out_p->numel(); i += 97) o.out_p->set(i, o.out_p->get(i) + 0.25);
  Run run;
  run.add(big, o, "big.h5");
  run.add(big, o, "big2.h5");
  HtmlOptions ho;
  ho.max_maps_cases = 1;
  const std::string page = run.page(ho);
  const std::string fig = figure_tag(page, big.id, "out_p");
  REQUIRE_FALSE(fig.empty());
  CHECK(std::stoi(attr(fig, "data-row-bins")) <= kMaxPanelRowBins);
  CHECK(std::stoi(attr(fig, "data-row-bins")) >= kMaxPanelRowBins / 2);
  CHECK(attr(fig, "data-head-bins") == "8");
  CHECK(page.size() < 200'000);
  CHECK(count_of(page, std::regex("<figure class=\"heatmap\"")) == 2);  // out_p and lse_p of the first failure only
  CHECK(page.find("Heat maps left out") != std::string::npos);
}

TEST_CASE("html report: a file that is not a report, or a malformed map, is refused with the case named", "[app][html]") {
  CHECK_THROWS_WITH(html_report(nlohmann::json::object()), HasSubstring("not a podcheck report"));
  nlohmann::json rep = {{"cases", nlohmann::json::array({{{"id", "c1"}, {"status", "incorrect"}, {"verdict", "fail"},
                                                          {"heat_maps", nlohmann::json::array({{{"side", "decode"}}})}}})}};
  CHECK_THROWS_WITH(html_report(rep), HasSubstring("case 'c1'"));
  // a merged report without maps (older podcheck) still gives a page, with a note
  rep["cases"][0].erase("heat_maps");
  const std::string page = html_report(rep);
  CHECK(page.find("No heat maps in this report") != std::string::npos);
  // an expected failure of a trace file gets the command replay gives a failure
  rep["cases"][0]["verdict"] = "xfail";
  rep["cases"][0]["kind"] = "trace";
  rep["cases"][0]["source"] = "x.h5";
  rep["cases"][0]["profile"] = "flashinfer";
  rep["cases"][0]["policy"] = "calibrated";
  CHECK(html_report(rep).find("reproduce: <code>podcheck replay &#39;x.h5&#39; --case &#39;c1&#39; --profile flashinfer</code>") !=
        std::string::npos);
}
