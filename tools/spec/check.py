# SPDX-License-Identifier: Apache-2.0
"""Validates the spec: names, value ranges, bit layouts and agreement with the runtime.

`validate` runs every check and raises one SpecError listing every problem found, each
message starting with the field it is about (`opcodes.add.value: ...`).
"""

from __future__ import annotations

import re
from pathlib import Path

from .common import CONFIG_DIMS, MEM_ID_BITS, SpecError, clog2, cpp_const
from .load import runtime_constants

NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def check_names(items: list[dict], where: str, errors: list[str]) -> None:
    """Every item has a unique lower_snake_case `name`."""
    seen = set()
    for item in items:
        name = item.get("name", "")
        if not NAME_RE.match(name):
            errors.append(f"{where}: name {name!r} is not lower_snake_case")
        if name in seen:
            errors.append(f"{where}.{name}: duplicate name")
        seen.add(name)


def check_unique_values(items: list[dict], key: str, bits: int, where: str,
                        errors: list[str]) -> None:
    """The `key` values are unique, non-negative and fit in `bits` bits."""
    owners: dict[int, str] = {}
    for item in items:
        value = item[key]
        name = item["name"]
        if not isinstance(value, int) or not 0 <= value < (1 << bits):
            errors.append(f"{where}.{name}.{key}: {value!r} does not fit in {bits} bits")
        elif value in owners:
            errors.append(f"{where}.{name}.{key}: {value} is already used by {owners[value]!r}")
        else:
            owners[value] = name


def check_widths(spec: dict, runtime_dir: Path, errors: list[str]) -> None:
    """Widths tied to a runtime constant must equal it (the spec and the runtime agree)."""
    check_names(spec["widths"], "widths", errors)
    headers: dict[str, dict[str, int]] = {}
    for width in spec["widths"]:
        header = width.get("runtime")
        if header is None:
            continue
        if header not in headers:
            headers[header] = runtime_constants(runtime_dir, header)
        cname = cpp_const(width["name"])
        found = headers[header].get(cname)
        if found is None:
            errors.append(f"widths.{width['name']}: `{cname}` not found in passim/{header}")
        elif found != width["value"]:
            errors.append(f"widths.{width['name']}: spec says {width['value']} but "
                          f"passim/{header} has {cname} = {found}")


def check_fields(fields: list[dict], total: int, word: int, where: str,
                 errors: list[str]) -> None:
    """Fields fit in `total` bits, do not overlap and do not straddle a `word`-bit word."""
    check_names(fields, where, errors)
    used: dict[int, str] = {}
    for field in fields:
        name, lsb, width = field["name"], field["lsb"], field["width"]
        msb = lsb + width - 1
        if width < 1 or lsb < 0 or msb >= total:
            errors.append(f"{where}.{name}: bits [{msb}:{lsb}] are outside [{total - 1}:0]")
            continue
        if lsb // word != msb // word:
            errors.append(f"{where}.{name}: bits [{msb}:{lsb}] cross a {word}-bit word boundary")
        for bit in range(lsb, msb + 1):
            if bit in used:
                errors.append(f"{where}.{name}: bit {bit} overlaps field {used[bit]!r}")
                break
            used[bit] = name


def limit(spec: dict, name: str) -> int:
    """The value of limits.<name>."""
    for item in spec["limits"]:
        if item["name"] == name:
            return item["value"]
    raise SpecError(f"limits.{name}: missing")


def check_memories(spec: dict, errors: list[str]) -> None:
    """Memories have a max depth in limits, a word format, and unique DMA ids."""
    check_names(spec["memories"], "memories", errors)
    with_ids = [m for m in spec["memories"] if m["id"] is not None]
    check_unique_values(with_ids, "id", MEM_ID_BITS, "memories", errors)
    for mem in spec["memories"]:
        if f"max_{mem['name']}_depth" not in {item["name"] for item in spec["limits"]}:
            errors.append(f"memories.{mem['name']}: limits.max_{mem['name']}_depth missing")
        elems = mem["word_elems"]
        if not (isinstance(elems, int) and elems >= 1) and elems not in CONFIG_DIMS:
            errors.append(f"memories.{mem['name']}.word_elems: {elems!r} is neither a "
                          f"positive int nor one of {CONFIG_DIMS}")


def check_config(spec: dict, cfg: dict, errors: list[str]) -> None:
    """One named config: dimensions and depths within the limits, MACs within its budget."""
    where = f"configs.{cfg['name']}"
    for dim, lim in zip(CONFIG_DIMS, ("max_array_rows", "max_array_cols", "max_lanes")):
        value = cfg.get(dim)
        if not isinstance(value, int) or not 1 <= value <= limit(spec, lim):
            errors.append(f"{where}.{dim}: {value!r} is outside [1, {limit(spec, lim)}]")
    macs = cfg.get("array_rows", 0) * cfg.get("array_cols", 0)
    if cfg["name"] == "tiny" and "max_macs" not in cfg:
        errors.append(f"{where}.max_macs: missing (tiny must fit the iCE40 UP5K's 8 DSPs)")
    if "max_macs" in cfg and macs > cfg["max_macs"]:
        errors.append(f"{where}: {cfg['array_rows']}x{cfg['array_cols']} = {macs} MACs "
                      f"exceeds max_macs {cfg['max_macs']}")
    for mem in spec["memories"]:
        depth = cfg["depths"].get(mem["name"])
        top = limit(spec, f"max_{mem['name']}_depth")
        if not isinstance(depth, int) or depth < 2 or depth & (depth - 1) or depth > top:
            errors.append(f"{where}.depths.{mem['name']}: {depth!r} is not a power of two "
                          f"in [2, {top}]")
    extra = set(cfg["depths"]) - {m["name"] for m in spec["memories"]}
    for name in sorted(extra):
        errors.append(f"{where}.depths.{name}: no such memory")


# Parameter-entry fields of a Requant step and the width each must have.
PARAM_FIELD_WIDTHS = {"rq_mult": "requant_mult_width", "rq_shift": "requant_shift_width",
                      "rq_bias": "requant_bias_bits"}


def check_param_format(spec: dict, errors: list[str]) -> None:
    """The 64-bit parameter entry: fields fit and do not overlap, and the Requant fields are
    as wide as the widths section says (rq_bias as wide as the runtime's kRequantBiasBits)."""
    check_fields(spec["param_format"], 64, 64, "param_format", errors)
    fields = {f["name"]: f for f in spec["param_format"]}
    widths = {w["name"]: w["value"] for w in spec["widths"]}
    for name, width_name in PARAM_FIELD_WIDTHS.items():
        if name not in fields:
            errors.append(f"param_format.{name}: missing")
        elif width_name not in widths:
            errors.append(f"widths.{width_name}: missing (the width of param_format.{name})")
        elif fields[name]["width"] != widths[width_name]:
            errors.append(f"param_format.{name}: {fields[name]['width']} bits but "
                          f"widths.{width_name} is {widths[width_name]}")


def check_instruction(spec: dict, errors: list[str]) -> None:
    """Opcodes unique; every opcode's fields plus the header fit the instruction."""
    ins = spec["instruction"]
    total, word = ins["width"], ins["word_width"]
    if total % word:
        errors.append("instruction.width: not a multiple of word_width")
    header = {f["name"]: f for f in ins["header_fields"]}
    missing = [n for n in ("opcode", "layer", "op_class") if n not in header]
    for name in missing:
        errors.append(f"instruction.header_fields.{name}: missing")
    if missing:
        return
    check_fields(ins["header_fields"], total, word, "instruction.header_fields", errors)
    check_names(ins["op_classes"], "instruction.op_classes", errors)
    check_unique_values(ins["op_classes"], "value", header["op_class"]["width"],
                        "instruction.op_classes", errors)
    check_names(ins["opcodes"], "instruction.opcodes", errors)
    check_unique_values(ins["opcodes"], "value", header["opcode"]["width"], "opcodes", errors)
    classes = {c["name"] for c in ins["op_classes"]}
    memories = {m["name"]: m for m in spec["memories"]}
    for op in ins["opcodes"]:
        where = f"opcodes.{op['name']}"
        if op["op_class"] not in classes:
            errors.append(f"{where}.op_class: {op['op_class']!r} is not an op class")
        if op["unit"] not in ins["units"]:
            errors.append(f"{where}.unit: {op['unit']!r} is not a unit")
        check_fields(ins["header_fields"] + op["fields"], total, word, f"{where}.fields", errors)
        for field in op["fields"]:
            if field["name"] == "mem" and field["width"] != MEM_ID_BITS:
                errors.append(f"{where}.fields.mem: must be {MEM_ID_BITS} bits (a `mem_e`)")
            mem = field.get("mem")
            if mem is None:
                continue
            if mem not in memories:
                errors.append(f"{where}.fields.{field['name']}.mem: no memory {mem!r}")
                continue
            need = clog2(limit(spec, f"max_{mem}_depth"))
            if field["width"] < need:
                errors.append(f"{where}.fields.{field['name']}: {field['width']} bits cannot "
                              f"address max_{mem}_depth ({need} bits needed)")


def check_registers(spec: dict, errors: list[str]) -> None:
    """Register offsets unique, word aligned and in range; fields fit 32 bits."""
    regs = spec["registers"]
    check_names(regs["list"], "registers", errors)
    check_unique_values(regs["list"], "offset", regs["addr_width"], "registers", errors)
    for reg in regs["list"]:
        where = f"registers.{reg['name']}"
        if reg["offset"] % (regs["data_width"] // 8):
            errors.append(f"{where}.offset: {reg['offset']} is not word aligned")
        if reg["access"] not in ("ro", "wo", "rw"):
            errors.append(f"{where}.access: {reg['access']!r} is not ro, wo or rw")
        check_fields(reg["fields"], regs["data_width"], regs["data_width"], f"{where}.fields",
                     errors)


def check_counters(spec: dict, errors: list[str]) -> None:
    """Counter indices unique; every op class has a cycles_ and a passes_ counter."""
    cnt = spec["counters"]
    check_names(cnt["list"], "counters", errors)
    check_unique_values(cnt["list"], "index", cnt["index_width"], "counters", errors)
    indices = sorted(c["index"] for c in cnt["list"])
    if indices != list(range(len(indices))):
        errors.append(f"counters: indices {indices} are not 0..{len(indices) - 1} without gaps")
    index = {c["name"]: c["index"] for c in cnt["list"]}
    for cls in spec["instruction"]["op_classes"]:
        for kind in ("cycles", "passes"):
            name = f"{kind}_{cls['name']}"
            if name not in index:
                errors.append(f"counters.{name}: missing for op class {cls['name']!r}")
            elif f"{kind}_matmul" in index and index[name] != index[f"{kind}_matmul"] + cls["value"]:
                # rtl/top/psm_counters.sv finds a class's counter at <kind>_matmul + its value
                errors.append(f"counters.{name}: expected index "
                              f"{index[f'{kind}_matmul'] + cls['value']} (<kind>_matmul + the "
                              f"class value {cls['value']}), found {index[name]}")
    sel = {f["name"]: f for f in next(r for r in spec["registers"]["list"]
                                       if r["name"] == "cnt_sel")["fields"]}
    if sel["index"]["width"] != cnt["index_width"]:
        errors.append("registers.cnt_sel.fields.index: width differs from counters.index_width")


def check_ascii(node, where: str, errors: list[str]) -> None:
    """Every string is ASCII (the generated files must be ASCII)."""
    if isinstance(node, dict):
        for key, value in node.items():
            check_ascii(value, f"{where}.{key}", errors)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            check_ascii(value, f"{where}[{index}]", errors)
    elif isinstance(node, str) and not node.isascii():
        errors.append(f"{where}: non-ASCII text")


def validate(spec: dict, runtime_dir: Path) -> None:
    """Raises SpecError listing every problem found in `spec`."""
    errors: list[str] = []
    try:
        check_ascii(spec, "spec", errors)
        check_widths(spec, runtime_dir, errors)
        check_names(spec["limits"], "limits", errors)
        check_memories(spec, errors)
        check_names(spec["configs"], "configs", errors)
        for cfg in spec["configs"]:
            check_config(spec, cfg, errors)
        check_param_format(spec, errors)
        check_instruction(spec, errors)
        check_names(spec["errors"], "errors", errors)
        check_unique_values(spec["errors"], "value", 8, "errors", errors)
        check_registers(spec, errors)
        check_counters(spec, errors)
    except (KeyError, TypeError, StopIteration) as exc:
        errors.append(f"malformed spec: missing or wrong-typed entry {exc}")
    if errors:
        raise SpecError("\n".join(errors))
