// SPDX-License-Identifier: Apache-2.0
// AddressSanitizer builds only (PASSIM_SANITIZE): gives ASan the main stack's bounds when
// SystemC switches back to it from an SC_THREAD.
//
// libsystemc (2.3.4, QuickThreads) announces each coroutine switch to ASan with
// __sanitizer_start_switch_fiber(NULL, next->m_stack, next->m_stack_size). Its main coroutine
// has no stack of its own (m_stack NULL, size 0), so after the first switch back to it ASan
// believes the main stack is [0, 0): every later throw or [[noreturn]] call on the main stack
// prints "ASan is ignoring requested __asan_handle_no_return" and leaves the poison of the
// frames it unwinds, and a later call then trips on it (a false stack-buffer-overflow in
// __interceptor_sigaltstack, seen when SimDevice::run rethrows a run's error). Defined in the
// executable, this function comes before libasan's in the dynamic symbol lookup that
// libsystemc's weak reference goes through: it fills in the main thread's stack, then calls
// ASan's own function.
#include <dlfcn.h>
#include <pthread.h>

#include <cstddef>

namespace {

using StartSwitchFiber = void (*)(void**, const void*, std::size_t);

struct StackBounds {
  void* bottom = nullptr;
  std::size_t size = 0;
};

/// The calling thread's stack as the thread library knows it (for the main thread: its
/// original stack, wherever the stack pointer is now).
StackBounds thread_stack() {
  StackBounds s;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    (void)pthread_attr_getstack(&attr, &s.bottom, &s.size);
    (void)pthread_attr_destroy(&attr);
  }
  return s;
}

}  // namespace

// Referenced by sim/CMakeLists.txt (LINKER:--undefined) so that this file is always linked.
extern "C" const int passim_sanitizer_fibers = 1;

extern "C" void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom,
                                               std::size_t size) {
  static const auto asan_start = reinterpret_cast<StartSwitchFiber>(
      dlsym(RTLD_NEXT, "__sanitizer_start_switch_fiber"));
  static const StackBounds main_stack = thread_stack();
  if (bottom == nullptr && size == 0) {  // SystemC's main coroutine
    bottom = main_stack.bottom;
    size = main_stack.size;
  }
  if (asan_start != nullptr) {
    asan_start(fake_stack_save, bottom, size);
  }
}
