#pragma once
// JSON text for the streamed writers (timeline and trace files hold millions of
// spans and are written without building a document). Plain C++, so the
// trainer and the harness use them without the simulator's libraries.
#include <cstdint>
#include <string>
#include <string_view>

namespace trainsim::io {

// `s` as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

// A double as fmt's "{}" writes it (the shortest text that reads back to the
// same bits; fixed notation for decimal exponents in [-4, 16), else d.ddde+XX),
// which every file of the simulator uses for its numbers. Not for NaN or
// infinities (JSON has none).
std::string json_number(double v);

// Nanoseconds as exact decimal seconds: 1500000001 -> "1.500000001".
std::string seconds_text(std::int64_t ns);

}  // namespace trainsim::io
