#include "ropekit/core/cancel.hpp"

namespace ropekit {

namespace {
thread_local const std::atomic<bool>* tls_flag = nullptr;
}  // namespace

CancelScope::CancelScope(const std::atomic<bool>* flag) : previous_(tls_flag) { tls_flag = flag; }
CancelScope::~CancelScope() { tls_flag = previous_; }

const std::atomic<bool>* current_cancel_flag() { return tls_flag; }

void check_cancelled() {
  if (tls_flag && tls_flag->load(std::memory_order_relaxed)) throw Cancelled{};
}

}  // namespace ropekit
