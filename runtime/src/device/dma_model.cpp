// SPDX-License-Identifier: Apache-2.0
// The DMA engine (rtl/dma/psm_dma.sv) and the program fetch (rtl/top/psm_controller.sv) on the
// SystemC DRAM (sim/src/dram_target.cpp), cycle by cycle, without the data.
#include "passim/device/dma_model.hpp"

#include <algorithm>
#include <cstddef>

namespace passim {

namespace f = hw::fields;
using hw::get_field;

namespace {

/// sc_time(v, SC_NS) at SystemC's default resolution of 1 ps: round(v * 1000).
std::uint64_t ps_of(double ns) { return static_cast<std::uint64_t>(ns * 1000.0 + 0.5); }

constexpr std::uint64_t kRspDepth = 8;    // psm_dma RspDepth: outstanding requests
constexpr std::uint64_t kFetchDepth = 8;  // psm_controller FetchDepth

/// psm_dma_beat_walk: the 8-byte beats of every row, and which bytes of each are the row's.
struct BeatWalk {
  std::uint64_t row_addr = 0, beat = 0, last = 0;
  bool first = true;
  std::uint64_t stride = 0, row_bytes = 0;

  void row(std::uint64_t addr) {
    row_addr = addr;
    beat = addr >> 3;
    last = (addr + row_bytes - 1) >> 3;
  }
  [[nodiscard]] bool is_last() const { return beat == last; }
  /// Bytes of the beat that belong to the row: hi - lo + 1.
  [[nodiscard]] std::uint64_t bytes() const {
    const std::uint64_t lo = first ? row_addr & 7 : 0;
    const std::uint64_t hi = is_last() ? ((row_addr & 7) + (row_bytes & 7) + 7) & 7 : 7;
    return hi - lo + 1;
  }
  void advance() {
    const bool end = is_last();
    if (end) {
      row(row_addr + stride);
    } else {
      ++beat;
    }
    first = end;
  }
};

/// The instruction's fields and the memory's geometry, as psm_dma latches them at start_i.
struct DmaCmd {
  bool load = false, requant = false;
  hw::Mem mem = hw::Mem::kInput;
  std::uint64_t esize = 0, rows = 0, row_len = 0, elems = 1, row_bytes = 0, word_bytes = 0;
  std::uint64_t buf_bytes = 0;  // BufBytes = largest word + one beat
};

DmaCmd decode(const hw::Instr& in, const hw::HwConfig& cfg) {
  DmaCmd c;
  c.load = static_cast<hw::Opcode>(get_field(in, f::kOpcode)) == hw::Opcode::kDmaLoad;
  c.requant = !c.load && get_field(in, f::dma_store::kRequant) != 0;
  c.mem = static_cast<hw::Mem>(get_field(in, f::dma_load::kMem));
  c.esize = get_field(in, f::dma_load::kElemSize);
  c.rows = get_field(in, f::dma_load::kRows);
  c.row_len = get_field(in, f::dma_load::kRowLen);
  switch (c.mem) {
    case hw::Mem::kInput:
      c.elems = cfg.array_rows;
      break;
    case hw::Mem::kWeight:
      c.elems = cfg.array_cols;
      break;
    case hw::Mem::kVector:
      c.elems = cfg.lanes;
      break;
    default:
      c.elems = 1;
      break;
  }
  c.row_bytes = c.row_len << c.esize;
  c.word_bytes = c.elems << c.esize;
  c.buf_bytes = std::max({cfg.array_rows, cfg.array_cols, 4 * cfg.lanes, std::size_t{8}}) + 8;
  return c;
}

/// psm_dma's registers that decide its timing (StRun), named as in the RTL, and the responses
/// it is owed.
struct DmaState {
  BeatWalk rq, cs;                  ///< u_rq_walk (requests), u_cs_walk (load responses)
  std::uint64_t rq_row = 0;         ///< rq_row_q: rows whose beats are all requested
  bool rq_done = false;             ///< rq_done_q
  std::uint64_t cnt = 0;            ///< cnt_q: bytes in the byte buffer
  std::uint64_t fifo = 0, os = 0;   ///< fifo_cnt_q, os_q (outstanding requests)
  std::uint64_t pk_row = 0;         ///< pk_row_q: load rows written to the scratchpad
  std::uint64_t pk_left = 0;        ///< pk_left_q: bytes of that row still to write
  std::uint64_t rd_row = 0;         ///< rd_row_q: store rows read from the scratchpad
  std::uint64_t rd_left = 0;        ///< rd_left_q: elements of that row still to read
  bool rd_valid = false;            ///< rd_valid_q: a word read last cycle arrives
  bool rqv1 = false, rqv2 = false;  ///< rqv1_q, rqv2_q: words in the requantisers
  std::uint64_t rd_bytes_q = 0, rqb1 = 0, rqb2 = 0;  ///< their bytes
  std::deque<std::uint64_t> due;                     ///< cycles of the owed responses (DramPort)
};

/// The end of a StRun cycle, loads and stores alike: a beat requested (`req`) advances the
/// request walk and books its response with the DRAM port; the outstanding count follows.
void issue(const DmaCmd& c, DmaState& s, bool req, bool rsp, std::uint64_t cycle,
           DramPort& port) {
  if (req) {
    if (s.rq.is_last()) {
      s.rq_done = ++s.rq_row == c.rows;
    }
    s.rq.advance();
    s.due.push_back(port.request(cycle));
  }
  s.os = s.os + (req ? 1 : 0) - (rsp ? 1 : 0);
}

/// One StRun cycle of a load. Returns whether the cycle stalls (psm_dma stall_o).
bool load_cycle(const DmaCmd& c, DmaState& s, bool rsp, bool gnt, std::uint64_t cycle,
                DramPort& port) {
  // mem_req_valid_o: a beat while the FIFO has room for every response owed (the port is
  // always ready: at most 8 outstanding of the harness's 16).
  const bool req = !s.rq_done && s.os + s.fifo < kRspDepth;
  // fifo_pop: the head beat's row bytes into the buffer when a whole beat fits.
  const bool pop_beat = s.fifo != 0 && s.cnt + 8 <= c.buf_bytes;
  // pk_req && spad_gnt_i: one word (or the row's tail) once its bytes are in the buffer.
  const std::uint64_t pk_bytes = std::min(c.word_bytes, s.pk_left);
  const bool write = s.pk_row != c.rows && s.cnt >= pk_bytes && gnt;
  // stall_o: nothing moved, and responses still owed.
  const bool stall = !req && !rsp && !write && s.os != 0;
  s.cnt = s.cnt - (write ? pk_bytes : 0) + (pop_beat ? s.cs.bytes() : 0);
  s.fifo = s.fifo + (rsp ? 1 : 0) - (pop_beat ? 1 : 0);
  if (pop_beat) {
    s.cs.advance();
  }
  if (write) {
    s.pk_row += s.pk_left == pk_bytes ? 1 : 0;
    s.pk_left = s.pk_left == pk_bytes ? c.row_bytes : s.pk_left - pk_bytes;
  }
  issue(c, s, req, rsp, cycle, port);
  return stall;
}

/// One StRun cycle of a store. Returns whether the cycle stalls.
bool store_cycle(const DmaCmd& c, DmaState& s, bool rsp, bool gnt, std::uint64_t cycle,
                 DramPort& port) {
  // rd_req && spad_gnt_i: a word read while the buffer has room for it (a whole word) and for
  // every word in flight (read last cycle, in the two requantiser stages).
  const std::uint64_t rd_elems = std::min(c.elems, s.rd_left);
  const std::uint64_t inflight =
      (s.rd_valid ? s.rd_bytes_q : 0) + (s.rqv1 ? s.rqb1 : 0) + (s.rqv2 ? s.rqb2 : 0);
  const bool read = s.rd_row != c.rows && s.cnt + inflight + c.word_bytes <= c.buf_bytes && gnt;
  // mem_req_valid_o: a beat once the buffer holds its bytes, at most 8 outstanding.
  const std::uint64_t rq_n = s.rq.bytes();
  const bool req = !s.rq_done && s.os < kRspDepth && s.cnt >= rq_n;
  const bool stall = !req && !rsp && !read && (s.os != 0);
  // app_n: the word read last cycle (or leaving the requantisers) enters the buffer.
  const std::uint64_t app = c.requant ? (s.rqv2 ? s.rqb2 : 0) : (s.rd_valid ? s.rd_bytes_q : 0);
  s.cnt = s.cnt - (req ? rq_n : 0) + app;
  s.rqv2 = s.rqv1;
  s.rqb2 = s.rqb1;
  s.rqv1 = c.requant && s.rd_valid;
  s.rqb1 = s.rd_bytes_q;
  s.rd_valid = read;
  s.rd_bytes_q = rd_elems << c.esize;
  if (read) {
    const bool row_end = s.rd_left == rd_elems;
    s.rd_row += row_end ? 1 : 0;
    s.rd_left = row_end ? c.row_len : s.rd_left - rd_elems;
  }
  issue(c, s, req, rsp, cycle, port);
  return stall;
}

}  // namespace

DramPort::DramPort(const DramTiming& t)
    : period_ps_(ps_of(1000.0 / t.clock_mhz)),
      xfer_ps_(ps_of((1.0 / t.bytes_per_ns) * 8)),
      latency_ps_(ps_of(t.latency_ns)) {}

void DramPort::reset() noexcept {
  busy_until_ps_ = 0;
  any_ = false;
}

std::uint64_t DramPort::request(std::uint64_t cycle) {
  // sim/src/dram_target.cpp: the transfer starts when the beat and the channel are ready, occupies
  // it xfer_ps_, and the response follows latency_ps_ after; sim/src/sim_device.cpp presents it in
  // the first cycle at or after that time, never before the next cycle nor before or with an older
  // response (MemPort::schedule).
  const std::uint64_t start = std::max(cycle * period_ps_, busy_until_ps_);
  busy_until_ps_ = start + xfer_ps_;
  const std::uint64_t done = busy_until_ps_ + latency_ps_;
  std::uint64_t at = std::max((done + period_ps_ - 1) / period_ps_, cycle + 1);
  if (any_ && at <= last_due_) {
    at = last_due_ + 1;
  }
  any_ = true;
  last_due_ = at;
  return at;
}

DmaCycles dma_cycles(const hw::Instr& in, const hw::HwConfig& cfg, std::uint64_t start,
                     DramPort& port, const SpadGrant& grant) {
  const DmaCmd c = decode(in, cfg);
  DmaState s;
  for (BeatWalk* w : {&s.rq, &s.cs}) {
    w->stride = get_field(in, f::dma_load::kDramStride);
    w->row_bytes = c.row_bytes;
    w->row(get_field(in, f::dma_load::kDramAddr));
  }
  s.pk_left = c.row_bytes;
  s.rd_left = c.row_len;
  std::uint64_t t = start + 1;  // the first busy cycle
  if (c.requant) {              // StPrmRead until param entry 0 is granted, then StPrmWait
    while (!grant(hw::Mem::kParam, t)) {
      ++t;
    }
    t += 2;
  }
  DmaCycles out;
  for (;; ++t) {
    const bool finished = c.load ? s.pk_row == c.rows : (s.rq_done && s.os == 0);
    if (finished) {
      out.cycles = t - start;
      return out;
    }
    const bool rsp = !s.due.empty() && s.due.front() == t;
    if (rsp) {
      s.due.pop_front();
    }
    const bool gnt = grant(c.mem, t);
    const bool stall =
        c.load ? load_cycle(c, s, rsp, gnt, t, port) : store_cycle(c, s, rsp, gnt, t, port);
    out.stall += stall ? 1 : 0;
  }
}

std::uint64_t fetch_cycles(std::uint32_t len, DramPort& port, std::uint64_t& stall) {
  // psm_controller.sv StFetch: a beat request per cycle while fewer than FetchDepth are
  // outstanding; the state moves on in the cycle after the last response.
  const std::uint64_t beats = 2 * std::uint64_t{len};
  std::deque<std::uint64_t> due;
  std::uint64_t requested = 0, received = 0;
  for (std::uint64_t t = 0;; ++t) {
    const bool rsp = !due.empty() && due.front() == t;
    const bool req = requested != beats && requested - received < kFetchDepth;
    if (rsp && received + 1 == beats) {
      return t;
    }
    stall += (!req && !rsp) ? 1 : 0;
    if (rsp) {
      due.pop_front();
      ++received;
    }
    if (req) {
      due.push_back(port.request(t));
      ++requested;
    }
  }
}

}  // namespace passim
