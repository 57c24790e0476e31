// SPDX-License-Identifier: Apache-2.0
// TLM-2.0 DRAM target with latency and bandwidth.
#include "dram_target.hpp"

#include <algorithm>
#include <cstring>

namespace passim::sim {

DramTarget::DramTarget(const sc_core::sc_module_name& name, std::vector<std::uint8_t>& mem,
                       sc_core::sc_time latency, double bytes_per_ns)
    : sc_core::sc_module(name),
      socket("socket"),
      mem_(mem),
      latency_(latency),
      ns_per_byte_(1.0 / bytes_per_ns) {
  socket.register_b_transport(this, &DramTarget::b_transport);
}

void DramTarget::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const std::uint64_t addr = trans.get_address();
  const unsigned len = trans.get_data_length();
  unsigned char* data = trans.get_data_ptr();
  const unsigned char* be = trans.get_byte_enable_ptr();
  const unsigned be_len = trans.get_byte_enable_length();

  // The channel: this transfer starts when both it and the channel are ready.
  const sc_core::sc_time start = std::max(sc_core::sc_time_stamp() + delay, busy_until_);
  if (len != xfer_len_) {  // every beat has the same length: convert it once
    xfer_len_ = len;
    xfer_time_ = sc_core::sc_time(ns_per_byte_ * len, sc_core::SC_NS);
  }
  busy_until_ = start + xfer_time_;
  delay = busy_until_ + latency_ - sc_core::sc_time_stamp();

  if (addr > mem_.size() || len > mem_.size() - addr || trans.get_streaming_width() < len) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  unsigned char* at = mem_.data() + addr;
  if (trans.is_read()) {
    std::memcpy(data, at, len);
  } else if (trans.is_write()) {
    for (unsigned i = 0; i < len; ++i) {
      if (be == nullptr || be[i % be_len] == TLM_BYTE_ENABLED) {
        at[i] = data[i];
      }
    }
  } else {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  trans.set_dmi_allowed(false);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace passim::sim
