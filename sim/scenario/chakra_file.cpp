#include "scenario/chakra_file.h"

#include <array>
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include "scenario/errors.h"

namespace trainsim::scenario::chakra {

namespace {

using google::protobuf::internal::WireFormatLite;
using Wire = WireFormatLite::WireType;

// The wire types a message's fields may take (et_def.proto; a repeated scalar
// may come packed or not). Field numbers beyond the list are left to newer
// schemas and skipped; a known number with another wire type means the bytes
// are some other message.
struct FieldRule {
  int number;
  Wire wire;
  Wire packed;  // the same as wire when there is no other form
};
constexpr std::array<FieldRule, 2> kMetadataFields{{
    {1, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, WireFormatLite::WIRETYPE_LENGTH_DELIMITED},  // version
    {2, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, WireFormatLite::WIRETYPE_LENGTH_DELIMITED},  // attr
}};
constexpr std::array<FieldRule, 10> kNodeFields{{
    {1, WireFormatLite::WIRETYPE_VARINT, WireFormatLite::WIRETYPE_VARINT},                     // id
    {2, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, WireFormatLite::WIRETYPE_LENGTH_DELIMITED},  // name
    {3, WireFormatLite::WIRETYPE_VARINT, WireFormatLite::WIRETYPE_VARINT},                     // type
    {4, WireFormatLite::WIRETYPE_VARINT, WireFormatLite::WIRETYPE_LENGTH_DELIMITED},           // ctrl_deps
    {5, WireFormatLite::WIRETYPE_VARINT, WireFormatLite::WIRETYPE_LENGTH_DELIMITED},           // data_deps
    {6, WireFormatLite::WIRETYPE_VARINT, WireFormatLite::WIRETYPE_VARINT},                     // start_time_micros
    {7, WireFormatLite::WIRETYPE_VARINT, WireFormatLite::WIRETYPE_VARINT},                     // duration_micros
    {8, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, WireFormatLite::WIRETYPE_LENGTH_DELIMITED},  // inputs
    {9, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, WireFormatLite::WIRETYPE_LENGTH_DELIMITED},  // outputs
    {10, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, WireFormatLite::WIRETYPE_LENGTH_DELIMITED},  // attr
}};

// Empty when `bytes` read as a message of these fields; else what does not fit.
template <std::size_t N>
std::string misfit(const std::string& bytes, const std::array<FieldRule, N>& rules) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  for (;;) {
    const std::uint32_t tag = in.ReadTag();
    if (tag == 0) return in.ConsumedEntireMessage() || in.CurrentPosition() == static_cast<int>(bytes.size())
                             ? ""
                             : "its bytes are not a protobuf message";
    const int number = WireFormatLite::GetTagFieldNumber(tag);
    const Wire wire = WireFormatLite::GetTagWireType(tag);
    for (const FieldRule& r : rules)
      if (r.number == number && wire != r.wire && wire != r.packed)
        return fmt::format("its field {} has wire type {}, where Chakra's has {}", number, static_cast<int>(wire),
                           static_cast<int>(r.wire));
    if (!WireFormatLite::SkipField(&in, tag)) return fmt::format("its field {} is cut off", number);
  }
}

}  // namespace

DecodedFile decode_file(std::string_view bytes, const std::string& file) {
  DecodedFile out;
  out.file = file;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  const auto size = static_cast<int>(bytes.size());
  for (long long index = 0; in.CurrentPosition() < size; ++index) {
    const int at = in.CurrentPosition();
    const std::string what = index == 0 ? "the GlobalMetadata message" : fmt::format("message {}", index);
    std::uint32_t length = 0;
    if (!in.ReadVarint32(&length))
      throw ScenarioError(file, fmt::format("byte {}", at),
                          fmt::format("the length of {} is cut off (a truncated varint); a Chakra ET file is "
                                      "length-delimited messages, each a varint length and the message",
                                      what));
    const int left = size - in.CurrentPosition();
    if (length > static_cast<std::uint32_t>(left))
      throw ScenarioError(file, fmt::format("byte {}", at),
                          fmt::format("{} claims {} bytes, the file has {} left (truncated?)", what, length, left));
    std::string message;
    in.ReadString(&message, static_cast<int>(length));
    const std::string bad = index == 0 ? misfit(message, kMetadataFields) : misfit(message, kNodeFields);
    const char* kind = index == 0 ? "GlobalMetadata" : "Node";
    if (!bad.empty())
      throw ScenarioError(file, fmt::format("byte {}", at),
                          fmt::format("{} is not a Chakra {} message: {}{}", what, kind, bad,
                                      index == 0 ? " (a Chakra ET file starts with its GlobalMetadata)" : ""));
    const bool parsed = index == 0 ? out.metadata.ParseFromString(message)
                                   : out.nodes.emplace_back().ParseFromString(message);
    if (!parsed)
      throw ScenarioError(file, fmt::format("byte {}", at), fmt::format("{} is not a valid Chakra {} message", what, kind));
  }
  if (bytes.empty()) throw ScenarioError(file, "", "the file is empty; expected a Chakra ET file (GlobalMetadata, then Nodes)");
  // Chakra's converter (src/converter/pytorch_converter.py) writes no version, only
  // attributes (schema, pid, time, start_ts, finish_ts); its generators and trainsim
  // write the version. A GlobalMetadata with neither is not one.
  if (out.metadata.version().empty() && out.metadata.attr_size() == 0)
    throw ScenarioError(file, "byte 0", "the GlobalMetadata is empty (no version, no attributes); expected a Chakra ET "
                                        "file, which starts with its GlobalMetadata (the converter writes attributes "
                                        "such as \"schema\", the generators version \"0.0.4\")");
  return out;
}

AttributeReader::AttributeReader(const google::protobuf::RepeatedPtrField<ChakraProtoMsg::AttributeProto>& attrs,
                                 std::string file, std::string where)
    : attrs_(attrs), file_(std::move(file)), where_(std::move(where)) {}

const ChakraProtoMsg::AttributeProto* AttributeReader::find(std::string_view name) const {
  for (const ChakraProtoMsg::AttributeProto& a : attrs_)
    if (a.name() == name) return &a;
  return nullptr;
}

void AttributeReader::wrong_type(std::string_view name, std::string_view expected) const {
  throw ScenarioError(file_, where_, fmt::format("attribute \"{}\": expected {}", name, expected));
}

void AttributeReader::missing(std::string_view name, std::string_view why) const {
  throw ScenarioError(file_, where_, fmt::format("attribute \"{}\" is missing; {}", name, why));
}

std::optional<long long> AttributeReader::integer(std::string_view name) const {
  const ChakraProtoMsg::AttributeProto* a = find(name);
  if (a == nullptr) return std::nullopt;
  using A = ChakraProtoMsg::AttributeProto;
  switch (a->value_case()) {
    case A::kInt64Val: return a->int64_val();
    case A::kInt32Val: return a->int32_val();
    case A::kUint32Val: return a->uint32_val();
    case A::kUint64Val:
      if (a->uint64_val() > static_cast<std::uint64_t>(std::numeric_limits<long long>::max()))
        wrong_type(name, "an integer below 2^63");
      return static_cast<long long>(a->uint64_val());
    case A::kBoolVal: return a->bool_val() ? 1 : 0;
    default: wrong_type(name, "an integer (int64_val, int32_val, uint64_val or uint32_val)");
  }
}

std::optional<double> AttributeReader::real(std::string_view name) const {
  const ChakraProtoMsg::AttributeProto* a = find(name);
  if (a == nullptr) return std::nullopt;
  using A = ChakraProtoMsg::AttributeProto;
  if (a->value_case() == A::kDoubleVal) return a->double_val();
  if (a->value_case() == A::kFloatVal) return a->float_val();
  if (a->value_case() == A::kUint64Val) return static_cast<double>(a->uint64_val());
  if (a->value_case() == A::kInt64Val || a->value_case() == A::kInt32Val || a->value_case() == A::kUint32Val)
    return static_cast<double>(*integer(name));
  wrong_type(name, "a number (double_val, float_val or an integer)");
}

std::optional<bool> AttributeReader::flag(std::string_view name) const {
  const ChakraProtoMsg::AttributeProto* a = find(name);
  if (a == nullptr) return std::nullopt;
  if (a->value_case() != ChakraProtoMsg::AttributeProto::kBoolVal) wrong_type(name, "a bool (bool_val)");
  return a->bool_val();
}

std::optional<std::string> AttributeReader::text(std::string_view name) const {
  const ChakraProtoMsg::AttributeProto* a = find(name);
  if (a == nullptr) return std::nullopt;
  if (a->value_case() != ChakraProtoMsg::AttributeProto::kStringVal) wrong_type(name, "a string (string_val)");
  return a->string_val();
}

std::optional<std::vector<long long>> AttributeReader::integers(std::string_view name) const {
  const ChakraProtoMsg::AttributeProto* a = find(name);
  if (a == nullptr) return std::nullopt;
  if (a->value_case() != ChakraProtoMsg::AttributeProto::kInt64List) wrong_type(name, "a list of integers (int64_list)");
  return std::vector<long long>(a->int64_list().values().begin(), a->int64_list().values().end());
}

std::optional<std::vector<double>> AttributeReader::reals(std::string_view name) const {
  const ChakraProtoMsg::AttributeProto* a = find(name);
  if (a == nullptr) return std::nullopt;
  if (a->value_case() != ChakraProtoMsg::AttributeProto::kDoubleList) wrong_type(name, "a list of numbers (double_list)");
  return std::vector<double>(a->double_list().values().begin(), a->double_list().values().end());
}

long long AttributeReader::need_integer(std::string_view name, std::string_view why) const {
  if (const auto v = integer(name)) return *v;
  missing(name, why);
}

double AttributeReader::need_real(std::string_view name, std::string_view why) const {
  if (const auto v = real(name)) return *v;
  missing(name, why);
}

bool AttributeReader::need_flag(std::string_view name, std::string_view why) const {
  if (const auto v = flag(name)) return *v;
  missing(name, why);
}

std::vector<long long> AttributeReader::need_integers(std::string_view name, std::string_view why) const {
  if (auto v = integers(name)) return std::move(*v);
  missing(name, why);
}

std::vector<double> AttributeReader::need_reals(std::string_view name, std::string_view why) const {
  if (auto v = reals(name)) return std::move(*v);
  missing(name, why);
}

long long AttributeReader::need_enum(std::string_view name, long long max, std::string_view why) const {
  const long long v = need_integer(name, why);
  if (v < 0 || v > max) wrong_type(name, fmt::format("a value from 0 to {}, found {}", max, v));
  return v;
}

std::string node_type_name(int type) {
  if (ChakraProtoMsg::NodeType_IsValid(type)) return ChakraProtoMsg::NodeType_Name(static_cast<ChakraProtoMsg::NodeType>(type));
  return fmt::format("type {}", type);
}

}  // namespace trainsim::scenario::chakra
