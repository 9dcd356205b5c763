// DeferredContents: the elements of a HostArray that arrive after the array is returned. A
// device backend returns its results at once and copies them to the host only when someone
// reads them (a training loop that feeds new parameters back to the next step never does), as
// PyTorch tensors stay on the GPU until `.cpu()`. `fill` runs once, on the first access to the
// elements, from whichever thread gets there first; the others wait for it. If it throws, the
// error reaches that reader and the next access tries again. Writes through the array's
// mutable accessors mark it changed, so the device copy is not used again.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>

namespace hedra {

class DeferredContents {
public:
    explicit DeferredContents(std::function<void()> fill) : fill_(std::move(fill)) {}
    DeferredContents(const DeferredContents&) = delete;
    DeferredContents& operator=(const DeferredContents&) = delete;

    // A mutex rather than std::call_once: call_once whose function throws deadlocks the next
    // caller under ThreadSanitizer (libstdc++'s pthread_once), and a failed copy must be retried.
    void wait() {
        if (done_.load(std::memory_order_acquire)) return;
        std::lock_guard<std::mutex> lock(mutex_);
        if (done_.load(std::memory_order_relaxed)) return;
        fill_();
        fill_ = nullptr; // drop what the copy held (the device buffer)
        done_.store(true, std::memory_order_release);
    }
    bool done() const { return done_.load(std::memory_order_acquire); }

    // Elements were written on the host after the copy (HostArray's mutable accessors): the
    // device copy is stale, and the backend must upload the array again.
    void mark_changed() { changed_.store(true, std::memory_order_release); }
    bool changed() const { return changed_.load(std::memory_order_acquire); }

private:
    std::mutex mutex_;
    std::function<void()> fill_;
    std::atomic<bool> done_{false}, changed_{false};
};

} // namespace hedra
