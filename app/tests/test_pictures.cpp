// The pictures: PNG encoding (read back with libpng's reader and the file header parsed by hand), base64
// (RFC 4648's vectors), the colour scale's four classes, text, panel cells and the plot figure.
#include "testing/catch.hpp"

#include "app/heat_plot.hpp"
#include "app/png_image.hpp"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

using namespace podcheck;
using namespace podcheck::app;
using podcheck::validation::TensorKind;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::uint32_t be32(const std::string& s, std::size_t at) {
  return (std::uint32_t(std::uint8_t(s[at])) << 24) | (std::uint32_t(std::uint8_t(s[at + 1])) << 16) |
         (std::uint32_t(std::uint8_t(s[at + 2])) << 8) | std::uint32_t(std::uint8_t(s[at + 3]));
}

// Decodes a PNG with libpng's simplified reader into RGB bytes.
std::vector<std::uint8_t> decode(const std::string& png, int& w, int& h) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  REQUIRE(png_image_begin_read_from_memory(&img, png.data(), png.size()) != 0);
  img.format = PNG_FORMAT_RGB;
  std::vector<std::uint8_t> px(PNG_IMAGE_SIZE(img));
  REQUIRE(png_image_finish_read(&img, nullptr, px.data(), 0, nullptr) != 0);
  w = static_cast<int>(img.width);
  h = static_cast<int>(img.height);
  return px;
}

HeatMap map_of(SideKind side, TensorKind kind, int request, std::int64_t rows, int heads, std::vector<float> cells) {
  HeatMap m;
  m.side = side;
  m.kind = kind;
  m.request = request;
  m.rows = m.row_bins = rows;
  m.heads = m.head_bins = heads;
  m.cells = std::move(cells);
  return m;
}

}  // namespace

TEST_CASE("pictures: a PNG encoded through libpng decodes to the same pixels, with the size in its header", "[app][png]") {
  Image img(7, 5, {10, 20, 30});
  img.set(0, 0, {255, 0, 0});
  img.set(6, 4, {0, 255, 0});
  img.fill(2, 1, 3, 2, {1, 2, 3});
  const std::string png = encode_png(img);
  REQUIRE(png.size() > 33);
  CHECK(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  CHECK(png.substr(12, 4) == "IHDR");
  CHECK(be32(png, 16) == 7);
  CHECK(be32(png, 20) == 5);
  int w = 0, h = 0;
  const auto px = decode(png, w, h);
  REQUIRE(w == 7);
  REQUIRE(h == 5);
  CHECK(px == img.pixels());
  CHECK(img.at(3, 2) == Rgb{1, 2, 3});
  CHECK(img.at(5, 2) == Rgb{10, 20, 30});
}

TEST_CASE("pictures: base64 gives RFC 4648's test vectors", "[app][png]") {
  CHECK(base64("") == "");
  CHECK(base64("f") == "Zg==");
  CHECK(base64("fo") == "Zm8=");
  CHECK(base64("foo") == "Zm9v");
  CHECK(base64("foob") == "Zm9vYg==");
  CHECK(base64("fooba") == "Zm9vYmE=");
  CHECK(base64("foobar") == "Zm9vYmFy");
  CHECK(base64(std::string("\xff\x00\x80", 3)) == "/wCA");
}

TEST_CASE("pictures: the colour scale tells within, over, non-finite and never written apart", "[app][png]") {
  CHECK(cell_class(0.0f) == CellClass::within);
  CHECK(cell_class(0.999f) == CellClass::within);
  CHECK(cell_class(1.0f) == CellClass::over);
  CHECK(cell_class(5e6f) == CellClass::over);
  CHECK(cell_class(kInf) == CellClass::nonfinite);
  CHECK(cell_class(kNaN) == CellClass::unwritten);
  // within: blue dominant, darker towards the bound; over: red dominant, darker with the ratio
  for (float r : {0.0f, 0.3f, 0.7f, 0.999f}) {
    const Rgb c = heat_color(r);
    CHECK(c.b > c.r);
  }
  for (float r : {1.0f, 3.0f, 30.0f, 300.0f, 1e5f}) {
    const Rgb c = heat_color(r);
    CHECK(c.r > c.b);
  }
  auto lum = [](Rgb c) { return 0.3 * c.r + 0.59 * c.g + 0.11 * c.b; };
  CHECK(lum(heat_color(0.0f)) > lum(heat_color(0.5f)));
  CHECK(lum(heat_color(0.5f)) > lum(heat_color(0.99f)));
  CHECK(lum(heat_color(1.0f)) > lum(heat_color(10.0f)));
  CHECK(lum(heat_color(10.0f)) > lum(heat_color(1000.0f)));
  // the step at the bound is large: 0.999 and 1.0 are not near colours
  const Rgb a = heat_color(0.999f), b = heat_color(1.0f);
  CHECK(std::abs(a.r - b.r) + std::abs(a.g - b.g) + std::abs(a.b - b.b) > 200);
  CHECK(heat_color(kNaN) != heat_color(kInf));
  CHECK(heat_color(kNaN) != heat_color(1000.0f));
  CHECK(heat_color(kInf) != heat_color(1000.0f));
  CHECK(css_color({0x0a, 0xb0, 0xff}) == "#0ab0ff");
  // the legend's axis: 40% for 0..1, the rest for 1..1000 (log), and back
  auto near = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); };
  CHECK(near(legend_fraction_of(1.0), 0.4));
  CHECK(near(legend_fraction_of(1000.0), 1.0));
  CHECK(near(legend_ratio_at(legend_fraction_of(0.25)), 0.25));
  CHECK(near(legend_ratio_at(legend_fraction_of(42.0)), 42.0));
  const Image bar = legend_bar(100, 2);
  CHECK(cell_class(1.0f) == CellClass::over);
  CHECK(bar.at(10, 0) == heat_color(static_cast<float>(legend_ratio_at(0.105))));
  CHECK(bar.at(39, 0).b > bar.at(39, 0).r);  // last within pixel
  CHECK(bar.at(41, 0).r > bar.at(41, 0).b);  // first over pixels
}

TEST_CASE("pictures: text is drawn inside its box, one 6-pixel advance per character", "[app][png]") {
  Image img(40, 12);
  const int end = img.text(1, 1, "T1", {0, 0, 0}, 1);
  CHECK(end == 1 + 12);
  CHECK(text_width("T1", 1) == 11);
  CHECK(text_width("T1", 2) == 22);
  CHECK(img.at(1, 1) == Rgb{0, 0, 0});        // T's bar starts at its first column
  CHECK(img.at(3, 7) == Rgb{0, 0, 0});        // its stem, bottom row
  CHECK(img.at(1, 7) == Rgb{255, 255, 255});  // nothing beside the stem
  int ink = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) {
      const bool inked = img.at(x, y) == Rgb{0, 0, 0};
      ink += inked;
      if (inked) {
        CHECK(x >= 1);
        CHECK(x < 12);
        CHECK(y >= 1);
        CHECK(y < 1 + text_height(1));
      }
    }
  CHECK(ink > 10);
  Image g(8, 12);
  g.text(0, 0, "g", {0, 0, 0}, 1);  // a descender reaches rows 7-8
  CHECK((g.at(1, 8) == Rgb{0, 0, 0} || g.at(2, 8) == Rgb{0, 0, 0} || g.at(3, 8) == Rgb{0, 0, 0}));
}

TEST_CASE("pictures: a panel stacks a side's requests, one pixel per bin, and the figure shows every class", "[app][png]") {
  std::vector<HeatMap> maps;
  maps.push_back(map_of(SideKind::decode, TensorKind::out, 1, 1, 4, {0.1f, 2.0f, kNaN, kInf}));
  maps.push_back(map_of(SideKind::decode, TensorKind::out, 0, 2, 4, {0, 0.5f, 0.9f, 0.2f, 0, 0, 0, 50.0f}));
  maps.push_back(map_of(SideKind::prefill, TensorKind::lse, 0, 3, 4, std::vector<float>(12, 0.25f)));
  const auto panels = panels_of(maps);
  REQUIRE(panels.size() == 2);
  CHECK(panels[0].side == SideKind::prefill);  // prefill first
  CHECK(panels[0].tensor() == "lse_p");
  CHECK(panels[1].tensor() == "out_d");
  CHECK(panels[1].row_bins == 3);
  REQUIRE(panels[1].maps.size() == 2);
  CHECK(panels[1].maps[0]->request == 0);  // in request order
  const Image cells = panel_cells(panels[1]);
  REQUIRE(cells.width() == 4);
  REQUIRE(cells.height() == 3);
  CHECK(cells.at(1, 0) == heat_color(0.5f));   // request 0, row 0
  CHECK(cells.at(3, 1) == heat_color(50.0f));  // request 0, row 1
  CHECK(cells.at(1, 2) == heat_color(2.0f));   // request 1
  CHECK(cells.at(2, 2) == heat_color(kNaN));
  CHECK(cells.at(3, 2) == heat_color(kInf));

  const Image fig = plot_figure(maps, {"a case", "profile intended"});
  int unwritten = 0, nonfinite = 0, over = 0;
  for (int y = 0; y < fig.height(); ++y)
    for (int x = 0; x < fig.width(); ++x) {
      unwritten += fig.at(x, y) == heat_color(kNaN);
      nonfinite += fig.at(x, y) == heat_color(kInf);
      over += fig.at(x, y) == heat_color(50.0f);
    }
  // each cell is drawn cell_width x cell_height pixels; the legend has a swatch of each non-finite colour
  const int cw = cell_width(panels[1]), ch = cell_height(panels[1]);
  CHECK(unwritten >= cw * ch);
  CHECK(nonfinite >= cw * ch);
  CHECK(over >= cw * ch - cw);  // a separator line may cross the cell
  int w = 0, h = 0;
  decode(encode_png(fig), w, h);
  CHECK(w == fig.width());
  CHECK(h == fig.height());
}
