# SPDX-License-Identifier: Apache-2.0
"""Writes the SystemVerilog side of the spec.

`render_sv` is rtl/pkg/psm_pkg.sv: package psm_pkg with the widths, limits and named
configurations as localparams, the enums (mem_e, opcode_e, op_class_e, error_e), the
_LSB/_WIDTH localparams of every field and one packed struct per opcode. `render_sv_check`
is the psm_pkg_check module that decodes every opcode both ways, for lint and a Yosys proof.
"""

from __future__ import annotations

from .common import (CONFIG_DIMS, GENERATED_LINE, MEM_ID_BITS, assemble, bits, camel, clog2,
                     opcode_fields, sv_const, with_gaps, word_elems, wrap)


def sv_banner(title: str) -> list[str]:
    """A framed section banner, like those of the hand-written RTL."""
    rule = "  " + "/" * (len(title) + 6)
    return ["", rule, f"  // {title} //", rule]


def sv_int(name: str, value: int, doc: str | None = None) -> list[str]:
    """`localparam int NAME = value;` with an optional comment line above."""
    lines = wrap(doc, "  // ") if doc else []
    return lines + [f"  localparam int {name} = {value};"]


def sv_enum(type_name: str, width: int, prefix: str, items: list[dict], key: str) -> list[str]:
    """A typedef enum with explicit widths and values."""
    lines = [f"  typedef enum logic [{width - 1}:0] {{"]
    for index, item in enumerate(items):
        comma = "," if index + 1 < len(items) else ""
        lines += wrap(item["doc"], "    // ")
        lines.append(f"    {prefix}{camel(item['name'])} = {width}'d{item[key]}{comma}")
    return lines + [f"  }} {type_name};"]


def sv_fields(prefix: str, fields: list[dict]) -> list[str]:
    """`<PREFIX>_<FIELD>_LSB` and `_WIDTH` localparams."""
    lines = []
    for field in fields:
        name = sv_const(prefix, field["name"])
        lines.append(f"  localparam int {name}_LSB = {field['lsb']};")
        lines.append(f"  localparam int {name}_WIDTH = {field['width']};")
    return lines


def sv_struct(type_name: str, fields: list[dict], total: int) -> list[str]:
    """A packed struct covering `total` bits, MSB first, with reserved gaps."""
    lines = [f"  typedef struct packed {{"]
    for field in with_gaps(fields, total):
        width = "" if field["width"] == 1 else f" [{field['width'] - 1}:0]"
        decl = f"    logic{width} {field['name']};"
        lines.append(f"{decl:<40}// {bits(field)}")
    return lines + [f"  }} {type_name};"]


def sv_widths_and_limits(spec: dict) -> list[str]:
    """Widths and limits as `localparam int`."""
    lines = sv_banner("Widths")
    for width in spec["widths"]:
        lines += sv_int(sv_const(width["name"]), width["value"], width["doc"])
    lines += sv_banner("Limits")
    for item in spec["limits"]:
        lines += sv_int(sv_const(item["name"]), item["value"], item["doc"])
    return lines


def sv_memories(spec: dict) -> list[str]:
    """The `mem_e` DMA ids, element widths and the parameter-entry layout."""
    lines = sv_banner("Memories")
    lines += ["  // DMA-addressable memories (the `mem` field of DMA_LOAD / DMA_STORE)."]
    dma = [dict(m, doc=m["name"]) for m in spec["memories"] if m["id"] is not None]
    lines += sv_enum("mem_e", MEM_ID_BITS, "Mem", dma, "id")
    lines.append("  // Element width of each memory in bits; a word holds WORD_ELEMS elements.")
    for mem in spec["memories"]:
        lines += sv_int(sv_const(mem["name"], "elem_width"), mem["elem_bits"])
    lines += ["", "  // Parameter-memory entry (64 bits) holding a Requant step."]
    lines += sv_fields("param", spec["param_format"])
    return lines


def sv_configs(spec: dict) -> list[str]:
    """`<CONFIG>_<NAME>` localparams for every named configuration."""
    lines = sv_banner("Named configurations")
    for cfg in spec["configs"]:
        lines += [""] + wrap(f"{cfg['name']}: {cfg['doc']}", "  // ")
        for dim in CONFIG_DIMS:
            lines += sv_int(sv_const(cfg["name"], dim), cfg[dim])
        for mem in spec["memories"]:
            depth = cfg["depths"][mem["name"]]
            word = word_elems(mem, cfg) * mem["elem_bits"]
            lines += sv_int(sv_const(cfg["name"], mem["name"], "depth"), depth)
            lines += sv_int(sv_const(cfg["name"], mem["name"], "addr_width"), clog2(depth))
            lines += sv_int(sv_const(cfg["name"], mem["name"], "word_width"), word)
    return lines


def sv_instruction(spec: dict) -> list[str]:
    """Header fields, `opcode_e`, `op_class_e`, and per opcode its fields and struct."""
    ins = spec["instruction"]
    header = {f["name"]: f for f in ins["header_fields"]}
    lines = sv_banner("Instructions")
    lines += sv_int("INSTR_WIDTH", ins["width"], "fixed-size instructions (bits)")
    lines += sv_int("INSTR_WORDS", ins["width"] // ins["word_width"], "32-bit words each")
    lines += ["  // Header fields, the same in every instruction."]
    lines += sv_fields("instr", ins["header_fields"])
    lines += sv_enum("opcode_e", header["opcode"]["width"], "Op",
                     [dict(o, doc=o["doc"].split(";")[0]) for o in ins["opcodes"]], "value")
    lines += sv_enum("op_class_e", header["op_class"]["width"], "OpClass", ins["op_classes"],
                     "value")
    for op in ins["opcodes"]:
        if not op["fields"]:
            continue
        lines += [""] + wrap(f"{op['name'].upper()} operands (see docs/isa.md).", "  // ")
        lines += sv_fields(op["name"], op["fields"])
        lines += sv_struct(f"{op['name']}_instr_t", opcode_fields(spec, op), ins["width"])
    return lines


def sv_registers(spec: dict) -> list[str]:
    """Register offsets, their fields and the `error_e` codes."""
    regs = spec["registers"]
    aw = regs["addr_width"]
    lines = sv_banner("Host registers")
    lines += sv_int("REG_ADDR_WIDTH", aw, "register byte offsets")
    lines += sv_int("REG_DATA_WIDTH", regs["data_width"])
    for reg in regs["list"]:
        lines += wrap(f"{reg['name'].upper()} ({reg['access']}): {reg['doc']}", "  // ")
        lines.append(f"  localparam logic [REG_ADDR_WIDTH-1:0] {sv_const('reg', reg['name'])}"
                     f" = {aw}'h{reg['offset']:02x};")
        lines += sv_fields(f"reg_{reg['name']}", reg["fields"])
    lines += ["  // STATUS.error values."]
    lines += sv_enum("error_e", 8, "Err", spec["errors"], "value")
    return lines


def sv_counters(spec: dict) -> list[str]:
    """Counter indices."""
    cnt = spec["counters"]
    n = len(cnt["list"])
    lines = sv_banner("Performance counters")
    lines += sv_int("CNT_INDEX_WIDTH", cnt["index_width"], "CNT_SEL.index")
    lines += sv_int("NUM_COUNTERS", n)
    for item in cnt["list"]:
        lines.append(f"  localparam logic [CNT_INDEX_WIDTH-1:0] {sv_const('cnt', item['name'])}"
                     f" = {cnt['index_width']}'d{item['index']};")
    return lines


def render_sv(spec: dict) -> str:
    """The complete rtl/pkg/psm_pkg.sv."""
    lines = [
        "// SPDX-License-Identifier: Apache-2.0",
        "// psm_pkg: Passim hardware constants, instruction encoding, registers and counters.",
        f"// {GENERATED_LINE}.",
        "// Use as psm_pkg::NAME (no `import`: Yosys 0.23 rejects it).",
        "package psm_pkg;",
    ]
    lines += sv_int("SPEC_VERSION", spec["version"], "read back by the VERSION register")
    sections = (sv_widths_and_limits, sv_memories, sv_configs, sv_instruction,
                sv_registers, sv_counters)
    return assemble(lines, sections, spec, ["", "endpackage : psm_pkg", ""])


def render_sv_check(spec: dict) -> str:
    """A module that decodes every opcode both through its packed struct and through the
    _LSB/_WIDTH localparams; `mismatch_o` is constant 0 when the two agree (Yosys `sat`)."""
    ops = [op for op in spec["instruction"]["opcodes"] if op["fields"]]
    total = spec["instruction"]["width"]
    lines = ["// SPDX-License-Identifier: Apache-2.0",
             "// psm_pkg_check: struct layouts of psm_pkg equal its _LSB/_WIDTH localparams.",
             f"// {GENERATED_LINE}.",
             "module psm_pkg_check (",
             f"  input  logic [{total - 1}:0] instr_i,",
             "  output logic         is_matmul_o,",
             "  output logic         mismatch_o",
             ");"]
    terms = []
    for op in ops:
        name = op["name"]
        lines += [f"  psm_pkg::{name}_instr_t {name};", f"  assign {name} = instr_i;"]
        for field in with_gaps(opcode_fields(spec, op), total):
            if field["name"].startswith("rsvd_"):
                ref = f"instr_i[{bits(field)[1:-1]}]"
            elif field in op["fields"]:
                ref = f"instr_i[psm_pkg::{sv_const(name, field['name'])}_LSB +: " \
                      f"psm_pkg::{sv_const(name, field['name'])}_WIDTH]"
            else:
                ref = f"instr_i[psm_pkg::{sv_const('instr', field['name'])}_LSB +: " \
                      f"psm_pkg::{sv_const('instr', field['name'])}_WIDTH]"
            terms.append(f"({name}.{field['name']} != {ref})")
    lines.append("  assign is_matmul_o = instr_i[7:0] == psm_pkg::OpMatmul;")
    lines.append("  assign mismatch_o = " + "\n      | ".join(terms) + ";")
    lines += ["endmodule : psm_pkg_check", ""]
    return "\n".join(lines)
