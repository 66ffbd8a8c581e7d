#pragma once
// Output files are written to a temporary file beside the target and renamed
// over it, so a reader never sees a half-written file and a failure leaves the
// previous file intact.
#include <filesystem>
#include <functional>
#include <ostream>
#include <stdexcept>

namespace trainsim::io {

class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws OutputError naming the file and the reason.
void write_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

}  // namespace trainsim::io
