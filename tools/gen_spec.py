#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generates the hardware facts of spec/passim.json into SystemVerilog, C++ and Markdown.

spec/passim.json is the ONE source of hardware facts (DESIGN.md section 2). This tool validates
it and writes:

  rtl/pkg/psm_pkg.sv                    package psm_pkg (localparams, enums, instruction structs)
  runtime/include/passim/hw/spec.hpp    namespace passim::hw (constants, enums, HwConfig)
  docs/isa.md                           the tables between <!-- GENERATED:x --> markers

Usage:
  tools/gen_spec.py            regenerate the three files
  tools/gen_spec.py --check    exit 1 with a diff if a committed file differs from the spec
  tools/gen_spec.py --selftest show that --check and the validation catch broken inputs

Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# The generator's modules are the package tools/spec/, beside this script.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from spec.check import validate  # noqa: E402
from spec.common import (CONFIG_DIMS, DEFAULT_SPEC, GENERATED_LINE, HPP_OUT,  # noqa: E402
                         MD_OUT, ROOT, RUNTIME_INCLUDE, SV_OUT, SpecError, bits,
                         camel, cpp_const, opcode_fields, sv_const, with_gaps,
                         word_elems, wrap)
from spec.load import load_spec  # noqa: E402
from spec.sv import render_sv, render_sv_check  # noqa: E402


# ------------------------------------------------------------------------------------------
# C++ header
# ------------------------------------------------------------------------------------------

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
    lines += cpp_widths_and_limits(spec)
    lines += cpp_memories(spec)
    lines += cpp_configs(spec)
    lines += cpp_instruction(spec)
    lines += cpp_registers(spec)
    lines += cpp_counters(spec)
    lines += ["", "}  // namespace passim::hw", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# Markdown tables (docs/isa.md keeps its prose; only the marked blocks are generated)
# ------------------------------------------------------------------------------------------

def md_table(head: list[str], rows: list[list]) -> list[str]:
    """A Markdown table."""
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def md_widths(spec: dict) -> list[str]:
    rows = [[f"`{sv_const(w['name'])}`", f"`{cpp_const(w['name'])}`", w["value"], w["doc"]]
            for w in spec["widths"]]
    return md_table(["SV", "C++", "value", "meaning"], rows)


def md_limits(spec: dict) -> list[str]:
    rows = [[f"`{sv_const(x['name'])}`", x["value"], x["doc"]] for x in spec["limits"]]
    return md_table(["name", "value", "meaning"], rows)


def md_memories(spec: dict) -> list[str]:
    rows = [[m["name"], "-" if m["id"] is None else f"`Mem{camel(m['name'])}` = {m['id']}",
             m["elem_bits"], m["word_elems"], m["doc"]] for m in spec["memories"]]
    return md_table(["memory", "DMA id", "element bits", "elements per word", "contents"], rows)


def md_configs(spec: dict) -> list[str]:
    cfgs = spec["configs"]
    rows = [[f"`{d}`"] + [c[d] for c in cfgs] for d in CONFIG_DIMS]
    rows.append(["MACs (R x C)"] + [c["array_rows"] * c["array_cols"] for c in cfgs])
    for mem in spec["memories"]:
        rows.append([f"`{mem['name']}` depth (word bits)"] +
                    [f"{c['depths'][mem['name']]} ({word_elems(mem, c) * mem['elem_bits']})"
                     for c in cfgs])
    return md_table(["parameter"] + [f"`{c['name']}`" for c in cfgs], rows) + [""] + [
        f"- `{c['name']}`: {c['doc']}" for c in cfgs]


def md_header(spec: dict) -> list[str]:
    rows = [[f"`{f['name']}`", bits(f), f["width"], f["doc"]]
            for f in spec["instruction"]["header_fields"]]
    return md_table(["field", "bits", "width", "meaning"], rows)


def md_op_classes(spec: dict) -> list[str]:
    rows = [[c["value"], f"`OpClass{camel(c['name'])}`", c["doc"]]
            for c in spec["instruction"]["op_classes"]]
    return md_table(["value", "SV", "opcodes"], rows)


def md_opcodes(spec: dict) -> list[str]:
    rows = [[f"0x{o['value']:02x}", f"`{o['name'].upper()}`", o["unit"], o["op_class"],
             o["passes"]] for o in spec["instruction"]["opcodes"]]
    return md_table(["opcode", "name", "unit", "default op class", "passes"], rows)


def md_opcode_fields(spec: dict) -> list[str]:
    lines: list[str] = []
    for op in spec["instruction"]["opcodes"]:
        lines += [f"### {op['name'].upper()} (0x{op['value']:02x})", "",
                  f"`{op['name'].upper()}`: {op['doc']}.", ""]
        if not op["fields"]:
            lines += ["Header fields only.", ""]
            continue
        header = {h["name"] for h in spec["instruction"]["header_fields"]}
        lsb_first = reversed(with_gaps(opcode_fields(spec, op), spec["instruction"]["width"]))
        rows = [[f"`{f['name']}`", bits(f), f["width"], f["doc"]]
                for f in lsb_first if f["name"] not in header]
        lines += md_table(["field", "bits", "width", "meaning"], rows) + [""]
    return lines[:-1]


def md_params(spec: dict) -> list[str]:
    rows = [[f"`{f['name']}`", bits(f), f["doc"]] for f in spec["param_format"]]
    return md_table(["field", "bits", "meaning"], rows)


def md_registers(spec: dict) -> list[str]:
    rows = []
    for reg in spec["registers"]["list"]:
        fields = "<br>".join(f"{bits(f)} `{f['name']}`: {f['doc']}" for f in reg["fields"])
        rows.append([f"0x{reg['offset']:02x}", f"`{reg['name'].upper()}`", reg["access"],
                     reg["doc"], fields or "-"])
    return md_table(["offset", "register", "access", "meaning", "fields"], rows)


def md_errors(spec: dict) -> list[str]:
    rows = [[e["value"], f"`Err{camel(e['name'])}`", e["doc"]] for e in spec["errors"]]
    return md_table(["code", "SV", "meaning"], rows)


def md_counters(spec: dict) -> list[str]:
    rows = [[c["index"], f"`CNT_{c['name'].upper()}`", c["doc"]]
            for c in spec["counters"]["list"]]
    return md_table(["index", "name", "counts"], rows)


MD_SECTIONS = {
    "widths": md_widths, "limits": md_limits, "memories": md_memories, "configs": md_configs,
    "header": md_header, "op_classes": md_op_classes, "opcodes": md_opcodes,
    "opcode_fields": md_opcode_fields, "params": md_params, "registers": md_registers,
    "errors": md_errors, "counters": md_counters,
}
MD_BLOCK = re.compile(r"(<!-- GENERATED:(\w+) -->\n).*?(<!-- /GENERATED:\2 -->)", re.S)


def render_md(spec: dict, template: str) -> str:
    """`template` with every GENERATED block replaced by its table."""
    def block(match: re.Match) -> str:
        name = match.group(2)
        if name not in MD_SECTIONS:
            raise SpecError(f"docs/isa.md: unknown GENERATED block {name!r}")
        body = "\n".join(MD_SECTIONS[name](spec))
        return f"{match.group(1)}{body}\n{match.group(3)}"
    return MD_BLOCK.sub(block, template)


# ------------------------------------------------------------------------------------------
# Driver
# ------------------------------------------------------------------------------------------

def render_all(spec: dict) -> dict[Path, str]:
    """Every generated file, keyed by its path relative to the output root."""
    md_template = ROOT / MD_OUT
    if not md_template.exists():
        raise SpecError(f"{MD_OUT}: missing (it holds the prose and the GENERATED markers)")
    return {SV_OUT: render_sv(spec), HPP_OUT: render_hpp(spec),
            MD_OUT: render_md(spec, md_template.read_text(encoding="utf-8"))}


def check_outputs(outputs: dict[Path, str], out_dir: Path) -> int:
    """Prints a diff for every file that differs from `outputs`; returns how many differ."""
    stale = 0
    for rel, text in outputs.items():
        path = out_dir / rel
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old == text:
            continue
        stale += 1
        print(f"{rel} differs from spec (run tools/gen_spec.py to regenerate):")
        sys.stdout.writelines(difflib.unified_diff(
            old.splitlines(keepends=True), text.splitlines(keepends=True),
            f"{rel} (committed)", f"{rel} (from spec)", n=1))
    return stale


def write_outputs(outputs: dict[Path, str], out_dir: Path) -> None:
    """Writes every generated file that changed."""
    for rel, text in outputs.items():
        path = out_dir / rel
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {rel}")



def run(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    validate(spec, args.runtime_dir)
    if args.sv_check:
        args.sv_check.parent.mkdir(parents=True, exist_ok=True)
        args.sv_check.write_text(render_sv_check(spec), encoding="utf-8")
        return 0
    outputs = render_all(spec)
    if args.check:
        stale = check_outputs(outputs, args.out_dir)
        if stale:
            print(f"gen_spec: {stale} generated file(s) out of date", file=sys.stderr)
            return 1
        print("gen_spec: generated files match the spec")
        return 0
    write_outputs(outputs, args.out_dir)
    return 0


# ------------------------------------------------------------------------------------------
# Self-test: every check must be able to fail
# ------------------------------------------------------------------------------------------

def find(items: list[dict], name: str) -> dict:
    return next(item for item in items if item["name"] == name)


def mut_opcode_value(s: dict) -> None:
    find(s["instruction"]["opcodes"], "add")["value"] = 0x3F  # unused, so still valid


def mut_duplicate_opcode(s: dict) -> None:
    find(s["instruction"]["opcodes"], "add")["value"] = 0x30


def mut_overlap(s: dict) -> None:
    find(find(s["instruction"]["opcodes"], "matmul")["fields"], "k")["lsb"] = 100


def mut_cross_word(s: dict) -> None:
    find(find(s["instruction"]["opcodes"], "softmax")["fields"], "len")["lsb"] = 88


def mut_tiny_macs(s: dict) -> None:
    find(s["configs"], "tiny")["array_rows"] = 4


def mut_depth(s: dict) -> None:
    find(s["configs"], "small")["depths"]["vector"] = 3000


def mut_qk_bits(s: dict) -> None:
    find(s["widths"], "qk_bits")["value"] = 13


def mut_register(s: dict) -> None:
    find(s["registers"]["list"], "cnt_lo")["offset"] = 24


def mut_param_bias(s: dict) -> None:
    find(s["param_format"], "rq_bias")["width"] = 25


# (name, mutation, substring the validation error must contain)
SELFTEST_INVALID = [
    ("duplicate opcode", mut_duplicate_opcode, "opcodes.add.value: 48 is already used"),
    ("overlapping fields", mut_overlap, "opcodes.matmul.fields.k: bit 100 overlaps field 'm'"),
    ("field crosses a word", mut_cross_word, "opcodes.softmax.fields.len: bits [103:88] cross"),
    ("tiny over 8 MACs", mut_tiny_macs, "configs.tiny: 4x4 = 16 MACs exceeds max_macs 8"),
    ("depth not a power of two", mut_depth, "configs.small.depths.vector: 3000"),
    ("drift from the runtime", mut_qk_bits, "widths.qk_bits: spec says 13 but"),
    ("register offset reused", mut_register, "registers.cnt_lo.offset: 24 is already used"),
    ("param bias narrower than the runtime's", mut_param_bias,
     "param_format.rq_bias: 25 bits but widths.requant_bias_bits is 26"),
]


def run_self(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(Path(__file__).resolve()), *argv],
                          capture_output=True, text=True, check=False)


def write_spec(spec: dict, path: Path) -> Path:
    path.write_text(json.dumps(spec, indent=2), encoding="utf-8")
    return path


def selftest(spec_path: Path) -> int:
    """Runs the CLI on broken copies of the spec and outputs in a temp dir."""
    base = load_spec(spec_path)
    failures = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        out = tmp / "out"
        good = write_spec(base, tmp / "good.json")
        gen = run_self("--spec", str(good), "--out-dir", str(out))
        ok = run_self("--check", "--spec", str(good), "--out-dir", str(out))
        if gen.returncode or ok.returncode:
            failures.append(f"fresh output does not pass --check:\n{gen.stderr}{ok.stdout}")
        hpp = out / HPP_OUT
        hpp.write_text(hpp.read_text(encoding="utf-8") + "// hand edit\n", encoding="utf-8")
        edited = run_self("--check", "--spec", str(good), "--out-dir", str(out))
        if edited.returncode != 1 or "spec.hpp differs" not in edited.stdout:
            failures.append(f"--check missed a hand-edited spec.hpp:\n{edited.stderr}")
        changed = copy.deepcopy(base)
        mut_opcode_value(changed)
        stale = run_self("--check", "--spec", str(write_spec(changed, tmp / "changed.json")))
        if stale.returncode != 1 or "psm_pkg.sv differs" not in stale.stdout:
            failures.append(f"--check missed a changed opcode in the spec:\n{stale.stderr}")
        for name, mutate, expected in SELFTEST_INVALID:
            broken = copy.deepcopy(base)
            mutate(broken)
            result = run_self("--check", "--spec", str(write_spec(broken, tmp / "bad.json")))
            if result.returncode != 2 or expected not in result.stderr:
                failures.append(f"{name}: expected exit 2 and {expected!r}, got exit "
                                f"{result.returncode}:\n{result.stderr}")
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"gen_spec selftest: {3 + len(SELFTEST_INVALID) - len(failures)} passed, "
          f"{len(failures)} failed")
    return 1 if failures else 0


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC,
                        help="spec JSON (default: spec/passim.json)")
    parser.add_argument("--out-dir", type=Path, default=ROOT,
                        help="root that the generated paths are relative to (default: repo)")
    parser.add_argument("--runtime-dir", type=Path, default=RUNTIME_INCLUDE,
                        help="runtime headers to compare widths with (default: "
                             "runtime/include/passim)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="do not write; exit 1 with a diff if a generated file is stale")
    mode.add_argument("--selftest", action="store_true",
                      help="check that --check and the validation detect broken inputs")
    mode.add_argument("--sv-check", type=Path, metavar="FILE",
                      help="only write psm_pkg_check.sv (struct layouts vs localparams) to FILE")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    try:
        if args.selftest:
            return selftest(args.spec)
        return run(args)
    except SpecError as exc:
        print(f"gen_spec: invalid spec {args.spec}:", file=sys.stderr)
        for line in str(exc).splitlines():
            print(f"  {line}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
