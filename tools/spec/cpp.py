# SPDX-License-Identifier: Apache-2.0
"""Writes runtime/include/passim/hw/spec.hpp: namespace passim::hw with the widths and
limits as constants, the memories, the named configurations (HwConfig, find_config), the
instruction encoding (Opcode, OpClass, Unit, their lookups, every Field and the
set_field/get_field/make_instr helpers), the register map, the error codes and the counters.
"""

from __future__ import annotations

import json

from .common import CONFIG_DIMS, assemble, GENERATED_LINE, bits, cpp_const, wrap


def cpp_value(type_name: str, name: str, value: int, doc: str | None) -> list[str]:
    """`inline constexpr <type> <name> = value;` with a doc line above."""
    lines = wrap(doc, "/// ") if doc else []
    return lines + [f"inline constexpr {type_name} {name} = {value};"]


def cpp_enum(type_name: str, base: str, items: list[dict], key: str) -> list[str]:
    """`enum class` with explicit values and one doc line per enumerator."""
    lines = [f"enum class {type_name} : {base} {{"]
    for item in items:
        lines += wrap(item["doc"], "  /// ")
        lines.append(f"  {cpp_const(item['name'])} = {item[key]},")
    return lines + ["};"]


def cpp_fields(fields: list[dict]) -> list[str]:
    """`inline constexpr Field kName{lsb, width};` lines."""
    lines = []
    for field in fields:
        lines += wrap(f"{bits(field)} {field['doc']}", "/// ")
        lines.append(f"inline constexpr Field {cpp_const(field['name'])}"
                     f"{{{field['lsb']}, {field['width']}}};")
    return lines


def cpp_switch(func: str, ret: str, items: list[tuple[str, str]], fallback: str) -> list[str]:
    """A constexpr function mapping each Opcode / Counter to a value."""
    arg_type = items[0][0].split("::")[0]
    lines = [f"[[nodiscard]] constexpr {ret} {func}({arg_type} v) noexcept {{",
             "  switch (v) {"]
    for case, value in items:
        lines += [f"    case {case}:", f"      return {value};"]
    return lines + ["  }", f"  return {fallback};", "}"]


def cpp_string(text: str, indent: int = 13, width: int = 100) -> str:
    """A C++ string literal of `text`, split into adjacent literals on lines of at most
    `width` columns (continuation lines indented by `indent`) after `return ` at column 6."""
    words, parts, cur = text.split(" "), [], ""
    room = width - indent - 3  # the quotes and the `;` of the last line
    for w in words:
        if cur and len(cur) + 1 + len(w) > room:
            parts.append(cur + " ")
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    parts.append(cur)
    return ("\n" + " " * indent).join(json.dumps(p) for p in parts)


def cpp_widths_and_limits(spec: dict) -> list[str]:
    """Widths as `int`, limits as `std::size_t` (or `int` for a `_width`)."""
    lines = ["", "// Widths (bits) and fixed-point formats. Those that also exist in the runtime",
             "// (fixed_point.hpp, quant_model.hpp) are checked equal by tools/gen_spec.py."]
    for width in spec["widths"]:
        lines += cpp_value("int", cpp_const(width["name"]), width["value"], width["doc"])
    lines += ["", "// Limits: any configuration within them must work."]
    for item in spec["limits"]:
        kind = "int" if item["name"].endswith("_width") else "std::size_t"
        lines += cpp_value(kind, cpp_const(item["name"]), item["value"], item["doc"])
    return lines


def cpp_memories(spec: dict) -> list[str]:
    """`enum class Mem` and the element widths."""
    lines = ["", "/// DMA-addressable memories (the `mem` field of DMA_LOAD / DMA_STORE)."]
    dma = [m for m in spec["memories"] if m["id"] is not None]
    lines += cpp_enum("Mem", "std::uint8_t", dma, "id")
    lines += ["", "// Element width of each memory in bits."]
    for mem in spec["memories"]:
        lines += cpp_value("int", cpp_const(mem["name"], "elem_width"), mem["elem_bits"],
                           mem["doc"])
    return lines


def cpp_configs(spec: dict) -> list[str]:
    """`struct HwConfig`, one constant per named configuration and `find_config`."""
    depth_names = [f"{m['name']}_depth" for m in spec["memories"]]
    lines = ["", "/// A hardware configuration: array and vector sizes, memory depths (entries).",
             "struct HwConfig {", "  std::string_view name;"]
    lines += [f"  std::size_t {n} = 0;" for n in CONFIG_DIMS]
    lines += [f"  std::size_t {n} = 0;" for n in depth_names]
    lines += ["  /// Multiply-accumulate units of the systolic array (R * C).",
              "  [[nodiscard]] constexpr std::size_t macs() const noexcept { return array_rows * "
              "array_cols; }",
              "};"]
    for cfg in spec["configs"]:
        lines += [""] + wrap(f"`{cfg['name']}`: {cfg['doc']}", "/// ")
        lines.append(f"inline constexpr HwConfig {cpp_const(cfg['name'])}{{")
        lines.append(f"    .name = \"{cfg['name']}\",")
        for dim in CONFIG_DIMS:
            lines.append(f"    .{dim} = {cfg[dim]},")
        for mem in spec["memories"]:
            lines.append(f"    .{mem['name']}_depth = {cfg['depths'][mem['name']]},")
        lines.append("};")
    names = ", ".join(cpp_const(c["name"]) for c in spec["configs"])
    lines += ["", "/// Every named configuration.",
              f"inline constexpr std::array<HwConfig, {len(spec['configs'])}> kConfigs{{{names}}};",
              "",
              "/// The named configuration `name` (\"tiny\", ...), or nullptr if there is none.",
              "[[nodiscard]] constexpr const HwConfig* find_config(std::string_view name) "
              "noexcept {",
              "  for (const HwConfig& cfg : kConfigs) {",
              "    if (cfg.name == name) {", "      return &cfg;", "    }", "  }",
              "  return nullptr;", "}"]
    return lines


def cpp_instruction(spec: dict) -> list[str]:
    """`Instr`, `Field`, the opcode and op-class enums, their lookups and all fields."""
    ins = spec["instruction"]
    ops = ins["opcodes"]
    lines = ["", "// Instructions: fixed 128-bit, four 32-bit little-endian words; word i holds",
             "// bits [32*i+31:32*i]. No field crosses a word boundary."]
    lines += cpp_value("int", "kInstrWidth", ins["width"], None)
    lines += cpp_value("int", "kInstrWords", ins["width"] // ins["word_width"], None)
    lines += ["/// One instruction as the controller reads it.",
              "using Instr = std::array<std::uint32_t, kInstrWords>;", "",
              "/// A bit field of an instruction, register or parameter entry.",
              "struct Field {", "  int lsb = 0;", "  int width = 0;", "};", "",
              "/// Instruction opcodes (docs/isa.md has each one's operands)."]
    lines += cpp_enum("Opcode", "std::uint8_t", [dict(o, doc=o["doc"].split(";")[0])
                                                 for o in ops], "value")
    lines += ["", "/// Op classes: which class-of-op counters an instruction feeds."]
    lines += cpp_enum("OpClass", "std::uint8_t", ins["op_classes"], "value")
    units = [{"name": u, "value": i, "doc": f"the {u} unit"} for i, u in enumerate(ins["units"])]
    lines += ["", "/// The unit that executes an opcode."]
    lines += cpp_enum("Unit", "std::uint8_t", units, "value")
    lines += ["", "/// The op class the compiler tags an opcode with by default."]
    lines += cpp_switch("default_op_class", "OpClass",
                        [(f"Opcode::{cpp_const(o['name'])}",
                          f"OpClass::{cpp_const(o['op_class'])}") for o in ops],
                        "OpClass::kControl")
    lines += ["", "/// The unit that executes `v`."]
    lines += cpp_switch("unit_of", "Unit", [(f"Opcode::{cpp_const(o['name'])}",
                                             f"Unit::{cpp_const(o['unit'])}") for o in ops],
                        "Unit::kControl")
    lines += ["", "/// The assembler name of `v` (\"MATMUL\", ...), or \"?\" if unknown."]
    lines += cpp_switch("opcode_name", "std::string_view",
                        [(f"Opcode::{cpp_const(o['name'])}", f"\"{o['name'].upper()}\"")
                         for o in ops], "\"?\"")
    lines += ["", "namespace fields {", "// Header fields, the same in every instruction."]
    lines += cpp_fields(ins["header_fields"])
    for op in ops:
        if op["fields"]:
            lines += ["", f"/// {op['name'].upper()} operands.", f"namespace {op['name']} {{"]
            lines += cpp_fields(op["fields"]) + [f"}}  // namespace {op['name']}"]
    lines += ["", "/// Parameter-memory entry (64 bits) holding a Requant step.",
              "namespace param {"] + cpp_fields(spec["param_format"])
    lines += ["}  // namespace param", "}  // namespace fields"]
    return lines + cpp_field_access()


def cpp_field_access() -> list[str]:
    """set_field / get_field / make_instr helpers (fields never cross a 32-bit word)."""
    return [
        "",
        "/// Mask of a field's width, in the low bits.",
        "[[nodiscard]] constexpr std::uint32_t field_mask(Field f) noexcept {",
        "  return f.width >= 32 ? 0xFFFF'FFFFu : ((std::uint32_t{1} << f.width) - 1u);",
        "}",
        "",
        "/// Writes the low `f.width` bits of `value` into field `f` of `instr`.",
        "constexpr void set_field(Instr& instr, Field f, std::uint32_t value) noexcept {",
        "  const auto word = static_cast<std::size_t>(f.lsb / 32);",
        "  const int shift = f.lsb % 32;",
        "  const std::uint32_t mask = field_mask(f) << shift;",
        "  instr[word] = (instr[word] & ~mask) | ((value << shift) & mask);",
        "}",
        "",
        "/// Reads field `f` of `instr`.",
        "[[nodiscard]] constexpr std::uint32_t get_field(const Instr& instr, Field f) noexcept {",
        "  const auto word = static_cast<std::size_t>(f.lsb / 32);",
        "  return (instr[word] >> (f.lsb % 32)) & field_mask(f);",
        "}",
        "",
        "/// An instruction with only its header set; the op class defaults to the opcode's.",
        "[[nodiscard]] constexpr Instr make_instr(Opcode op, std::uint32_t layer) noexcept {",
        "  Instr instr{};",
        "  set_field(instr, fields::kOpcode, static_cast<std::uint32_t>(op));",
        "  set_field(instr, fields::kLayer, layer);",
        "  set_field(instr, fields::kOpClass, static_cast<std::uint32_t>(default_op_class(op)));",
        "  return instr;",
        "}",
    ]


def cpp_registers(spec: dict) -> list[str]:
    """`namespace reg` (offsets and fields) and `enum class ErrorCode`."""
    regs = spec["registers"]
    lines = ["", "/// Host registers: 32-bit, at these byte offsets.", "namespace reg {"]
    for reg in regs["list"]:
        lines += cpp_value("std::uint32_t", cpp_const(reg["name"]), f"0x{reg['offset']:02X}",
                           f"{reg['name'].upper()} ({reg['access']}): {reg['doc']}")
    for reg in regs["list"]:
        for field in reg["fields"]:
            lines += wrap(f"{reg['name'].upper()}{bits(field)} {field['doc']}", "/// ")
            lines.append(f"inline constexpr Field {cpp_const(reg['name'], field['name'])}"
                         f"{{{field['lsb']}, {field['width']}}};")
    lines += ["}  // namespace reg", "", "/// STATUS.error values."]
    return lines + cpp_enum("ErrorCode", "std::uint8_t", spec["errors"], "value")


def cpp_counters(spec: dict) -> list[str]:
    """`enum class Counter` and `kNumCounters`."""
    cnt = spec["counters"]["list"]
    lines = ["", "/// Performance counter indices (CNT_SEL.index)."]
    lines += cpp_enum("Counter", "std::uint8_t", cnt, "index")
    lines += cpp_value("std::size_t", "kNumCounters", len(cnt), "number of counters")
    lines += ["", "/// The counter's name in spec/passim.json (\"total_cycles\", ...)."]
    lines += cpp_switch("counter_name", "std::string_view",
                        [(f"Counter::{cpp_const(c['name'])}", json.dumps(c["name"])) for c in cnt],
                        '""')
    lines += ["", "/// The counter's one-line definition in spec/passim.json."]
    lines += cpp_switch("counter_doc", "std::string_view",
                        [(f"Counter::{cpp_const(c['name'])}", cpp_string(c["doc"]))
                         for c in cnt], '""')
    return lines


def render_hpp(spec: dict) -> str:
    """The complete runtime/include/passim/hw/spec.hpp."""
    lines = [
        "// SPDX-License-Identifier: Apache-2.0",
        "/// \\file Passim hardware facts: widths, limits, configs, ISA, registers, counters.",
        f"/// {GENERATED_LINE}.",
        "#pragma once",
        "",
        "#include <array>",
        "#include <cstddef>",
        "#include <cstdint>",
        "#include <string_view>",
        "",
        "namespace passim::hw {",
        "",
    ]
    lines += cpp_value("int", "kSpecVersion", spec["version"], "read back by `reg::kVersion`")
    sections = (cpp_widths_and_limits, cpp_memories, cpp_configs, cpp_instruction,
                cpp_registers, cpp_counters)
    return assemble(lines, sections, spec, ["", "}  // namespace passim::hw", ""])
