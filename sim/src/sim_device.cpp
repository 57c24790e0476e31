// SPDX-License-Identifier: Apache-2.0
// SimDevice: the Verilated accelerator in a SystemC/TLM-2.0 system model.
//
// One SC_THREAD steps the plain (--cc) Verilated model in a loop, a quantum of cycles at a
// time (temporal decoupling): the model's clock runs ahead of SystemC time by at most the
// TLM global quantum, and a tlm_quantumkeeper synchronises after each quantum. Cycle c of the
// model is SystemC time (c - c0) * period. A beat accepted on the memory port in cycle c is a
// b_transport with delay time(c) - sc_time_stamp(); the target adds its channel occupancy
// and latency, and the response is presented in the first cycle at or after that time.
// SystemC runs only inside run(): sc_start() returns when the thread waits for the next job.
#include "passim/sim/sim_device.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include <fmt/format.h>

#include "dram_target.hpp"
#include "passim/sim/host.hpp"

// libsystemc's main() calls sc_main; executables that link this library have their own main
// (GoogleTest, Google Benchmark, the CLI), so sc_main is never called.
int sc_main(int /*argc*/, char* /*argv*/[]) { return 0; }

namespace passim::sim {

namespace {

using sc_core::sc_time;

/// The accelerator side of the system: the SC_THREAD that steps the model, and the TLM
/// initiator of its memory port.
class AccelSystem : public sc_core::sc_module, public MemPort {
 public:
  tlm_utils::simple_initiator_socket<AccelSystem> socket;

  /// `describe(prog_addr, index)` names an instruction in messages.
  using Describe = std::function<std::string(std::uint64_t, std::uint32_t)>;

  AccelSystem(const sc_core::sc_module_name& name, AccelModel& model, const SimOptions& opts,
              Describe describe)
      : sc_core::sc_module(name),
        MemPort(16),
        socket("socket"),
        model_(model),
        opts_(opts),
        describe_(std::move(describe)),
        period_(1000.0 / opts.clock_mhz, sc_core::SC_NS) {
    quantum_cycles_ = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(opts.quantum_ns * opts.clock_mhz / 1000.0));
    max_cycles_ = opts.max_cycles != 0 ? opts.max_cycles : (std::uint64_t{1} << 40);
    next_progress_ = opts.progress_cycles;
    SC_HAS_PROCESS(AccelSystem);
    SC_THREAD(thread);
  }

  /// Hands a run to the thread; the caller then runs SystemC until the thread is idle.
  void submit(std::uint64_t prog_addr, std::uint32_t len) {
    job_ = Job{prog_addr, len, true, {}, nullptr};
    job_event_.notify(sc_core::SC_ZERO_TIME);
  }
  /// The result of the last job (rethrows its exception).
  RunStats result() {
    if (job_.pending) {
      throw std::runtime_error("SimDevice: SystemC stopped before the run ended");
    }
    if (job_.error) {
      std::rethrow_exception(job_.error);
    }
    return job_.stats;
  }

  /// A beat accepted in cycle `cycle`: one b_transport.
  void request(const MemBeatRequest& r, std::uint64_t cycle) override {
    std::uint8_t* data = beat_data_;
    std::uint8_t* be = beat_be_;
    std::memcpy(data, &r.wdata, 8);  // little-endian host (x86-64, AArch64)
    for (int i = 0; i < 8; ++i) {
      be[i] = ((r.wstrb >> i) & 1u) ? TLM_BYTE_ENABLED : TLM_BYTE_DISABLED;
    }
    tlm::tlm_generic_payload& trans = trans_;  // one payload, every field set for each beat
    trans.set_command(r.write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    trans.set_address(r.addr);
    trans.set_data_ptr(data);
    trans.set_data_length(8);
    trans.set_streaming_width(8);
    trans.set_byte_enable_ptr(r.write ? be : nullptr);
    trans.set_byte_enable_length(r.write ? 8 : 0);
    trans.set_dmi_allowed(false);
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time delay = time_of(cycle) - sc_core::sc_time_stamp();
    socket->b_transport(trans, delay);
    const sc_time done = sc_core::sc_time_stamp() + delay;
    const std::uint64_t p = period_.value();
    const std::uint64_t due = base_ + (done.value() + p - 1) / p;
    MemBeatResponse rsp;
    rsp.error = !trans.is_response_ok();
    if (!r.write && !rsp.error) {
      std::memcpy(&rsp.rdata, data, 8);
    }
    schedule(cycle, due, rsp);
  }

 private:
  struct Job {
    std::uint64_t prog_addr = 0;
    std::uint32_t len = 0;
    bool pending = false;
    RunStats stats;
    std::exception_ptr error;
  };

  [[nodiscard]] sc_time time_of(std::uint64_t cycle) const {
    return period_ * static_cast<double>(cycle - base_);
  }

  /// The quantum keeper: local time = how far the model's clock is ahead of SystemC.
  void sync() {
    qk_.set(time_of(model_.cycle()) - sc_core::sc_time_stamp());
    if (qk_.need_sync()) {
      qk_.sync();
    }
  }

  void thread() {
    tlm::tlm_global_quantum::instance().set(sc_time(opts_.quantum_ns, sc_core::SC_NS));
    qk_.reset();
    base_ = model_.cycle();
    model_.reset(4, *this);
    sync();
    while (true) {
      while (!job_.pending) {
        sc_core::wait(job_event_);
      }
      try {
        job_.stats = execute(job_.prog_addr, job_.len);
      } catch (...) {
        job_.error = std::current_exception();
      }
      job_.pending = false;
      // The host sees the run end at the model's time: catch SystemC up before returning.
      qk_.set(time_of(model_.cycle()) - sc_core::sc_time_stamp());
      qk_.sync();
    }
  }

  RunStats execute(std::uint64_t prog_addr, std::uint32_t len) {
    const auto describe = [this, prog_addr](std::uint32_t index) {
      return describe_(prog_addr, index);
    };
    start_program(model_, *this, prog_addr, len, opts_.rtl_watchdog);
    const std::uint64_t start = model_.cycle();
    while (model_.run_busy()) {
      const std::uint64_t used = model_.cycle() - start;
      if (used >= max_cycles_) {
        abandon_program(model_, *this, max_cycles_, describe);
      }
      model_.run(std::min(quantum_cycles_, max_cycles_ - used), *this);
      sync();
      report_progress(describe);
      if (opts_.stop != nullptr && opts_.stop->load(std::memory_order_relaxed)) {
        abandon_program(model_, *this, max_cycles_, describe, true);
      }
    }
    return finish_program(model_, *this, describe);
  }

  /// SimOptions::progress, once per progress_cycles cycles of the model's clock.
  template <typename F>
  void report_progress(const F& describe) {
    if (opts_.progress_cycles == 0 || !opts_.progress || model_.cycle() < next_progress_) {
      return;
    }
    // The busy units' instructions (the controller itself mostly waits at a BARRIER).
    std::string at;
    constexpr std::array<const char*, 3> kUnits = {"DMA", "matmul", "vector"};
    for (unsigned u = 0; u < 3; ++u) {
      if (((model_.unit_busy() >> u) & 1u) != 0) {
        at += fmt::format("{}{} {}", at.empty() ? "" : ", ", kUnits[u],
                          describe(model_.unit_pc(u)));
      }
    }
    opts_.progress(model_.cycle(), at.empty() ? "controller " + describe(model_.pc()) : at);
    next_progress_ = (model_.cycle() / opts_.progress_cycles + 1) * opts_.progress_cycles;
  }

  AccelModel& model_;
  SimOptions opts_;
  std::uint64_t next_progress_ = 0;
  Describe describe_;
  sc_time period_;
  std::uint64_t quantum_cycles_ = 1;
  std::uint64_t max_cycles_ = 0;
  std::uint64_t base_ = 0;  // the model cycle at SystemC time 0
  tlm_utils::tlm_quantumkeeper qk_;
  tlm::tlm_generic_payload trans_;  // reused by every beat (constructing one allocates)
  std::uint8_t beat_data_[8] = {};
  std::uint8_t beat_be_[8] = {};
  sc_core::sc_event job_event_;
  Job job_;
};

sc_time latency_of(const SimOptions& o) { return sc_time(o.dram_latency_ns, sc_core::SC_NS); }

/// Throws std::runtime_error once SystemC has left elaboration (it elaborates once per process).
void check_elaboration() {
  if (sc_core::sc_get_status() != sc_core::SC_ELABORATION) {
    throw std::runtime_error(
        "SimDevice: SystemC has already started in this process and elaborates only once; "
        "create one SimDevice per process, before the first run (ctest runs each test in its "
        "own process)");
  }
}

}  // namespace

struct SimDevice::Impl {
  Impl(AccelModel& model, const SimOptions& o, std::vector<std::uint8_t>& mem,
       AccelSystem::Describe describe)
      : dram(sc_core::sc_gen_unique_name("dram"), mem, latency_of(o), o.dram_bytes_per_ns),
        system(sc_core::sc_gen_unique_name("accel"), model, o, std::move(describe)) {
    system.socket.bind(dram.socket);
    if (!o.trace_path.empty()) {
      model.open_trace(o.trace_path, o.clock_mhz, o.trace_window);
    }
  }

  DramTarget dram;
  AccelSystem system;
};

SimDevice::SimDevice(std::unique_ptr<AccelModel> model, const SimOptions& opts)
    : RtlDevice(std::move(model), opts) {
  check_elaboration();
  impl_ = std::make_unique<Impl>(this->model(), options(), dram(),
                                 [this](std::uint64_t at, std::uint32_t i) { return describe(at, i); });
}

SimDevice::~SimDevice() = default;

RunStats SimDevice::run(std::uint64_t prog_addr, std::uint32_t len) {
  impl_->system.submit(prog_addr, len);
  sc_core::sc_start();  // returns when the thread waits for the next job
  return impl_->system.result();
}

double SimDevice::sim_time_ns() const { return sc_core::sc_time_stamp().to_seconds() * 1e9; }

}  // namespace passim::sim
