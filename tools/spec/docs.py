# SPDX-License-Identifier: Apache-2.0
"""Writes the Markdown tables of docs/isa.md.

The page keeps its hand-written prose; `render_md` replaces only what lies between each
`<!-- GENERATED:x -->` and `<!-- /GENERATED:x -->` pair with the table MD_SECTIONS[x].
"""

from __future__ import annotations

import re

from .common import (CONFIG_DIMS, SpecError, bits, camel, cpp_const, opcode_fields, sv_const,
                     with_gaps, word_elems)


def md_table(head: list[str], rows: list[list]) -> list[str]:
    """A Markdown table."""
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def md_widths(spec: dict) -> list[str]:
    """Widths: SV and C++ names, value, meaning."""
    rows = [[f"`{sv_const(w['name'])}`", f"`{cpp_const(w['name'])}`", w["value"], w["doc"]]
            for w in spec["widths"]]
    return md_table(["SV", "C++", "value", "meaning"], rows)


def md_limits(spec: dict) -> list[str]:
    """Limits: name, value, meaning."""
    rows = [[f"`{sv_const(x['name'])}`", x["value"], x["doc"]] for x in spec["limits"]]
    return md_table(["name", "value", "meaning"], rows)


def md_memories(spec: dict) -> list[str]:
    """Memories: DMA id, element bits, elements per word, contents."""
    rows = [[m["name"], "-" if m["id"] is None else f"`Mem{camel(m['name'])}` = {m['id']}",
             m["elem_bits"], m["word_elems"], m["doc"]] for m in spec["memories"]]
    return md_table(["memory", "DMA id", "element bits", "elements per word", "contents"], rows)


def md_configs(spec: dict) -> list[str]:
    """The named configurations side by side, then one line of prose each."""
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
    """The header fields every instruction has."""
    rows = [[f"`{f['name']}`", bits(f), f["width"], f["doc"]]
            for f in spec["instruction"]["header_fields"]]
    return md_table(["field", "bits", "width", "meaning"], rows)


def md_op_classes(spec: dict) -> list[str]:
    """Op classes and their values."""
    rows = [[c["value"], f"`OpClass{camel(c['name'])}`", c["doc"]]
            for c in spec["instruction"]["op_classes"]]
    return md_table(["value", "SV", "opcodes"], rows)


def md_opcodes(spec: dict) -> list[str]:
    """Opcodes: value, unit, default op class, passes."""
    rows = [[f"0x{o['value']:02x}", f"`{o['name'].upper()}`", o["unit"], o["op_class"],
             o["passes"]] for o in spec["instruction"]["opcodes"]]
    return md_table(["opcode", "name", "unit", "default op class", "passes"], rows)


def md_opcode_fields(spec: dict) -> list[str]:
    """One section per opcode with its operand fields, LSB first."""
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
    """The fields of a parameter-memory entry."""
    rows = [[f"`{f['name']}`", bits(f), f["doc"]] for f in spec["param_format"]]
    return md_table(["field", "bits", "meaning"], rows)


def md_registers(spec: dict) -> list[str]:
    """The register map with each register's fields."""
    rows = []
    for reg in spec["registers"]["list"]:
        fields = "<br>".join(f"{bits(f)} `{f['name']}`: {f['doc']}" for f in reg["fields"])
        rows.append([f"0x{reg['offset']:02x}", f"`{reg['name'].upper()}`", reg["access"],
                     reg["doc"], fields or "-"])
    return md_table(["offset", "register", "access", "meaning", "fields"], rows)


def md_errors(spec: dict) -> list[str]:
    """STATUS.error codes."""
    rows = [[e["value"], f"`Err{camel(e['name'])}`", e["doc"]] for e in spec["errors"]]
    return md_table(["code", "SV", "meaning"], rows)


def md_counters(spec: dict) -> list[str]:
    """Performance counter indices."""
    rows = [[c["index"], f"`CNT_{c['name'].upper()}`", c["doc"]]
            for c in spec["counters"]["list"]]
    return md_table(["index", "name", "counts"], rows)


def md_report_counters(spec: dict) -> list[str]:
    """The counters as reports name them (`cycles.counters.<name>`), with their definitions."""
    rows = [[f"`{c['name']}`", c["doc"]] for c in spec["counters"]["list"]]
    return md_table(["counter", "definition"], rows)


MD_SECTIONS = {
    "widths": md_widths, "limits": md_limits, "memories": md_memories, "configs": md_configs,
    "header": md_header, "op_classes": md_op_classes, "opcodes": md_opcodes,
    "opcode_fields": md_opcode_fields, "params": md_params, "registers": md_registers,
    "errors": md_errors, "counters": md_counters, "report_counters": md_report_counters,
}
MD_BLOCK = re.compile(r"(<!-- GENERATED:(\w+) -->\n).*?(<!-- /GENERATED:\2 -->)", re.S)


def render_md(spec: dict, template: str) -> str:
    """`template` with every GENERATED block replaced by its table."""
    def block(match: re.Match) -> str:
        name = match.group(2)
        if name not in MD_SECTIONS:
            raise SpecError(f"unknown GENERATED block {name!r} (docs/isa.md, docs/reports.md)")
        body = "\n".join(MD_SECTIONS[name](spec))
        return f"{match.group(1)}{body}\n{match.group(3)}"
    return MD_BLOCK.sub(block, template)
