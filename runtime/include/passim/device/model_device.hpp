// SPDX-License-Identifier: Apache-2.0
/// \file `ModelDevice`: the reference executor (CpuDevice) with an analytical cycle model of the
/// accelerator: per-instruction records and every performance counter, as the RTL reports them
/// (docs/cycle-model.md), without simulating the RTL.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "passim/device/cpu_device.hpp"
#include "passim/device/cycle_model.hpp"
#include "passim/device/device.hpp"
#include "passim/device/dma_model.hpp"
#include "passim/hw/spec.hpp"

namespace passim {

/// Runs programs with the golden kernels (the same bits as CpuDevice) and times them with the cycle
/// model: the closed forms of device/cycle_model.hpp for the matmul stage and the vector unit, the
/// DMA on the DRAM of device/dma_model.hpp, and the controller's schedule
/// (rtl/top/psm_controller.sv: program fetch, one instruction per two cycles when its unit is idle,
/// BARRIER and END waiting for every unit, the DMA running beside the matmul and vector units).
/// `run` reports has_cycles = true, one InstrRecord per DMA, matmul and vector instruction and all
/// counters of spec/passim.json.
///
/// What the model assumes (docs/cycle-model.md, "What the model assumes"): a DMA meets the
/// matmul stage only when issued under a running MATMUL, and then on the param memory (the
/// steps it copies in), the input memory (the rows psm_matmul reads) or the vector memory (the
/// result it writes); the vector unit never meets another unit on a memory. Programs of the
/// compiler and of tests/gen keep to that; unmodelled_overlaps() counts the instructions that
/// do not.
class ModelDevice final : public Device, private InstrObserver {
 public:
  explicit ModelDevice(const hw::HwConfig& cfg, const DramTiming& timing = {},
                       std::uint64_t dram_bytes = kDefaultDramBytes);

  [[nodiscard]] std::string_view name() const noexcept override { return "model"; }
  [[nodiscard]] const hw::HwConfig& hw() const noexcept override { return cpu_.hw(); }
  [[nodiscard]] std::uint64_t dram_bytes() const noexcept override { return cpu_.dram_bytes(); }
  void write_dram(std::uint64_t addr, std::span<const std::uint8_t> bytes) override {
    cpu_.write_dram(addr, bytes);
  }
  void read_dram(std::uint64_t addr, std::span<std::uint8_t> bytes) const override {
    cpu_.read_dram(addr, bytes);
  }
  /// Runs the program on CpuDevice (same results, same errors) and returns its counters with the
  /// modelled cycles and records.
  RunStats run(std::uint64_t prog_addr, std::uint32_t len) override;
  [[nodiscard]] const DramTiming& timing() const noexcept { return timing_; }
  /// Instructions of the last run that met another unit on a memory in a way the model does not
  /// time (see the class comment): 0 means every cycle of the run is modelled.
  [[nodiscard]] std::uint64_t unmodelled_overlaps() const noexcept { return unmodelled_; }

 private:
  /// One unit instruction on the schedule: busy in cycles [begin, end] of the run.
  struct Busy {
    std::uint64_t begin = 0, end = 0;
    unsigned op_class = 0;
    InstrRecord record;
    hw::Instr instr{};
  };

  void before(const hw::Instr& in, std::uint32_t index, const CpuDevice& dev) override;
  void after(const hw::Instr& in, std::uint32_t index, std::uint64_t saturated) override;
  /// The busy cycles of unit instruction `in` started in cycle `start`.
  [[nodiscard]] InstrRecord time_unit(const hw::Instr& in, std::uint32_t index, std::uint64_t start,
                                      const CpuDevice& dev);
  /// Counts `b` in unmodelled_ when it runs beside another unit's instruction on a shared memory
  /// whose arbitration the model does not time.
  void check_overlaps(const Busy& b);
  /// Whether the DMA's request to `mem` is granted in `cycle`.
  [[nodiscard]] bool dma_granted(hw::Mem mem, std::uint64_t cycle) const;
  /// Fills the cycle counters of `stats` from the schedule.
  void count(RunStats& stats) const;

  CpuDevice cpu_;
  DramTiming timing_;
  DramPort port_;
  // The schedule of the current run (cycle 0: the first cycle of the program fetch).
  std::uint64_t issue_ = 0;              ///< cycle of the next instruction's StIssue
  std::array<std::uint64_t, 3> free_{};  ///< first idle cycle of DMA, matmul, vector
  /// The last MATMUL's accesses that refuse the DMA (rtl/top/psm_matmul_stage.sv): its step
  /// reads in cycles [copy_in_begin, copy_in_end - 1), psm_matmul's input reads from cycle
  /// run_begin on (slot cycles c < m of each of `tiles` slots of `slot` cycles), and its
  /// vector writes, `writes` offsets from copy_out_begin (none known: not modelled).
  struct MatmulAccess {
    std::uint64_t copy_in_begin = 0, copy_in_end = 0;  ///< copy_in_end: first cycle without
    std::uint64_t run_begin = 0, slot = 1, tiles = 0, m = 0;
    std::uint64_t copy_out_begin = 0;
    std::vector<cycles::CycleSpan> writes;
  };
  MatmulAccess mm_;
  [[nodiscard]] static MatmulAccess matmul_access(const hw::Instr& in, const hw::HwConfig& cfg,
                                                  std::uint64_t start, bool vector_busy);
  std::uint64_t end_ = 0;  ///< the END's cycle
  std::uint64_t mem_stall_ = 0, unit_stall_ = 0, unmodelled_ = 0;
  std::vector<Busy> busy_;
  std::array<std::size_t, 3> last_{};  ///< 1 + index in busy_ of each unit's last instruction
};

/// A ModelDevice for `cfg` with the memory timing `timing`.
[[nodiscard]] std::unique_ptr<Device> make_model_device(
    const hw::HwConfig& cfg, const DramTiming& timing = {},
    std::uint64_t dram_bytes = kDefaultDramBytes);

}  // namespace passim
