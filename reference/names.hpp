// One way to name the values of an enum: a table of (value, name) pairs gives both directions, and an
// unknown name is refused with the choices listed. Every enum that appears in files, ids, reports or options
// (dtypes, layouts, masks, statuses, policies, profiles, ...) is named through one of these tables.
//   inline constexpr NameTable<Layout, 2> kLayoutNames{"KV layout", {{{Layout::NHD, "NHD"}, {Layout::HND, "HND"}}}};
//   kLayoutNames.name(Layout::HND) == "HND";  kLayoutNames.parse("nhd") throws "unknown KV layout 'nhd' (expected NHD or HND)"
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace podcheck {

// A value from a file or a command line as a message quotes it: at most `shown` characters, then "... (N bytes)"
// (a file's 20 MB attribute once became a 20 MB error line).
inline std::string excerpt(std::string_view s, std::size_t shown = 96) {
  if (s.size() <= shown) return std::string(s);
  return std::string(s.substr(0, shown)) + "... (" + std::to_string(s.size()) + " bytes)";
}

template <class E, std::size_t N>
struct NameTable {
  std::string_view what;  // what the values are, for messages ("KV layout")
  std::array<std::pair<E, std::string_view>, N> entries;

  constexpr std::string_view name(E e) const {
    for (const auto& [v, n] : entries)
      if (v == e) return n;
    return "?";
  }
  constexpr std::optional<E> find(std::string_view s) const {
    for (const auto& [v, n] : entries)
      if (n == s) return v;
    return std::nullopt;
  }
  // "NHD or HND", "a, b or c"
  std::string choices() const {
    std::string out;
    for (std::size_t i = 0; i < N; ++i) {
      if (i) out += i + 1 == N ? " or " : ", ";
      out += entries[i].second;
    }
    return out;
  }
  // Throws std::invalid_argument("unknown <what> '<s>' (expected <choices>)"), <s> as excerpt() shows it.
  E parse(std::string_view s) const {
    if (auto e = find(s)) return *e;
    throw std::invalid_argument("unknown " + std::string(what) + " '" + excerpt(s) + "' (expected " + choices() + ")");
  }
  constexpr std::size_t size() const { return N; }
};

}  // namespace podcheck
