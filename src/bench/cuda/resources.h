// RAII owners for device memory, pinned and pageable host memory, streams, events:
// a testcase that throws half-way still frees everything it allocated.
#pragma once

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "bench/cuda/check.h"

namespace chokepoint::bench::gpu {

// What every buffer of this file shows: its memory, untyped or typed, and its size.
class Buffer {
 public:
  void* get() const { return p_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  size_t bytes() const { return bytes_; }

 protected:
  Buffer() = default;
  explicit Buffer(size_t bytes) : bytes_(bytes) {}
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

class DeviceBuffer : public Buffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : Buffer(bytes) { CP_CUDA(cudaMalloc(&p_, bytes)); }
  ~DeviceBuffer() {
    if (p_ != nullptr) cudaFree(p_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : Buffer(o.bytes_) { p_ = std::exchange(o.p_, nullptr); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Page-locked host memory (cudaHostAlloc), the fast path for DMA.
class PinnedBuffer : public Buffer {
 public:
  explicit PinnedBuffer(size_t bytes, unsigned flags = cudaHostAllocDefault) : Buffer(bytes) {
    CP_CUDA(cudaHostAlloc(&p_, bytes, flags));
  }
  ~PinnedBuffer() {
    if (p_ != nullptr) cudaFreeHost(p_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
};

// Ordinary (pageable) host memory, touched once so that page faults are not timed.
class PageableBuffer : public Buffer {
 public:
  explicit PageableBuffer(size_t bytes) : Buffer(bytes) {
    p_ = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (p_ == nullptr) throw BenchError("cannot allocate " + std::to_string(bytes >> 20) + " MiB of host memory");
    std::memset(p_, 0x5a, bytes);
  }
  ~PageableBuffer() { std::free(p_); }
  PageableBuffer(const PageableBuffer&) = delete;
  PageableBuffer& operator=(const PageableBuffer&) = delete;
};

class Stream {
 public:
  Stream() { CP_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s_ != nullptr) cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { CP_CUDA(cudaEventCreate(&e_)); }
  ~Event() {
    if (e_ != nullptr) cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace chokepoint::bench::gpu
