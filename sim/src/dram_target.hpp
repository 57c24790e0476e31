// SPDX-License-Identifier: Apache-2.0
/// \file A DRAM as a TLM-2.0 loosely-timed target: b_transport copies the bytes and annotates
/// the delay of a bandwidth-limited channel plus a fixed latency.
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

namespace passim::sim {

class DramTarget : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<DramTarget> socket;

  /// Serves the bytes of `mem` (owned by the caller, outliving the target); each transfer occupies the channel for length / bytes_per_ns, and
  /// its response follows `latency` after the transfer ends. Transfers never overlap, so the
  /// completion times are in request order.
  DramTarget(const sc_core::sc_module_name& name, std::vector<std::uint8_t>& mem,
             sc_core::sc_time latency, double bytes_per_ns);

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);

  std::vector<std::uint8_t>& mem_;
  sc_core::sc_time latency_;
  double ns_per_byte_;
  sc_core::sc_time busy_until_ = sc_core::SC_ZERO_TIME;
  unsigned xfer_len_ = 0;                               // the length of xfer_time_
  sc_core::sc_time xfer_time_ = sc_core::SC_ZERO_TIME;  // channel time of xfer_len_ bytes
};

}  // namespace passim::sim
