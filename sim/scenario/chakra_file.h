#pragma once
// One Chakra execution-trace file decoded (docs/chakra.md): the length-delimited
// GlobalMetadata message, then length-delimited Node messages, as Chakra's
// protolib writes them; and typed access to a node's attributes. Every error is
// a ScenarioError naming the file, the byte offset or node id, and what was
// expected.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/chakra_et_def.pb.h"

namespace trainsim::scenario::chakra {

struct DecodedFile {
  std::string file;  // for messages
  ChakraProtoMsg::GlobalMetadata metadata;
  std::vector<ChakraProtoMsg::Node> nodes;  // in file order
};

// Throws ScenarioError: a length cut off (truncated varint) or longer than the
// rest of the file, a message that is not a GlobalMetadata (first) or a Node
// (its field numbers and wire types do not match Chakra's), a missing version.
DecodedFile decode_file(std::string_view bytes, const std::string& file);

// The attributes of a node or of the metadata, read by name with their type
// checked; `where` ("node 17", "GlobalMetadata") goes into messages.
class AttributeReader {
 public:
  AttributeReader(const google::protobuf::RepeatedPtrField<ChakraProtoMsg::AttributeProto>& attrs, std::string file,
                  std::string where);
  [[nodiscard]] bool has(std::string_view name) const { return find(name) != nullptr; }
  // Any integer type (int32, int64, uint32, uint64) or a bool.
  [[nodiscard]] std::optional<long long> integer(std::string_view name) const;
  // A double, a float or an integer.
  [[nodiscard]] std::optional<double> real(std::string_view name) const;
  [[nodiscard]] std::optional<bool> flag(std::string_view name) const;
  [[nodiscard]] std::optional<std::string> text(std::string_view name) const;
  [[nodiscard]] std::optional<std::vector<long long>> integers(std::string_view name) const;
  [[nodiscard]] std::optional<std::vector<double>> reals(std::string_view name) const;
  // The same, required: a missing attribute is an error saying `why` it is needed.
  [[nodiscard]] long long need_integer(std::string_view name, std::string_view why) const;
  [[nodiscard]] double need_real(std::string_view name, std::string_view why) const;
  [[nodiscard]] bool need_flag(std::string_view name, std::string_view why) const;
  [[nodiscard]] std::vector<long long> need_integers(std::string_view name, std::string_view why) const;
  [[nodiscard]] std::vector<double> need_reals(std::string_view name, std::string_view why) const;
  // An integer in [0, max]: an enum's value.
  [[nodiscard]] long long need_enum(std::string_view name, long long max, std::string_view why) const;
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& where() const { return where_; }

 private:
  [[nodiscard]] const ChakraProtoMsg::AttributeProto* find(std::string_view name) const;
  [[noreturn]] void wrong_type(std::string_view name, std::string_view expected) const;
  [[noreturn]] void missing(std::string_view name, std::string_view why) const;
  const google::protobuf::RepeatedPtrField<ChakraProtoMsg::AttributeProto>& attrs_;
  std::string file_;
  std::string where_;
};

// Chakra's name of a node type ("COMP_NODE"), or "type N" for a number it does not define.
std::string node_type_name(int type);

}  // namespace trainsim::scenario::chakra
