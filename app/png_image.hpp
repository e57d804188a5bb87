// A small RGB raster for the pictures podcheck writes (heat maps for `podcheck plot` and for the HTML report's
// cells): filled rectangles, text in a built-in 5x7 pixel font (descenders 2 rows below), and PNG encoding
// through libpng.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace podcheck::app {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

class Image {
 public:
  Image(int width, int height, Rgb background = {255, 255, 255});
  int width() const { return width_; }
  int height() const { return height_; }
  Rgb at(int x, int y) const;
  void set(int x, int y, Rgb c);  // outside the image: ignored
  void fill(int x, int y, int w, int h, Rgb c);  // clipped to the image
  void frame(int x, int y, int w, int h, Rgb c);  // 1-pixel outline
  // Text in the 5x7 font, each font pixel `scale` x `scale`, top-left corner at (x, y); characters outside
  // printable ASCII are drawn as '?'. Returns the x just past the text.
  int text(int x, int y, std::string_view s, Rgb c, int scale = 1);
  const std::vector<std::uint8_t>& pixels() const { return rgb_; }  // row-major, 3 bytes per pixel

 private:
  int width_, height_;
  std::vector<std::uint8_t> rgb_;
};

// Width and height in pixels of `s` drawn by Image::text at `scale` (one line).
int text_width(std::string_view s, int scale = 1);
inline int text_height(int scale = 1) { return 9 * scale; }  // descenders included

// The image as a PNG file (8-bit RGB, no interlace), encoded by libpng. Throws std::runtime_error when libpng
// reports an error.
std::string encode_png(const Image& image);

// RFC 4648 base64 of `bytes` (for data: URIs).
std::string base64(std::string_view bytes);

}  // namespace podcheck::app
