#pragma once
// A small JSON pull parser that drives a SAX handler with the event names
// nlohmann::json uses (start_object, key, string, number_float, ...), written
// for speed on large timelines: no token buffer for numbers (std::from_chars),
// strings copied once into a reused buffer. Handles all of JSON (RFC 8259);
// numbers always arrive as doubles.
#include <charconv>
#include <cstddef>
#include <string>
#include <string_view>

namespace trainsim::gui {

template <class Handler>
class JsonSaxParser {
 public:
  JsonSaxParser(std::string_view text, Handler& h) : p_(text.data()), begin_(text.data()), end_(text.data() + text.size()), h_(h) {}

  // False on a syntax error (see error()) or when the handler stops.
  bool parse() {
    skip_ws();
    if (!value()) return false;
    skip_ws();
    if (p_ != end_) return fail("unexpected text after the JSON value");
    return true;
  }
  const std::string& error() const { return error_; }

 private:
  bool fail(const char* what) {
    if (error_.empty()) error_ = std::string(what) + " at byte " + std::to_string(p_ - begin_);
    return false;
  }
  void skip_ws() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
      return fail("invalid literal");
    p_ += word.size();
    return true;
  }

  bool value() {
    if (p_ == end_) return fail("unexpected end of input");
    switch (*p_) {
      case '{': return object();
      case '[': return array();
      case '"':
        if (!string_token()) return false;
        return h_.string(buffer_) || fail("stopped by the reader");
      case 't': return literal("true") && h_.boolean(true);
      case 'f': return literal("false") && h_.boolean(false);
      case 'n': return literal("null") && h_.null();
      default: return number();
    }
  }

  bool object() {
    ++p_;
    if (!h_.start_object(std::size_t(-1))) return fail("stopped by the reader");
    skip_ws();
    if (p_ != end_ && *p_ == '}') {
      ++p_;
      return h_.end_object();
    }
    for (;;) {
      skip_ws();
      if (p_ == end_ || *p_ != '"') return fail("expected a key");
      if (!string_token()) return false;
      if (!h_.key(buffer_)) return fail("stopped by the reader");
      skip_ws();
      if (p_ == end_ || *p_ != ':') return fail("expected ':'");
      ++p_;
      skip_ws();
      if (!value()) return false;
      skip_ws();
      if (p_ == end_) return fail("unexpected end of input in an object");
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ == '}') {
        ++p_;
        return h_.end_object();
      }
      return fail("expected ',' or '}'");
    }
  }

  bool array() {
    ++p_;
    if (!h_.start_array(std::size_t(-1))) return fail("stopped by the reader");
    skip_ws();
    if (p_ != end_ && *p_ == ']') {
      ++p_;
      return h_.end_array();
    }
    for (;;) {
      skip_ws();
      if (!value()) return false;
      skip_ws();
      if (p_ == end_) return fail("unexpected end of input in an array");
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ == ']') {
        ++p_;
        return h_.end_array();
      }
      return fail("expected ',' or ']'");
    }
  }

  bool number() {
    const char* start = p_;
    if (p_ != end_ && *p_ == '-') ++p_;
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return fail("invalid value");
    double v = 0.0;
    const auto [ptr, ec] = std::from_chars(start, end_, v);
    if (ec != std::errc() && ec != std::errc::result_out_of_range) return fail("invalid number");
    p_ = ptr;
    return h_.number_float(v, empty_) || fail("stopped by the reader");
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  void append_utf8(unsigned cp) {
    if (cp < 0x80) {
      buffer_ += static_cast<char>(cp);
    } else if (cp < 0x800) {
      buffer_ += static_cast<char>(0xC0 | (cp >> 6));
      buffer_ += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      buffer_ += static_cast<char>(0xE0 | (cp >> 12));
      buffer_ += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      buffer_ += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      buffer_ += static_cast<char>(0xF0 | (cp >> 18));
      buffer_ += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      buffer_ += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      buffer_ += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool unicode_escape(unsigned& cp) {
    if (end_ - p_ < 4) return fail("invalid \\u escape");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      const int d = hex(*p_++);
      if (d < 0) return fail("invalid \\u escape");
      cp = cp * 16 + static_cast<unsigned>(d);
    }
    return true;
  }

  // Reads a string token (the opening quote at p_) into buffer_.
  bool string_token() {
    ++p_;
    buffer_.clear();
    for (;;) {
      const char* run = p_;
      while (p_ != end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20) ++p_;
      buffer_.append(run, static_cast<std::size_t>(p_ - run));
      if (p_ == end_) return fail("unterminated string");
      if (*p_ == '"') {
        ++p_;
        return true;
      }
      if (*p_ != '\\') return fail("control character in a string");
      ++p_;
      if (p_ == end_) return fail("unterminated string");
      const char c = *p_++;
      switch (c) {
        case '"': buffer_ += '"'; break;
        case '\\': buffer_ += '\\'; break;
        case '/': buffer_ += '/'; break;
        case 'b': buffer_ += '\b'; break;
        case 'f': buffer_ += '\f'; break;
        case 'n': buffer_ += '\n'; break;
        case 'r': buffer_ += '\r'; break;
        case 't': buffer_ += '\t'; break;
        case 'u': {
          unsigned cp = 0;
          if (!unicode_escape(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && end_ - p_ >= 6 && p_[0] == '\\' && p_[1] == 'u') {
            p_ += 2;
            unsigned low = 0;
            if (!unicode_escape(low)) return false;
            if (low < 0xDC00 || low >= 0xE000) return fail("invalid surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(cp);
          break;
        }
        default: return fail("invalid escape");
      }
    }
  }

  const char* p_;
  const char* begin_;
  const char* end_;
  Handler& h_;
  std::string buffer_;
  const std::string empty_;
  std::string error_;
};

}  // namespace trainsim::gui
